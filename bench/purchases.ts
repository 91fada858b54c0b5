/**
 * Purchases at volume: one workspace with BENCH_PURCHASE_ITEMS (default
 * 1,000,000) order items bought by a fifth as many customers; the list (first
 * and deep page, unfiltered and with several filters combined), search by a
 * rare and a common customer name, and a timed 100,000-row purchase import and
 * its re-import (202 jobs, polled until finished, as a user runs them), each
 * next to two baselines measured in the same run with the same load: a
 * hello-world Fastify server and the app's own GET /readyz (SELECT 1).
 */
import { type RawBuilder, sql } from 'kysely';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
import { IMPORT_MAX_ROWS } from '../src/platform/import/errors.js';
import {
  analyze,
  type BenchDatabase,
  BENCH_JWT,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  intEnv,
  listFigures,
  load,
  type LoadResult,
  type LoadSettings,
  loadSettings,
  log,
  openSeeding,
  printReport,
  type Report,
  type RssGrowth,
  seedInBatches,
  type ServerProcess,
  startAppServer,
  measureHello,
  timed,
  writeReport,
  LIST_PAGE1_SHARE_OF_READYZ,
  measureReadyz,
  readyzGoal,
  runImport,
  throughputFigure,
  type ImportRun,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';
import { COMMON_TERM, DOMAINS, FIRST, LAST, RARE_AT, RARE_EVERY, RARE_NAME } from './names.js';

const PAGE_SIZE = 50;
/** Orders per seeding statement (about 62,500 items). */
const SEED_BATCH = 50_000;
const CUSTOMER_BATCH = 50_000;
/** Items per customer on average. */
const ITEMS_PER_CUSTOMER = 5;
/** The filtered deep page is the middle of its matches, and at most as deep as the unfiltered one at a million items. */
const MAX_DEEP_PAGE = 10_000;
const MB = 1024 * 1024;
const SPAN_SECONDS = 3 * 365 * 86_400;
const offsetLabel = (page: number) => ((page - 1) * PAGE_SIZE).toLocaleString('en-US');


const PRODUCTS = [
  { key: 'synth', name: 'Nebula Synth', priceCents: 14900 },
  { key: 'reverb', name: 'Cathedral Reverb', priceCents: 7900 },
  { key: 'drums', name: 'Tape Drums', priceCents: 4900 },
  { key: 'comp', name: 'Glue Compressor', priceCents: 9900 },
  { key: 'keys', name: 'Felt Keys', priceCents: 2900 },
];
const RESELLERS = [
  { key: 'boutique', name: 'Plugin Boutique', kind: 'store' as const },
  { key: 'bundle', name: 'Producer Bundle', kind: 'bundle' as const },
  { key: 'distro', name: 'Audio Distribution GmbH', kind: 'distributor' as const },
];

/** Customer k's e-mail, the same in SQL (seed) and here (import rows of existing customers). */
function customerEmail(k: number): string {
  const last = k % RARE_EVERY === RARE_AT ? RARE_NAME : LAST[Math.floor(k / FIRST.length) % LAST.length]!;
  return `${FIRST[k % FIRST.length]!}.${last}.${k}@${DOMAINS[k % DOMAINS.length]!}`.toLowerCase();
}

/** Orders that hold `items` items: every fourth order has two (the last one may have one). */
function ordersFor(items: number): number {
  let orders = Math.floor((items * 4) / 5);
  while (orders + Math.floor(orders / 4) < items) orders += 1;
  return orders;
}

const textArray = (values: string[]) => sql`${values}::text[]`;
/** A pseudo-random bucket 0..size-1 of n, independent for each seed (so attributes do not repeat with n mod 100). */
const bucket = (n: RawBuilder<unknown>, seed: number, size: number) =>
  sql`((hashint8extended((${n})::bigint, ${sql.lit(seed)}) % ${sql.lit(size)} + ${sql.lit(size)}) % ${sql.lit(size)})`;
const intArray = (values: number[]) => sql`${values}::int[]`;

/**
 * Customers k = from..to: global accounts and workspace relationships with
 * explicit account ids (base + k), so the orders can name their customer by
 * arithmetic instead of a lookup. The statement trigger keeps workspace_stats.
 */
async function seedCustomers(database: Database, plan: SeedPlan, from: number, to: number) {
  await sql`
    with src as materialized (
      select k,
        (${textArray(FIRST)})[1 + k % ${FIRST.length}] as first_name,
        case when k % ${RARE_EVERY} = ${RARE_AT} then ${RARE_NAME}
             else (${textArray(LAST)})[1 + (k / ${FIRST.length}) % ${LAST.length}] end as last_name,
        (${textArray(DOMAINS)})[1 + k % ${DOMAINS.length}] as domain,
        now() - interval '3 years' * ((${plan.customers}::int - k)::float8 / ${plan.customers}::int) - interval '1 day' as created_at
      from generate_series(${from}::int, ${to}::int) as k
    ),
    rows as materialized (
      select src.*, lower(first_name || '.' || last_name || '.' || k || '@' || domain) as email from src
    ),
    acc as (
      insert into accounts (id, email, email_normalized, email_verified, created_at)
      select ${plan.accountBase}::int + k, email, email, k % 3 <> 0, created_at from rows
    )
    insert into developer_customers (workspace_id, account_id, email, first_name, last_name, source, created_at, updated_at)
    select ${plan.workspaceId}, ${plan.accountBase}::int + k, email, first_name, last_name, 'import', created_at, created_at from rows`.execute(database.db);
}

interface SeedPlan {
  workspaceId: number;
  productIds: number[];
  priceCents: number[];
  resellerIds: number[];
  items: number;
  orders: number;
  customers: number;
  accountBase: number;
  orderBase: number;
}

/**
 * Orders n = from..to and their items in one statement. Every attribute is a
 * deterministic function of n (and the item's position p), spread with
 * seeded hashes: channel managed_checkout 60 % / external_store 15 % /
 * import 20 % / manual_grant 5 %; seven providers; a reseller on ~10 %; record
 * type consistent with the channel; 3 % of paid items fully and 2 % partly
 * refunded; purchased_at over three years (imports at random dates, the rest
 * in order). Items copy the order's filter columns, as the service does. The
 * statement trigger keeps workspace_stats.order_items exact.
 */
async function seedOrders(database: Database, plan: SeedPlan, from: number, to: number) {
  const { items, orders } = plan;
  await sql`
    with h as materialized (
      select n,
        ${bucket(sql`n`, 1, 100)} as c,
        ${bucket(sql`n`, 2, 100)} as pv,
        ${bucket(sql`n`, 3, 100)} as r,
        least(case when n % 4 = 0 then 2 else 1 end, ${items}::int - (n - 1) - (n - 1) / 4) as n_items
      from generate_series(${from}::int, ${to}::int) as n
    ),
    ch as materialized (
      select h.*,
        case when c < 60 then 'managed_checkout' when c < 75 then 'external_store' when c < 95 then 'import' else 'manual_grant' end as channel
      from h
    ),
    o as materialized (
      select n, n_items, channel,
        ${plan.accountBase}::int + 1 + ((n::bigint * 7919) % ${plan.customers}::int)::int as customer_id,
        case channel
          when 'managed_checkout' then case when pv < 70 then 'paddle' else 'stripe' end
          when 'external_store' then case when pv < 50 then 'gumroad' when pv < 80 then 'plugin-boutique' else 'itch' end
          when 'import' then case when pv < 60 then 'external' else 'legacy-shop' end
          else 'manual' end as provider,
        case when channel in ('managed_checkout', 'external_store') and r < 13 then (${intArray(plan.resellerIds)})[1 + ${bucket(sql`n`, 4, plan.resellerIds.length)}] end as reseller_id,
        case channel
          when 'managed_checkout' then case when r = 99 then 'pending' else 'paid' end
          when 'external_store' then 'paid'
          when 'import' then 'imported'
          else 'granted' end as status,
        case when ${bucket(sql`n`, 5, 10)} = 0 and channel <> 'manual_grant' then 'eur' else 'usd' end as currency,
        case when channel = 'import'
          then now() - make_interval(secs => ${bucket(sql`n`, 6, 1_000_000)} / 1e6 * ${SPAN_SECONDS})
          else now() - make_interval(secs => (${orders}::int - n)::float8 / ${orders}::int * ${SPAN_SECONDS}) end as purchased_at,
        case channel when 'import' then 'LEGACY-' || n when 'manual_grant' then 'GRANT-' || n else 'ORD-' || lpad(n::text, 8, '0') end as reference,
        case channel when 'external_store' then 'EXT-' || (n::bigint * 7 + 100000) when 'import' then 'LEGACY-' || n end as external_reference
      from ch
    ),
    i as materialized (
      select o.*, p,
        (${intArray(plan.productIds)})[k] as product_id,
        (${intArray(plan.priceCents)})[k] as price_cents,
        rt.record_type,
        s.sale_price_cents,
        rf.refund_status,
        case rf.refund_status when 'full' then s.sale_price_cents when 'partial' then s.sale_price_cents / 2 else 0 end as refunded_cents
      from o
      cross join lateral generate_series(0, o.n_items - 1) as p
      cross join lateral (select 1 + (${bucket(sql`o.n`, 7, plan.productIds.length)} + p)::int % ${plan.productIds.length} as k,
        ${bucket(sql`o.n * 2 + p`, 8, 100)} as t, ${bucket(sql`o.n * 2 + p`, 9, 100)} as f, ${bucket(sql`o.n * 2 + p`, 10, 100)} as d) b
      cross join lateral (select case o.channel
          when 'managed_checkout' then case when b.t < 15 then 'subscription' else 'sale' end
          when 'external_store' then case when b.t < 5 then 'free' else 'sale' end
          when 'import' then case when b.t < 10 then 'free' else 'sale' end
          else 'grant' end as record_type) rt
      cross join lateral (select case when rt.record_type in ('free', 'grant') then 0
          when b.d < 20 then (${intArray(plan.priceCents)})[k] * 3 / 4 else (${intArray(plan.priceCents)})[k] end as sale_price_cents) s
      cross join lateral (select case when o.status = 'paid' and s.sale_price_cents > 0 and b.f < 3 then 'full'
          when o.status = 'paid' and s.sale_price_cents > 0 and b.f < 5 then 'partial' else 'none' end as refund_status) rf
    ),
    totals as (
      select n, sum(sale_price_cents)::int as total_cents,
        bool_and(refund_status = 'full') as all_full, bool_or(refund_status <> 'none') as any_refund
      from i group by n
    ),
    ins as (
      insert into orders (id, workspace_id, customer_id, reference, external_reference, channel, provider, status, refund_status,
                          total_cents, currency, reseller_id, purchased_at, created_at)
      select ${plan.orderBase}::int + o.n, ${plan.workspaceId}, o.customer_id, o.reference, o.external_reference, o.channel, o.provider, o.status,
        case when t.all_full then 'full' when t.any_refund then 'partial' else 'none' end,
        t.total_cents, o.currency, o.reseller_id, o.purchased_at, o.purchased_at
      from o join totals t on t.n = o.n
    )
    insert into order_items (workspace_id, order_id, product_id, customer_id, channel, provider, reseller_id, record_type, status, refund_status,
                             currency, price_cents, sale_price_cents, refunded_cents, external_reference, purchased_at, created_at)
    select ${plan.workspaceId}, ${plan.orderBase}::int + n, product_id, customer_id, channel, provider, reseller_id, record_type, status, refund_status,
      currency, price_cents, sale_price_cents, refunded_cents, external_reference, purchased_at, purchased_at
    from i order by n, p`.execute(database.db);
}

interface Filtered {
  query: string;
  matches: number;
  deepPage: number;
  /** Id of the first row of the deep page, from SQL. */
  deepFirstId: number;
}

interface Seeded {
  token: string;
  productIds: number[];
  customers: number;
  orders: number;
  newestId: number;
  deepFirstId: number;
  filtered: Filtered;
  rareMatches: number;
  commonMatches: number;
  databaseVersion: string;
}

async function seed(database: Database, items: number, deepPage: number): Promise<Seeded> {
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: PRODUCTS.map((p) => ({ key: p.key, workspace: 'ws', name: p.name, priceCents: p.priceCents })),
    resellers: RESELLERS.map((r) => ({ ...r, workspace: 'ws', developerShareBps: 7000 })),
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  const workspaceId = fixtures.ids.workspaces.ws!;
  const base = async (table: 'accounts' | 'orders') => {
    const { rows } = await sql<{ n: number }>`select coalesce(max(id), 0)::int as n from ${sql.table(table)}`.execute(database.db);
    return rows[0]!.n;
  };
  const plan: SeedPlan = {
    workspaceId,
    productIds: PRODUCTS.map((p) => fixtures.ids.products[p.key]!),
    priceCents: PRODUCTS.map((p) => p.priceCents),
    resellerIds: RESELLERS.map((r) => fixtures.ids.resellerIds[r.key]!),
    items,
    orders: ordersFor(items),
    customers: Math.max(1, Math.round(items / ITEMS_PER_CUSTOMER)),
    accountBase: await base('accounts'),
    orderBase: await base('orders'),
  };
  await seedInBatches('customers', plan.customers, CUSTOMER_BATCH, (from, to) => seedCustomers(database, plan, from, to));
  await seedInBatches('orders', plan.orders, SEED_BATCH, (from, to) => seedOrders(database, plan, from, to));
  // Ids were given explicitly: move the identity sequences past them.
  for (const table of ['accounts', 'orders'] as const) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(database.db);
  }
  await timed(database.kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE', () => analyze(database));

  const ws = workspaceId;
  const one = async (query: RawBuilder<{ n: number }>) => (await query.execute(database.db)).rows[0]?.n ?? Number.NaN;
  const { rows: stats } = await sql<{ n: number }>`select order_items as n from workspace_stats where workspace_id = ${ws}`.execute(database.db);
  if (stats[0]?.n !== items) throw new Error(`workspace_stats.order_items is ${stats[0]?.n}, expected ${items}`);

  const newestId = await one(sql<{ n: number }>`select id as n from order_items where workspace_id = ${ws} order by purchased_at desc, id desc limit 1`);
  const deepFirstId = await one(sql<{ n: number }>`
    select id as n from order_items where workspace_id = ${ws} order by purchased_at desc, id desc offset ${(deepPage - 1) * PAGE_SIZE} limit 1`);

  // Several filters combined: two channels, not refunded, sales, the last year, two of the five products.
  const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);
  const twoProducts = plan.productIds.slice(0, 2);
  const filterSql = sql`workspace_id = ${ws} and channel in ('managed_checkout', 'external_store') and refund_status = 'none'
    and record_type = 'sale' and purchased_at >= ${`${yearAgo}T00:00:00Z`}::timestamptz and product_id = any(${intArray(twoProducts)})`;
  const matches = await one(sql<{ n: number }>`select count(*)::int as n from order_items where ${filterSql}`);
  const filteredDeepPage = Math.max(1, Math.min(MAX_DEEP_PAGE, Math.floor(matches / 2 / PAGE_SIZE)));
  const filteredDeepFirstId = await one(sql<{ n: number }>`
    select id as n from order_items where ${filterSql} order by purchased_at desc, id desc offset ${(filteredDeepPage - 1) * PAGE_SIZE} limit 1`);

  // What the search matches: items of customers whose e-mail or name contains the term, or of orders whose reference starts with it.
  const searchCount = (term: string) =>
    one(sql<{ n: number }>`
      select count(*)::int as n from order_items i
      where i.workspace_id = ${ws} and (
        i.customer_id in (select account_id from developer_customers where workspace_id = ${ws} and search_text like ${`%${term}%`})
        or i.order_id in (select id from orders where workspace_id = ${ws}
                          and (lower(reference) like ${`${term}%`} or lower(external_reference) like ${`${term}%`})))`);

  return {
    token: fixtures.tokens.owner!,
    productIds: plan.productIds,
    customers: plan.customers,
    orders: plan.orders,
    newestId,
    deepFirstId,
    filtered: {
      query: `channel=managed_checkout,external_store&refundStatus=none&recordType=sale&dateFrom=${yearAgo}&productIds=${twoProducts.join(',')}`,
      matches,
      deepPage: filteredDeepPage,
      deepFirstId: filteredDeepFirstId,
    },
    rareMatches: await searchCount(RARE_NAME.toLowerCase()),
    commonMatches: await searchCount(COMMON_TERM),
    databaseVersion: await databaseVersion(database.db),
  };
}

// ---------------------------------------------------------------- HTTP helpers

interface ListBody {
  rows: Array<{ order_item_id: number; email: string }>;
  total: number;
}

async function getJson(url: string, token: string): Promise<ListBody> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as ListBody;
}

async function timedGet(url: string, token: string) {
  const started = performance.now();
  const body = await getJson(url, token);
  return { body, ms: performance.now() - started };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

/**
 * Import rows: every second one for an existing customer (so the import both
 * finds and creates customers), one of the five products, a price in major
 * units (every tenth row free), a date within three years, a unique external
 * reference, and a new serial code on every twentieth row.
 */
function importBody(rows: number, productIds: number[], customers: number): string {
  const now = Date.now();
  const purchases = Array.from({ length: rows }, (_, i) => {
    const product = PRODUCTS[i % PRODUCTS.length]!;
    const price = (product.priceCents / 100).toFixed(2);
    const existing = i % 2 === 0;
    const row: Record<string, unknown> = {
      email: existing ? customerEmail(1 + ((i * 7) % customers)) : `buyer.${i}@import.example`,
      productId: productIds[i % productIds.length],
      price,
      salePrice: i % 10 === 0 ? '0' : i % 5 === 1 ? ((product.priceCents * 3) / 400).toFixed(2) : price,
      date: new Date(now - ((i * 9973) % 1095) * 86_400_000 - 86_400_000).toISOString().slice(0, 10),
      externalReference: `BENCH-IMP-${i}`,
    };
    if (!existing) {
      row.firstName = FIRST[i % FIRST.length];
      row.lastName = LAST[(i * 7) % LAST.length];
    }
    if (i % 20 === 0) row.serialCode = `IMP-${String(i).padStart(6, '0')}-BENCH`;
    return row;
  });
  return JSON.stringify({ purchases });
}

function timedImport(server: ServerProcess, token: string, body: string): Promise<ImportRun> {
  return runImport(server.origin, '/api/developer/purchases/import', token, body);
}

// ---------------------------------------------------------------- measurement

interface Measured {
  hello: LoadResult;
  readyz: LoadResult;
  page1: LoadResult;
  deepFirstMs: number;
  deep: LoadResult;
  filtered: { page1: LoadResult; deepFirstMs: number; deep: LoadResult };
  rare: LoadResult;
  common: LoadResult;
  imported: ImportRun & { bodyBytes: number; rss: RssGrowth };
  reimported: ImportRun & { rss: RssGrowth };
}

interface Plan {
  items: number;
  importRows: number;
  deepPage: number;
  poolSize: number;
  settings: LoadSettings;
  bench: BenchDatabase;
  seeded: Seeded;
}

const serverTimes = (run: ImportRun) => (run.server ? `; server: queued ${run.server.queuedMs} ms, ran ${run.server.runMs} ms` : '');

async function measure({ items, importRows, deepPage, poolSize, settings, bench, seeded }: Plan): Promise<Measured> {
  const hello = await measureHello(settings);
  const server = await startAppServer(bench, poolSize);
  const auth = { authorization: `Bearer ${seeded.token}` };
  const list = (query: string) => `${server.origin}/api/developer/purchases?${query}`;
  const f = seeded.filtered;
  const urls = {
    page1: list(`page=1&limit=${PAGE_SIZE}`),
    deep: list(`page=${deepPage}&limit=${PAGE_SIZE}`),
    filtered1: list(`${f.query}&page=1&limit=${PAGE_SIZE}`),
    filteredDeep: list(`${f.query}&page=${f.deepPage}&limit=${PAGE_SIZE}`),
    rare: list(`search=${RARE_NAME.toLowerCase()}&limit=${PAGE_SIZE}`),
    common: list(`search=${COMMON_TERM}&limit=${PAGE_SIZE}`),
  };

  // The figures mean nothing if the answers are wrong.
  const first = await getJson(urls.page1, seeded.token);
  check(first.total === items && first.rows.length === Math.min(PAGE_SIZE, items), `page 1 has total ${first.total} and ${first.rows.length} rows`);
  check(first.rows[0]!.order_item_id === seeded.newestId, `page 1 starts at item ${first.rows[0]!.order_item_id}, expected ${seeded.newestId}`);
  const deepFirst = await timedGet(urls.deep, seeded.token);
  check(deepFirst.body.rows.length === Math.min(PAGE_SIZE, items - (deepPage - 1) * PAGE_SIZE), `page ${deepPage} has ${deepFirst.body.rows.length} rows`);
  check(deepFirst.body.rows[0]!.order_item_id === seeded.deepFirstId, `page ${deepPage} starts at item ${deepFirst.body.rows[0]!.order_item_id}, expected ${seeded.deepFirstId}`);
  log(`first request for page ${deepPage}: ${deepFirst.ms.toFixed(0)} ms`);
  const filteredFirst = await getJson(urls.filtered1, seeded.token);
  check(filteredFirst.total === f.matches, `filtered total ${filteredFirst.total}, expected ${f.matches}`);
  const filteredDeepFirst = await timedGet(urls.filteredDeep, seeded.token);
  check(
    filteredDeepFirst.body.rows[0]?.order_item_id === f.deepFirstId,
    `filtered page ${f.deepPage} starts at item ${filteredDeepFirst.body.rows[0]?.order_item_id}, expected ${f.deepFirstId}`,
  );
  log(`first request for filtered page ${f.deepPage}: ${filteredDeepFirst.ms.toFixed(0)} ms`);
  const rareAnswer = await getJson(urls.rare, seeded.token);
  check(rareAnswer.total === seeded.rareMatches && rareAnswer.rows.every((r) => r.email.includes(RARE_NAME.toLowerCase())), 'rare search');
  check((await getJson(urls.common, seeded.token)).total === seeded.commonMatches, 'common search total');

  const scenario = async (label: string, url: string) => {
    log(label);
    const result = await load(url, settings, auth, () => server.waitIdle());
    log(`  ${Math.round(result.requestsPerSec)} req/s, p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
    return result;
  };
  const readyz = await measureReadyz(server, settings);
  const page1 = await scenario('list, page 1', urls.page1);
  const deep = await scenario(`list, page ${deepPage} (offset ${offsetLabel(deepPage)})`, urls.deep);
  const filtered1 = await scenario(`list filtered (${f.matches.toLocaleString('en-US')} matches), page 1`, urls.filtered1);
  const filteredDeep = await scenario(`list filtered, page ${f.deepPage} (offset ${offsetLabel(f.deepPage)})`, urls.filteredDeep);
  const rare = await scenario(`search "${RARE_NAME.toLowerCase()}" (${seeded.rareMatches} matches)`, urls.rare);
  const common = await scenario(`search "${COMMON_TERM}" (${seeded.commonMatches.toLocaleString('en-US')} matches)`, urls.common);

  log(`import (${importRows.toLocaleString('en-US')} rows, JSON)`);
  const body = importBody(importRows, seeded.productIds, seeded.customers);
  const imported = await server.measureRss(() => timedImport(server, seeded.token, body));
  const ia = imported.result;
  check(
    ia.result.state === 'succeeded' && ia.result.importedCount === importRows && ia.result.insertedCount === importRows,
    `import answered ${ia.status} and ended ${JSON.stringify(ia.result).slice(0, 300)}`,
  );
  log(`  answered ${ia.status} in ${ia.answerMs.toFixed(0)} ms; finished after ${ia.seconds.toFixed(2)} s (${ia.polls} polls${serverTimes(ia)}), RSS +${(imported.rss.growthBytes / MB).toFixed(1)} MB`);
  check((await getJson(urls.page1, seeded.token)).total === items + importRows, 'total after import');
  await server.waitIdle();

  log('re-import (the same rows)');
  const reimported = await server.measureRss(() => timedImport(server, seeded.token, body));
  const ra = reimported.result;
  check(
    ra.result.state === 'succeeded' && ra.result.importedCount === importRows && ra.result.insertedCount === 0,
    `re-import answered ${ra.status} and ended ${JSON.stringify(ra.result).slice(0, 300)}`,
  );
  log(`  answered ${ra.status} in ${ra.answerMs.toFixed(0)} ms; finished after ${ra.seconds.toFixed(2)} s (${ra.polls} polls${serverTimes(ra)}), ${ra.result.insertedCount} inserted`);
  check((await getJson(urls.page1, seeded.token)).total === items + importRows, 'total after re-import');
  await server.stop();

  return {
    hello,
    readyz,
    page1,
    deepFirstMs: deepFirst.ms,
    deep,
    filtered: { page1: filtered1, deepFirstMs: filteredDeepFirst.ms, deep: filteredDeep },
    rare,
    common,
    imported: { ...ia, bodyBytes: Buffer.byteLength(body), rss: imported.rss },
    reimported: { ...ra, rss: reimported.rss },
  };
}

function figuresOf(m: Measured, deepPage: number, seeded: Seeded, importRows: number, postgres: boolean): Figure[] {
  const rare = RARE_NAME.toLowerCase();
  const fp = seeded.filtered.deepPage;
  const { filtered } = m;
  const rows = importRows.toLocaleString('en-US');
  const succeeded = m.imported.result.state === 'succeeded';
  const importGoal = postgres ? { goal: { text: '≤ 5,000 ms', pass: succeeded && m.imported.seconds <= 5 } } : {};
  return [
    ...listFigures(m, deepPage),
    throughputFigure(m, 'filtered list page 1', filtered.page1.requestsPerSec, 'req/s', readyzGoal(m, filtered.page1.requestsPerSec, LIST_PAGE1_SHARE_OF_READYZ)),
    { name: 'filtered list page 1 p50', value: filtered.page1.p50, unit: 'ms' },
    { name: 'filtered list page 1 p99', value: filtered.page1.p99, unit: 'ms' },
    throughputFigure(m, `filtered list page ${fp}`, filtered.deep.requestsPerSec, 'req/s'),
    {
      name: `filtered list page ${fp} p50`,
      value: filtered.deep.p50,
      unit: 'ms',
      goal: { text: `≤ 2 × filtered page-1 p50 (${(2 * filtered.page1.p50).toFixed(2)} ms)`, pass: filtered.deep.p50 <= 2 * filtered.page1.p50 },
    },
    { name: `filtered list page ${fp} p99`, value: filtered.deep.p99, unit: 'ms' },
    { name: `filtered list page ${fp}, first request`, value: filtered.deepFirstMs, unit: 'ms' },
    throughputFigure(m, `search "${rare}"`, m.rare.requestsPerSec, 'req/s'),
    { name: `search "${rare}" p95`, value: m.rare.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.rare.p95 <= 50 } },
    throughputFigure(m, `search "${COMMON_TERM}"`, m.common.requestsPerSec, 'req/s'),
    { name: `search "${COMMON_TERM}" p95`, value: m.common.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.common.p95 <= 50 } },
    { name: `import ${rows} rows: answer (${m.imported.status})`, value: m.imported.answerMs, unit: 'ms' },
    { name: `import ${rows} rows: POST to ${m.imported.result.state}`, value: m.imported.seconds * 1000, unit: 'ms', ...importGoal },
    { name: 'import RSS growth', value: m.imported.rss.growthBytes / MB, unit: 'MB' },
    {
      name: `re-import of the same rows, POST to ${m.reimported.result.state} (${m.reimported.result.insertedCount} inserted)`,
      value: m.reimported.seconds * 1000,
      unit: 'ms',
    },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const items = intEnv('BENCH_PURCHASE_ITEMS', 1_000_000, 1);
  const importRows = intEnv('BENCH_IMPORT_ROWS', 100_000, 1);
  if (importRows > IMPORT_MAX_ROWS) throw new Error(`BENCH_IMPORT_ROWS is at most ${IMPORT_MAX_ROWS}`);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();
  // The middle of the list: page 10,000 (offset 499,950) at one million items.
  const deepPage = Math.max(1, Math.floor(items / 2 / PAGE_SIZE));

  const bench = await createBenchDatabase('purchases');
  log(`database: ${bench.description}`);
  log(`seeding ${items.toLocaleString('en-US')} order items`);
  const seedStarted = performance.now();
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding, items, deepPage);
  } finally {
    await seeding.close();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(
    `  seeded in ${seedSeconds.toFixed(1)} s: ${seeded.customers.toLocaleString('en-US')} customers, ${seeded.orders.toLocaleString('en-US')} orders; ` +
      `filters match ${seeded.filtered.matches.toLocaleString('en-US')}, "${RARE_NAME.toLowerCase()}" ${seeded.rareMatches}, "${COMMON_TERM}" ${seeded.commonMatches.toLocaleString('en-US')}`,
  );
  log(`load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure({ items, importRows, deepPage, poolSize, settings, bench, seeded }));

  const report: Report = {
    target: 'purchases',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: {
      orderItems: items,
      orders: seeded.orders,
      customers: seeded.customers,
      importRows,
      deepPage,
      filteredQuery: seeded.filtered.query,
      filteredDeepPage: seeded.filtered.deepPage,
      pageSize: PAGE_SIZE,
      poolSize,
      ...settings,
      loadGenerator: 'autocannon 9 in the parent process; each server in a child process',
    },
    figures: figuresOf(m, deepPage, seeded, importRows, bench.kind === 'postgres'),
    details: {
      seedSeconds,
      filteredMatches: seeded.filtered.matches,
      searchMatches: { [RARE_NAME.toLowerCase()]: seeded.rareMatches, [COMMON_TERM]: seeded.commonMatches },
      load: {
        hello: m.hello,
        readyz: m.readyz,
        page1: m.page1,
        deep: m.deep,
        filteredPage1: m.filtered.page1,
        filteredDeep: m.filtered.deep,
        rare: m.rare,
        common: m.common,
      },
      deepPageFirstRequestMs: m.deepFirstMs,
      filteredDeepPageFirstRequestMs: m.filtered.deepFirstMs,
      import: { ...m.imported, rows: importRows },
      reimport: { ...m.reimported, rows: importRows },
    },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
