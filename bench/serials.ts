/**
 * Serials and licensing at volume: one workspace with BENCH_SERIALS (default
 * 1,000,000) serials; the list (first and deep page), search by code substring
 * and by customer e-mail, the licensing runtime's validate and activate under
 * load (activation races checked against the seat limit in the database), and
 * the generation of 10,000 serials in one request. Each next to two baselines
 * measured in the same run with the same load: a hello-world Fastify server
 * and the app's own GET /readyz (SELECT 1 through the pool).
 */
import { sql } from 'kysely';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
import { MAX_GENERATE_QUANTITY } from '../src/modules/serials/serials.schemas.js';
import {
  analyze,
  type BenchDatabase,
  BENCH_JWT,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  intEnv,
  load,
  type LoadResult,
  type LoadSettings,
  loadSettings,
  log,
  openSeeding,
  percentile,
  printReport,
  type Report,
  type RequestPlan,
  type RssGrowth,
  seedInBatches,
  type ServerProcess,
  startAppServer,
  measureHello,
  timed,
  writeReport,
  listFigures,
  measureReadyz,
  readyzGoal,
  throughputFigure,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

const PAGE_SIZE = 50;
const SEED_BATCH = 50_000;
const MB = 1024 * 1024;
/** Seats per seeded serial (the product default). */
const MAX_ACTIVATIONS = 3;
/** Machines sent to each serial of the activation pool: one more than it has seats, so the last seat is raced for. */
const MACHINES_PER_SERIAL = MAX_ACTIVATIONS + 1;
/** Every n-th ordinary serial belongs to a customer (40,000 of a million, four per customer). */
const CUSTOMER_EVERY = 25;
const SERIALS_PER_CUSTOMER = 4;
const GENERATE_QUANTITY = MAX_GENERATE_QUANTITY;
const VALIDATE_TAG = 'bench-validate';
const ACTIVATE_TAG = 'bench-activate';

/*
 * Codes shaped like the service's own (five groups of five symbols from the
 * 32-symbol alphabet, 125 bits): 25 symbols of a SHA-256 in base64, each of the
 * 64 base64 symbols mapped to one of the 32 (two to one, so still uniform).
 */
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const ALPHABET_TWICE = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ'.repeat(2);

const intArray = (values: number[]) => sql`${values}::int[]`;

interface SeedPlan {
  workspaceId: number;
  productIds: number[];
  /** The product of the validate and activate serials, and its productAppId. */
  licensedProductId: number;
  customerAccountIds: number[];
  total: number;
  validateSerials: number;
  activateSerials: number;
}

/**
 * Serials n = from..to in one statement. n ≤ validateSerials: redeemed, one
 * seat in use (its activation row is inserted after the batches); then the
 * activation pool, available and unused; both on the licensed product. The
 * rest spread over the three products, every CUSTOMER_EVERY-th assigned to a
 * customer (redeemed). The statement trigger keeps workspace_stats.serials.
 */
async function seedSerials(database: Database, plan: SeedPlan, from: number, to: number) {
  const licensing = plan.validateSerials + plan.activateSerials;
  const customers = plan.customerAccountIds.length;
  await sql`
    insert into serials (workspace_id, product_id, code, status, customer_id, origin, max_activations, active_activation_count,
                         batch_tag, redeemed_at, created_at, updated_at)
    select ${plan.workspaceId}, src.product_id,
      substr(src.b, 1, 5) || '-' || substr(src.b, 6, 5) || '-' || substr(src.b, 11, 5) || '-' || substr(src.b, 16, 5) || '-' || substr(src.b, 21, 5),
      case when src.customer_id is not null or src.tag = ${VALIDATE_TAG} then 'redeemed' else 'available' end,
      src.customer_id,
      case when src.n % 10 = 0 then 'imported' else 'generated' end,
      ${MAX_ACTIVATIONS},
      case when src.tag = ${VALIDATE_TAG} then 1 else 0 end,
      src.tag,
      case when src.customer_id is not null or src.tag = ${VALIDATE_TAG} then src.created_at end,
      src.created_at, src.created_at
    from (
      select n,
        case when n <= ${licensing} then ${plan.licensedProductId}::int else (${intArray(plan.productIds)})[1 + n % ${plan.productIds.length}] end as product_id,
        case when n <= ${plan.validateSerials} then ${VALIDATE_TAG} when n <= ${licensing} then ${ACTIVATE_TAG} end as tag,
        case when n > ${licensing} and n % ${CUSTOMER_EVERY} = 0
          then (${intArray(plan.customerAccountIds)})[1 + (n / ${CUSTOMER_EVERY}) % ${customers}] end as customer_id,
        now() - (${plan.total}::int - n) * interval '1 minute' as created_at,
        translate(encode(sha256(convert_to('patchbay-bench-' || n, 'UTF8')), 'base64'), ${BASE64}, ${ALPHABET_TWICE}) as b
      from generate_series(${from}::int, ${to}::int) as n
    ) src`.execute(database.db);
}

export interface Seeded {
  token: string;
  workspaceId: number;
  licensedProductId: number;
  appId: string;
  validate: Array<{ serial: string; machineId: string }>;
  /** The activation pool (newest last); the first one is kept for the correctness check. */
  activate: string[];
  codeSearch: { term: string; code: string; matches: number };
  /** customerId: the workspace's id of the holder (developer_customers.id), as list answers show it. */
  emailSearch: { email: string; customerId: number; matches: number };
  customers: number;
  databaseVersion: string;
}

export async function seed(database: Database, total: number, validateSerials: number, activateSerials: number): Promise<Seeded> {
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: [
      { key: 'synth', workspace: 'ws', name: 'Nebula Synth', priceCents: 14900, maxActivations: MAX_ACTIVATIONS },
      { key: 'reverb', workspace: 'ws', name: 'Cathedral Reverb', priceCents: 7900, maxActivations: MAX_ACTIVATIONS },
      { key: 'drums', workspace: 'ws', name: 'Tape Drums', priceCents: 4900, maxActivations: MAX_ACTIVATIONS },
    ],
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  const workspaceId = fixtures.ids.workspaces.ws!;
  const licensedProductId = fixtures.ids.products.synth!;
  const appId = fixtures.appIds.synth!;
  const productIds = [fixtures.ids.products.synth!, fixtures.ids.products.reverb!, fixtures.ids.products.drums!];

  // Customers: a global account and the workspace relationship each.
  const customers = Math.max(1, Math.floor(total / CUSTOMER_EVERY / SERIALS_PER_CUSTOMER));
  await timed(`${customers.toLocaleString('en-US')} customers`, () =>
    sql`
      with acc as (
        insert into accounts (email, email_normalized, email_verified)
        select 'customer.' || k || '@bench.test', 'customer.' || k || '@bench.test', true from generate_series(1, ${customers}::int) as k
        returning id, email_normalized
      )
      insert into developer_customers (workspace_id, account_id, email, first_name, last_name, source)
      select ${workspaceId}, acc.id, acc.email_normalized, 'Bench', 'Customer', 'import' from acc`.execute(database.db),
  );
  const { rows: accountRows } = await sql<{ k: number; id: number }>`
    select substring(email_normalized from 'customer\\.(\\d+)@')::int as k, id from accounts
    where email_normalized like 'customer.%@bench.test' order by 1`.execute(database.db);
  const customerAccountIds = accountRows.map((r) => r.id);

  const plan: SeedPlan = { workspaceId, productIds, licensedProductId, customerAccountIds, total, validateSerials, activateSerials };
  await seedInBatches('serials', total, SEED_BATCH, (from, to) => seedSerials(database, plan, from, to));
  // One active seat per validate serial, validated "now": validation within the hour writes nothing (the service's TOUCH_INTERVAL).
  await sql`
    insert into serial_activations (workspace_id, serial_id, machine_id, machine_name, platform, app_version)
    select workspace_id, id, 'validate-machine-' || id, 'Bench Mac', 'macos', '1.0.0'
    from serials where workspace_id = ${workspaceId} and batch_tag = ${VALIDATE_TAG}`.execute(database.db);
  await timed(database.kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE', () => analyze(database));

  const { rows: validate } = await sql<{ serial: string; machineId: string }>`
    select s.code as serial, a.machine_id as "machineId" from serials s
    join serial_activations a on a.workspace_id = s.workspace_id and a.serial_id = s.id and a.status = 'active'
    where s.workspace_id = ${workspaceId} and s.batch_tag = ${VALIDATE_TAG} order by s.id`.execute(database.db);
  const { rows: activate } = await sql<{ code: string }>`
    select code from serials where workspace_id = ${workspaceId} and batch_tag = ${ACTIVATE_TAG} order by id`.execute(database.db);

  // Code search: six symbols from the middle of an ordinary serial's code, as a support person would type them.
  const { rows: sample } = await sql<{ code: string; code_key: string }>`
    select code, code_key from serials where workspace_id = ${workspaceId} and batch_tag is null
    order by id offset ${Math.floor((total - validateSerials - activateSerials) * 0.6)} limit 1`.execute(database.db);
  const term = sample[0]!.code_key.slice(8, 14);
  const { rows: codeCount } = await sql<{ n: number }>`
    select count(*)::int as n from serials where workspace_id = ${workspaceId} and code_key like ${`%${term}%`}`.execute(database.db);
  // E-mail search: a customer from the middle of the range.
  const email = `customer.${Math.ceil(customers / 2)}@bench.test`;
  // Answers name the holder by the workspace's customer id (developer_customers.id), not the global account.
  const { rows: emailCount } = await sql<{ id: number; n: number }>`
    select dc.id, (select count(*)::int from serials s where s.workspace_id = ${workspaceId} and s.customer_id = a.id) as n
    from accounts a join developer_customers dc on dc.account_id = a.id and dc.workspace_id = ${workspaceId}
    where a.email_normalized = ${email}`.execute(database.db);

  return {
    token: fixtures.tokens.owner!,
    workspaceId,
    licensedProductId,
    appId,
    validate,
    activate: activate.map((r) => r.code),
    codeSearch: { term, code: sample[0]!.code, matches: codeCount[0]!.n },
    emailSearch: { email, customerId: emailCount[0]!.id, matches: emailCount[0]!.n },
    customers,
    databaseVersion: await databaseVersion(database.db),
  };
}

// ---------------------------------------------------------------- HTTP helpers

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

interface ListBody {
  rows: Array<{ id: number; serial: string; customer_id: number | null }>;
  total: number;
}

async function getJson(url: string, token: string): Promise<ListBody> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as ListBody;
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function timedGet(url: string, token: string) {
  const started = performance.now();
  const body = await getJson(url, token);
  return { body, ms: performance.now() - started };
}

// ---------------------------------------------------------------- measurement

interface Generation {
  /** Wall time of each measured request, from sending to the last byte of the 201 answer parsed. */
  ms: number[];
  medianMs: number;
  answerBytes: number;
  rss: RssGrowth;
}

interface Activation {
  load: LoadResult;
  activationsPerSec: number;
  /** Every answer the client saw, warm-up included, by status. */
  answered: Record<string, number>;
  /** Requests sent (machine ids used). */
  sent: number;
  /** What the database holds afterwards. */
  db: {
    poolActiveRows: number;
    poolFullSerials: number;
    overLimit: number;
    countDrift: number;
    activationEvents: number;
  };
}

interface Measured {
  hello: LoadResult;
  readyz: LoadResult;
  page1: LoadResult;
  deepFirstMs: number;
  deep: LoadResult;
  codeSearch: LoadResult;
  emailSearch: LoadResult;
  validate: LoadResult;
  activation: Activation;
  generation: Generation;
}

interface Plan {
  total: number;
  deepPage: number;
  poolSize: number;
  generateRequests: number;
  settings: LoadSettings;
  bench: BenchDatabase;
  seeded: Seeded;
}

async function checkActivationRace(server: ServerProcess, seeded: Seeded): Promise<void> {
  // The first pool serial, outside the measured pool: seats fill, the next machine is refused, a known machine is idempotent.
  const url = `${server.origin}/api/licensing/v1/activate`;
  const serial = seeded.activate[0]!;
  const statuses: number[] = [];
  for (let m = 1; m <= MACHINES_PER_SERIAL; m++) {
    statuses.push((await postJson(url, { productAppId: seeded.appId, serial, machineId: `check-${m}` })).status);
  }
  const again = await postJson(url, { productAppId: seeded.appId, serial: serial.toLowerCase().replaceAll('-', ' '), machineId: 'check-1' });
  const expected = [...Array<number>(MAX_ACTIVATIONS).fill(201), 422];
  check(JSON.stringify(statuses) === JSON.stringify(expected), `activation check answered ${statuses.join(', ')}, expected ${expected.join(', ')}`);
  check(again.status === 200, `re-activation of the same machine answered ${again.status}`);
}

async function measureGeneration(server: ServerProcess, seeded: Seeded, requests: number): Promise<Generation> {
  const url = `${server.origin}/api/developer/serials/generate`;
  const auth = { authorization: `Bearer ${seeded.token}` };
  const generate = async (quantity: number, tag: string) => {
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ productId: seeded.licensedProductId, quantity, batchTag: tag }),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    check(response.status === 201, `generate answered ${response.status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { count: number; serials: unknown[] };
    check(body.count === quantity && body.serials.length === quantity, `generate made ${body.count} serials, answered ${body.serials.length}`);
    return { ms, bytes: Buffer.byteLength(text) };
  };
  // Unrecorded warm-up of the code path, as for the load scenarios.
  await generate(100, 'bench-generate-warmup');
  await server.waitIdle();
  const ms: number[] = [];
  let answerBytes = 0;
  const { rss } = await server.measureRss(async () => {
    for (let i = 1; i <= requests; i++) {
      const one = await generate(GENERATE_QUANTITY, `bench-generate-${i}`);
      ms.push(one.ms);
      answerBytes = one.bytes;
      log(`  request ${i}: ${one.ms.toFixed(0)} ms (${(one.bytes / MB).toFixed(1)} MB answer)`);
      await server.waitIdle();
    }
  });
  return { ms, medianMs: percentile(Float64Array.from(ms).sort(), 50), answerBytes, rss };
}

async function verifyActivations(bench: BenchDatabase, seeded: Seeded): Promise<Activation['db']> {
  const database = await bench.open();
  try {
    // Every serial of the workspace: none holds more active seats than it may, and the counter equals the rows.
    const { rows: limits } = await sql<{ over: number; drift: number }>`
      select count(*) filter (where x.active > x.max_activations)::int as over,
             count(*) filter (where x.active <> x.active_activation_count)::int as drift
      from (
        select s.id, s.max_activations, s.active_activation_count, coalesce(a.n, 0) as active
        from serials s
        left join (select serial_id, count(*)::int as n from serial_activations
                   where workspace_id = ${seeded.workspaceId} and status = 'active' group by serial_id) a on a.serial_id = s.id
        where s.workspace_id = ${seeded.workspaceId}
      ) x`.execute(database.db);
    const { rows: pool } = await sql<{ rows: number; full: number; events: number }>`
      select
        (select count(*)::int from serial_activations a join serials s on s.id = a.serial_id
          where s.workspace_id = ${seeded.workspaceId} and s.batch_tag = ${ACTIVATE_TAG} and a.status = 'active' and a.machine_id like 'race-%') as rows,
        (select count(*)::int from serials where workspace_id = ${seeded.workspaceId} and batch_tag = ${ACTIVATE_TAG}
          and active_activation_count = max_activations) as full,
        (select count(*)::int from serial_events e join serials s on s.id = e.serial_id
          where s.workspace_id = ${seeded.workspaceId} and s.batch_tag = ${ACTIVATE_TAG} and e.action = 'runtime.activated'
          and e.data->>'machineId' like 'race-%') as events`.execute(database.db);
    return {
      poolActiveRows: pool[0]!.rows,
      poolFullSerials: pool[0]!.full,
      overLimit: limits[0]!.over,
      countDrift: limits[0]!.drift,
      activationEvents: pool[0]!.events,
    };
  } finally {
    await database.close();
  }
}

async function measure({ total, deepPage, poolSize, generateRequests, settings, bench, seeded }: Plan): Promise<Measured> {
  const hello = await measureHello(settings);
  const server = await startAppServer(bench, poolSize);
  const settle = () => server.waitIdle();
  const auth = { authorization: `Bearer ${seeded.token}` };
  const list = (query: string) => `${server.origin}/api/developer/serials?${query}`;
  const urls = {
    page1: list(`page=1&limit=${PAGE_SIZE}`),
    deep: list(`page=${deepPage}&limit=${PAGE_SIZE}`),
    code: list(`search=${encodeURIComponent(seeded.codeSearch.term)}&limit=${PAGE_SIZE}`),
    email: list(`search=${encodeURIComponent(seeded.emailSearch.email)}&limit=${PAGE_SIZE}`),
    validate: `${server.origin}/api/licensing/v1/validate`,
    activate: `${server.origin}/api/licensing/v1/activate`,
  };

  // The figures mean nothing if the answers are wrong.
  const first = await getJson(urls.page1, seeded.token);
  check(first.total === total && first.rows.length === Math.min(PAGE_SIZE, total), `page 1 has total ${first.total} and ${first.rows.length} rows`);
  const deepFirst = await timedGet(urls.deep, seeded.token);
  const deepRows = Math.min(PAGE_SIZE, total - (deepPage - 1) * PAGE_SIZE);
  check(deepFirst.body.rows.length === deepRows, `page ${deepPage} has ${deepFirst.body.rows.length} rows`);
  // Serials were inserted in id order, so the page must start exactly (page - 1) × 50 ids below the newest.
  const newest = first.rows[0]!.id;
  check(deepFirst.body.rows[0]!.id === newest - (deepPage - 1) * PAGE_SIZE, `page ${deepPage} starts at id ${deepFirst.body.rows[0]!.id}`);
  log(`first request for page ${deepPage}: ${deepFirst.ms.toFixed(0)} ms`);
  const byCode = await getJson(urls.code, seeded.token);
  check(byCode.total === seeded.codeSearch.matches && byCode.rows.some((r) => r.serial === seeded.codeSearch.code), `code search total ${byCode.total}`);
  const byEmail = await getJson(urls.email, seeded.token);
  check(
    byEmail.total === seeded.emailSearch.matches && byEmail.total > 0 && byEmail.rows.every((r) => r.customer_id === seeded.emailSearch.customerId),
    `e-mail search total ${byEmail.total}, expected ${seeded.emailSearch.matches}`,
  );
  for (const v of seeded.validate) {
    const answer = await postJson(urls.validate, { productAppId: seeded.appId, serial: v.serial, machineId: v.machineId, nonce: 'check' });
    check(answer.status === 200 && answer.body.valid === true && typeof answer.body.token === 'string', `validate ${v.serial}: ${JSON.stringify(answer.body)}`);
  }
  const stranger = await postJson(urls.validate, { productAppId: seeded.appId, serial: seeded.validate[0]!.serial, machineId: 'not-activated' });
  check(stranger.body.code === 'MACHINE_NOT_ACTIVATED', `validate from another machine answered ${JSON.stringify(stranger.body)}`);
  await checkActivationRace(server, seeded);
  await settle();

  const scenario = async (label: string, url: string, plan?: RequestPlan) => {
    log(label);
    const result = await load(url, settings, plan ? {} : auth, settle, plan);
    log(`  ${Math.round(result.requestsPerSec)} req/s, p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
    return result;
  };
  const readyz = await measureReadyz(server, settings);
  const page1 = await scenario('list, page 1', urls.page1);
  const deep = await scenario(`list, page ${deepPage} (offset ${((deepPage - 1) * PAGE_SIZE).toLocaleString('en-US')})`, urls.deep);
  const codeSearch = await scenario(`search code "${seeded.codeSearch.term}" (${seeded.codeSearch.matches} matches)`, urls.code);
  const emailSearch = await scenario(`search e-mail "${seeded.emailSearch.email}" (${seeded.emailSearch.matches} matches)`, urls.email);

  // Validate: rotating over the activated serials, each from its own machine; every answer must say valid.
  let v = 0;
  const validate = await scenario(`validate (${seeded.validate.length} serials, rotating)`, urls.validate, {
    method: 'POST',
    body: () => {
      const one = seeded.validate[v % seeded.validate.length]!;
      v += 1;
      return JSON.stringify({ productAppId: seeded.appId, serial: one.serial, machineId: one.machineId, nonce: `n${v}` });
    },
    verify: (status, body) => status === 200 && body.includes('"valid":true'),
  });

  // Activate: MACHINES_PER_SERIAL consecutive requests (in flight together on different connections) per pool serial,
  // each from a new machine: three take the seats, one is refused (422 MACHINE_LIMIT_EXCEEDED).
  const pool = seeded.activate.slice(1);
  let sent = 0;
  let exhausted = false;
  const answered: Record<string, number> = {};
  const activationLoad = await scenario(`activate (${MACHINES_PER_SERIAL} machines racing per serial, ${MAX_ACTIVATIONS} seats)`, urls.activate, {
    method: 'POST',
    body: () => {
      // (A throw here would end autocannon mid-run: past the end, wrap and fail after the run instead.)
      const at = Math.floor(sent / MACHINES_PER_SERIAL);
      if (at >= pool.length) exhausted = true;
      const serial = pool[at % pool.length]!;
      sent += 1;
      return JSON.stringify({ productAppId: seeded.appId, serial, machineId: `race-${sent}`, platform: 'macos', appVersion: '1.0.0' });
    },
    expected: [422],
    verify: (status, body) => status === 201 || (status === 422 && body.includes('MACHINE_LIMIT_EXCEEDED')),
    onAnswer: (status) => {
      answered[status] = (answered[status] ?? 0) + 1;
    },
  });
  check(!exhausted, `the activation pool of ${pool.length} serials was used up: raise BENCH_ACTIVATE_SERIALS`);
  const created = activationLoad.statuses?.['201'] ?? 0;
  const activationsPerSec = created * (activationLoad.requestsPerSec / activationLoad.requests);
  log(`  ${Math.round(activationsPerSec)} activations/s (${created} × 201, ${activationLoad.statuses?.['422'] ?? 0} × 422 in the measured run)`);

  log(`generate ${GENERATE_QUANTITY.toLocaleString('en-US')} serials, ${generateRequests} requests one after the other`);
  const generation = await measureGeneration(server, seeded, generateRequests);
  const after = await getJson(urls.page1, seeded.token);
  const generated = 100 + generateRequests * GENERATE_QUANTITY;
  check(after.total === total + generated, `total after generation is ${after.total}, expected ${total + generated}`);
  await settle();
  await server.stop();

  const db = await verifyActivations(bench, seeded);
  log(
    `  database: ${db.poolActiveRows} race activations (client saw ${answered['201'] ?? 0} × 201 of ${sent} sent), ` +
      `${db.overLimit} serials over the limit, ${db.countDrift} with a counter ≠ active rows`,
  );
  // Requests abandoned by autocannon at the end of a run are finished by the server unseen: at most one per connection and run.
  const unseen = db.poolActiveRows - (answered['201'] ?? 0);
  check(unseen >= 0 && unseen <= 3 * settings.connections, `${db.poolActiveRows} activation rows for ${answered['201'] ?? 0} answers 201`);
  check(db.activationEvents === db.poolActiveRows, `${db.activationEvents} activation events for ${db.poolActiveRows} activations`);

  return {
    hello,
    readyz,
    page1,
    deepFirstMs: deepFirst.ms,
    deep,
    codeSearch,
    emailSearch,
    validate,
    activation: { load: activationLoad, activationsPerSec, answered, sent, db },
    generation,
  };
}

function figuresOf(m: Measured, deepPage: number): Figure[] {
  const a = m.activation;
  return [
    ...listFigures(m, deepPage),
    throughputFigure(m, 'search code', m.codeSearch.requestsPerSec, 'req/s'),
    { name: 'search code p95', value: m.codeSearch.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.codeSearch.p95 <= 50 } },
    throughputFigure(m, 'search e-mail', m.emailSearch.requestsPerSec, 'req/s'),
    { name: 'search e-mail p95', value: m.emailSearch.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.emailSearch.p95 <= 50 } },
    throughputFigure(m, 'validate', m.validate.requestsPerSec, 'req/s', readyzGoal(m, m.validate.requestsPerSec, 1)),
    { name: 'validate p50', value: m.validate.p50, unit: 'ms' },
    { name: 'validate p99', value: m.validate.p99, unit: 'ms' },
    throughputFigure(m, 'activate', a.activationsPerSec, 'activations/s', { text: '≥ 1,000 activations/s', pass: a.activationsPerSec >= 1000 }),
    throughputFigure(m, 'activate, all answers (201 + 422)', a.load.requestsPerSec, 'req/s'),
    { name: 'activate p50', value: a.load.p50, unit: 'ms' },
    { name: 'activate p99', value: a.load.p99, unit: 'ms' },
    { name: 'serials over max_activations', value: a.db.overLimit, unit: 'serials', goal: { text: '0', pass: a.db.overLimit === 0 } },
    { name: 'active_activation_count ≠ active rows', value: a.db.countDrift, unit: 'serials', goal: { text: '0', pass: a.db.countDrift === 0 } },
    ...m.generation.ms.map((ms, i) => ({ name: `generate 10,000, request ${i + 1}`, value: ms, unit: 'ms' })),
    {
      name: 'generate 10,000, median',
      value: m.generation.medianMs,
      unit: 'ms',
      goal: { text: '≤ 1,000 ms', pass: m.generation.medianMs <= 1000 },
    },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const total = intEnv('BENCH_SERIALS', 1_000_000, 1);
  const validateSerials = intEnv('BENCH_VALIDATE_SERIALS', 300, 1);
  const activateSerials = intEnv('BENCH_ACTIVATE_SERIALS', 50_000, 2);
  const generateRequests = intEnv('BENCH_GENERATE_REQUESTS', 5, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  if (validateSerials + activateSerials >= total) throw new Error('BENCH_SERIALS must exceed BENCH_VALIDATE_SERIALS + BENCH_ACTIVATE_SERIALS');
  const settings = loadSettings();
  // The middle of the list: page 10,000 (offset 499,950) at one million serials.
  const deepPage = Math.max(1, Math.floor(total / 2 / PAGE_SIZE));

  const bench = await createBenchDatabase('serials');
  log(`database: ${bench.description}`);
  log(`seeding ${total.toLocaleString('en-US')} serials`);
  const seedStarted = performance.now();
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding, total, validateSerials, activateSerials);
  } finally {
    await seeding.close();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(
    `  seeded in ${seedSeconds.toFixed(1)} s; code "${seeded.codeSearch.term}" matches ${seeded.codeSearch.matches}, ` +
      `${seeded.emailSearch.email} owns ${seeded.emailSearch.matches}`,
  );
  log(`load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure({ total, deepPage, poolSize, generateRequests, settings, bench, seeded }));

  const report: Report = {
    target: 'serials',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: {
      serials: total,
      customers: seeded.customers,
      validateSerials,
      activateSerials,
      machinesPerSerial: MACHINES_PER_SERIAL,
      maxActivations: MAX_ACTIVATIONS,
      generateRequests,
      generateQuantity: GENERATE_QUANTITY,
      deepPage,
      pageSize: PAGE_SIZE,
      poolSize,
      ...settings,
      loadGenerator: 'autocannon 9 in the parent process; each server in a child process',
    },
    figures: figuresOf(m, deepPage),
    details: {
      seedSeconds,
      search: { code: seeded.codeSearch, email: seeded.emailSearch },
      load: { hello: m.hello, readyz: m.readyz, page1: m.page1, deep: m.deep, codeSearch: m.codeSearch, emailSearch: m.emailSearch, validate: m.validate, activate: m.activation.load },
      deepPageFirstRequestMs: m.deepFirstMs,
      activation: { activationsPerSec: m.activation.activationsPerSec, sent: m.activation.sent, answered: m.activation.answered, database: m.activation.db },
      generation: m.generation,
    },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
