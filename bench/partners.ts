/**
 * Partner money (PostgreSQL):
 * 1. BENCH_PARTNER_SALES (default 10,000) signed `sale.captured` events and a tenth as many
 *    `refund.created` events posted to the checkout webhook by BENCH_WEBHOOK_CONCURRENCY (default
 *    16) concurrent senders; events per second from the first POST to the last answer, then the
 *    ledger invariants checked (every transaction sums to zero; collected = sales − refunds).
 * 2. GET /api/partner-referrals/{code} (303) under autocannon, next to hello-world and /readyz
 *    measured in the same run (goal: at least /readyz's req/s); then every non-HEAD visit must be
 *    in the database 1 s after the load stops.
 * 3. GET …/partners/programs/accounting with BENCH_LEDGER_ENTRIES (default 1,000,000) ledger
 *    entries in the workspace: 5 warm-up + 100 sequential requests, p95. The bulk entries are
 *    written balanced, with triggers off for the bulk insert only (session_replication_role);
 *    then the balance snapshots are folded up to them (what the ledger.fold-balances job does) and
 *    the fold is timed, so the reads measure snapshot + a short tail, as in steady state.
 */
import { sql } from 'kysely';
import { signCheckoutPayload } from '../src/modules/checkout/checkout.signature.js';
import { foldBalances } from '../src/modules/ledger/balances.service.js';
import { unbalancedTransactions } from '../src/modules/ledger/ledger.repo.js';
import { ReferralContextSigner } from '../src/modules/referrals/referral-context.js';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
import {
  BENCH_JWT,
  autovacuumStandIn,
  BENCH_LICENSE_KEY_HEX,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  intEnv,
  load,
  type LoadResult,
  loadSettings,
  log,
  measureHello,
  measureReadyz,
  openSeeding,
  percentile,
  printReport,
  readyzGoal,
  type Report,
  startAppServer,
  throughputFigure,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

export const SECRET = 'whsec_bench_0123456789abcdef0123456789abcdef';
const EVENTS_PER_SEC_GOAL = 500;
// The redirect answers from a per-instance cache (no database read per click): at least what SELECT 1 through the pool does.
const REFERRAL_SHARE_OF_READYZ = 1;
const ACCOUNTING_P95_MS = 50;

export interface Seeded {
  token: string;
  workspaceId: number;
  products: number[];
  affiliateId: number;
  collaboratorId: number;
  referralCode: string;
  databaseVersion: string;
}

export async function seed(database: Database): Promise<Seeded> {
  const f = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Partners', billingEligible: true, storefrontUrl: 'https://store.bench-audio.example' }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: ['a', 'b', 'c'].map((key) => ({ key, workspace: 'ws', name: `Bench ${key}`, priceCents: 4_900, status: 'active' as const })),
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    programs: [
      { key: 'aff', workspace: 'ws', kind: 'affiliate', name: 'Bench affiliate', recipientEmail: 'aff@bench.partner.test', rateBps: 2000, status: 'active', consents: ['developer', 'recipient'], owner: 'owner' },
      { key: 'co', workspace: 'ws', kind: 'collaborator', name: 'Bench collaborator', recipientEmail: 'co@bench.partner.test', rateBps: 0, productRates: [{ product: 'a', rateBps: 3000 }], status: 'active', consents: ['developer', 'recipient'], owner: 'owner' },
    ],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  const code = await sql<{ referral_code: string }>`select referral_code from partner_agreements where id = ${f.ids.programs.aff!}`.execute(database.db);
  return {
    token: f.tokens.owner!,
    workspaceId: f.ids.workspaces.ws!,
    products: ['a', 'b', 'c'].map((k) => f.ids.products[k]!),
    affiliateId: f.ids.programs.aff!,
    collaboratorId: f.ids.programs.co!,
    referralCode: code.rows[0]!.referral_code,
    databaseVersion: await databaseVersion(database.db),
  };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

async function postEvent(origin: string, event: object): Promise<void> {
  const body = JSON.stringify(event);
  const response = await fetch(`${origin}/api/checkout/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(SECRET, body, Math.floor(Date.now() / 1000)) },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`checkout event: HTTP ${response.status} ${text.slice(0, 300)}`);
}

async function inParallel<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export interface Ingestion {
  sales: number;
  refunds: number;
  seconds: number;
  eventsPerSec: number;
  collectedCents: number;
}

/** Posts the events to `origin`, or round-robin to each of several origins (instances behind one balancer). */
export async function ingest(origin: string | readonly string[], seeded: Seeded, sales: number, concurrency: number): Promise<Ingestion> {
  const origins = typeof origin === 'string' ? [origin] : origin;
  let turn = 0;
  const next = () => origins[turn++ % origins.length]!;
  const referrals = new ReferralContextSigner([Buffer.from(BENCH_LICENSE_KEY_HEX, 'hex')]);
  const created = Math.floor(Date.now() / 1000) + 1;
  const saleEvents = Array.from({ length: sales }, (_, i) => ({
    id: `evt_sale_${i}`,
    type: 'sale.captured',
    created,
    data: {
      workspace_id: seeded.workspaceId,
      order_id: `ord_${i}`,
      currency: 'usd',
      customer: { email: `buyer${i % 2000}@bench.customer.test`, name: 'Bench Buyer' },
      items: [{ product_id: seeded.products[i % 3]!, subtotal_cents: 4900 + (i % 7) * 100, discount_cents: i % 5 === 0 ? 500 : 0 }],
      // Every third sale arrives through the affiliate's referral link.
      ...(i % 3 === 0 ? { referral: referrals.sign({ agreementId: seeded.affiliateId, workspaceId: seeded.workspaceId, visitedAt: new Date() }) } : {}),
    },
  }));
  const refundEvents = Array.from({ length: Math.floor(sales / 10) }, (_, j) => {
    const i = j * 10;
    const paid = 4900 + (i % 7) * 100 - (i % 5 === 0 ? 500 : 0);
    return { id: `evt_refund_${j}`, type: 'refund.created', created, data: { workspace_id: seeded.workspaceId, order_id: `ord_${i}`, product_id: seeded.products[i % 3]!, amount_cents: j % 2 === 0 ? paid : Math.floor(paid / 3) } };
  });
  const collected = saleEvents.reduce((s, e) => s + e.data.items[0]!.subtotal_cents - e.data.items[0]!.discount_cents, 0) - refundEvents.reduce((s, e) => s + e.data.amount_cents, 0);
  log(`POST /api/checkout/events: ${saleEvents.length} sales, then ${refundEvents.length} refunds, ${concurrency} concurrent senders`);
  const started = performance.now();
  await inParallel(saleEvents, concurrency, (e) => postEvent(next(), e));
  const salesSeconds = (performance.now() - started) / 1000;
  log(`  ${saleEvents.length.toLocaleString('en')} sales in ${salesSeconds.toFixed(1)} s: ${Math.round(saleEvents.length / salesSeconds)} sales/s`);
  await inParallel(refundEvents, concurrency, (e) => postEvent(next(), e));
  const seconds = (performance.now() - started) / 1000;
  log(`  ${refundEvents.length.toLocaleString('en')} refunds in ${(seconds - salesSeconds).toFixed(1)} s: ${Math.round(refundEvents.length / (seconds - salesSeconds))} refunds/s`);
  const eventsPerSec = (saleEvents.length + refundEvents.length) / seconds;
  log(`  ${(saleEvents.length + refundEvents.length).toLocaleString('en')} events in ${seconds.toFixed(1)} s: ${Math.round(eventsPerSec)} events/s`);
  return { sales: saleEvents.length, refunds: refundEvents.length, seconds, eventsPerSec, collectedCents: collected };
}

async function bulkEntries(database: Database, seeded: Seeded, entries: number): Promise<number> {
  const existing = await sql<{ n: number }>`select count(*)::int as n from ledger_entries where workspace_id = ${seeded.workspaceId}`.execute(database.db);
  const transactions = Math.max(0, Math.ceil((entries - existing.rows[0]!.n) / 5));
  log(`bulk ledger: ${transactions.toLocaleString('en')} balanced transactions of 5 entries (triggers off for this insert only)`);
  const recipients = await sql<{ id: number; recipient_id: number }>`select id, recipient_id from partner_agreements where id in (${seeded.affiliateId}, ${seeded.collaboratorId})`.execute(database.db);
  const recipientOf = new Map(recipients.rows.map((r) => [r.id, r.recipient_id]));
  await database.db.connection().execute(async (c) => {
    await sql`set session_replication_role = replica`.execute(c);
    try {
      for (let done = 0; done < transactions; done += 50_000) {
        const n = Math.min(50_000, transactions - done);
        await sql`
          with t as (insert into ledger_transactions (workspace_id, kind) select ${seeded.workspaceId}, 'sale' from generate_series(1, ${n}) returning id)
          insert into ledger_entries (transaction_id, workspace_id, account, agreement_id, recipient_id, currency, amount)
          select t.id, ${seeded.workspaceId}, x.account, x.agreement_id, x.recipient_id, 'usd', x.amount
          from t cross join (values ('checkout_clearing', null::int, null::int, -1000::bigint), ('platform_share', null, null, 100),
                                    ('developer_earnings', null, null, 450), ('partner_payable', ${seeded.collaboratorId}::int, ${recipientOf.get(seeded.collaboratorId)!}::int, 270),
                                    ('partner_payable', ${seeded.affiliateId}::int, ${recipientOf.get(seeded.affiliateId)!}::int, 180))
            as x(account, agreement_id, recipient_id, amount)`.execute(c);
      }
    } finally {
      await sql`set session_replication_role = origin`.execute(c);
    }
  });
  await sql`analyze ledger_entries`.execute(database.db);
  const total = await sql<{ n: number }>`select count(*)::int as n from ledger_entries where workspace_id = ${seeded.workspaceId}`.execute(database.db);
  return total.rows[0]!.n;
}

async function timeAccounting(origin: string, token: string): Promise<{ p50: number; p95: number; max: number }> {
  const get = async () => {
    const started = performance.now();
    const response = await fetch(`${origin}/api/developer/partners/programs/accounting`, { headers: { authorization: `Bearer ${token}` } });
    await response.text();
    if (response.status !== 200) throw new Error(`accounting: HTTP ${response.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) await get();
  const ms: number[] = [];
  for (let i = 0; i < 100; i++) ms.push(await get());
  const sorted = Float64Array.from(ms).sort();
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1]! };
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const sales = intEnv('BENCH_PARTNER_SALES', 10_000, 10);
  const concurrency = intEnv('BENCH_WEBHOOK_CONCURRENCY', 16, 1);
  const entries = intEnv('BENCH_LEDGER_ENTRIES', 1_000_000, 0);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();
  const bench = await createBenchDatabase('partners');
  if (bench.kind !== 'postgres') log('warning: DATABASE_URL is not set; the partners target is meant for PostgreSQL');
  log(`database: ${bench.description}`);
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding);
  } finally {
    await seeding.close();
  }
  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(async () => {
    const hello = await measureHello(settings);
    const server = await startAppServer(bench, poolSize, { checkoutWebhookSecrets: [SECRET], referralsPerMinute: 1_000_000_000 });
    const database = await bench.open();
    try {
      const stopAnalyze = await autovacuumStandIn(database);
      const ingestion = await ingest(server.origin, seeded, sales, concurrency).finally(stopAnalyze);
      await server.waitIdle();
      const unbalanced = await unbalancedTransactions(database.db);
      check(unbalanced.length === 0, `${unbalanced.length} unbalanced ledger transactions`);
      const clearing = await sql<{ total: string }>`select coalesce(sum(amount), 0)::text as total from ledger_entries where workspace_id = ${seeded.workspaceId} and account = 'checkout_clearing'`.execute(database.db);
      check(BigInt(clearing.rows[0]!.total) === -BigInt(ingestion.collectedCents), `collected ${clearing.rows[0]!.total}, expected ${-ingestion.collectedCents}`);
      const events = await sql<{ n: number }>`select count(*)::int as n from checkout_events where outcome = 'recorded'`.execute(database.db);
      check(events.rows[0]!.n === ingestion.sales + ingestion.refunds, `${events.rows[0]!.n} recorded events`);

      const readyz = await measureReadyz(server, settings);
      const url = `${server.origin}/api/partner-referrals/${seeded.referralCode}?product=${seeded.products[0]}`;
      let redirects = 0;
      log(`GET /api/partner-referrals/{code} (303), ${settings.connections} connections`);
      const referral: LoadResult = await load(url, settings, {}, () => server.waitIdle(), {
        method: 'GET',
        expected: [303],
        onAnswer: (status) => {
          if (status === 303) redirects++;
        },
      });
      log(`  ${Math.round(referral.requestsPerSec)} req/s, p50 ${referral.p50.toFixed(2)} ms, p99 ${referral.p99.toFixed(2)} ms`);
      const stoppedAt = performance.now();
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - stoppedAt))));
      const visits = await sql<{ n: number }>`select count(*)::int as n from partner_referral_visits where agreement_id = ${seeded.affiliateId}`.execute(database.db);
      log(`  ${redirects} redirects answered; ${visits.rows[0]!.n} visits in the database 1 s after the load stopped`);

      const total = await bulkEntries(database, seeded, entries);
      const foldStarted = performance.now();
      const fold = await foldBalances(database.db, { waitMs: 60_000 });
      const foldMs = performance.now() - foldStarted;
      check(fold.reason === undefined || fold.reason === 'up to date', `balance snapshots not folded: ${fold.reason}`);
      log(`balance snapshots folded up to entry ${fold.horizon} (${fold.folded} ids) in ${foldMs.toFixed(0)} ms`);
      log(`GET /api/developer/partners/programs/accounting with ${total.toLocaleString('en')} ledger entries: 5 warm-up + 100 sequential`);
      const accounting = await timeAccounting(server.origin, seeded.token);
      log(`  p50 ${accounting.p50.toFixed(1)} ms, p95 ${accounting.p95.toFixed(1)} ms`);
      await server.stop();
      return { hello, readyz, ingestion, referral, redirects, visits: visits.rows[0]!.n, entries: total, accounting, foldMs };
    } finally {
      await database.close();
    }
  });
  const figures: Figure[] = [
    throughputFigure(m, 'hello-world', m.hello.requestsPerSec, 'req/s'),
    throughputFigure(m, 'GET /readyz (SELECT 1)', m.readyz.requestsPerSec, 'req/s'),
    {
      name: `webhook: ${m.ingestion.sales} sales + ${m.ingestion.refunds} refunds`,
      value: m.ingestion.eventsPerSec,
      unit: 'events/s',
      goal: { text: `≥ ${EVENTS_PER_SEC_GOAL} events/s, invariants holding`, pass: m.ingestion.eventsPerSec >= EVENTS_PER_SEC_GOAL },
    },
    throughputFigure(m, 'GET partner-referrals (303)', m.referral.requestsPerSec, 'req/s', readyzGoal(m, m.referral.requestsPerSec, REFERRAL_SHARE_OF_READYZ)),
    { name: 'GET partner-referrals p99', value: m.referral.p99, unit: 'ms' },
    { name: 'referral visits durable 1 s after the load', value: m.visits, unit: 'rows', goal: { text: `≥ ${m.redirects} redirects answered (requests the generator dropped mid-flight may add more)`, pass: m.visits >= m.redirects } },
    { name: `GET accounting p95 (${m.entries.toLocaleString('en')} entries)`, value: m.accounting.p95, unit: 'ms', goal: { text: `≤ ${ACCOUNTING_P95_MS} ms`, pass: m.accounting.p95 <= ACCOUNTING_P95_MS } },
    { name: 'GET accounting p50', value: m.accounting.p50, unit: 'ms' },
    { name: 'fold of the bulk entries into the balance snapshots (once)', value: m.foldMs, unit: 'ms' },
  ];
  const report: Report = {
    target: 'partners',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { sales, concurrency, entries, poolSize, ...settings },
    figures,
    details: { ingestion: m.ingestion, load: { hello: m.hello, readyz: m.readyz, referral: m.referral }, accounting: m.accounting },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
