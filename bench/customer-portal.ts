/**
 * The buyers' portal at volume: one workspace with BENCH_PURCHASE_ITEMS (default 1,000,000) order
 * items bought by a fifth as many customers, and a serial for every fourth order; one of those
 * customers (the bench buyer) has BENCH_PORTAL_ORDERS (default 200) orders with a serial each and
 * a device or two on most serials. Measured with the buyer's session: the orders list (first and
 * last page), one order, and the licenses with their devices, next to the app's own GET /readyz.
 * Goal (issue 22): orders and licenses p95 ≤ 50 ms on PostgreSQL.
 */
import { type RawBuilder, sql } from 'kysely';
import { CustomerSessions } from '../src/modules/customer-portal/index.js';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
import {
  analyze,
  BENCH_JWT,
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
  printReport,
  type Report,
  seedInBatches,
  startAppServer,
  throughputFigure,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

const PRODUCTS = ['Nebula Synth', 'Cathedral Reverb', 'Tape Drums', 'Glue Compressor', 'Felt Keys'];
const ORDER_BATCH = 50_000;
const CUSTOMER_BATCH = 50_000;
const SPAN_SECONDS = 3 * 365 * 86_400;
const PAGE_SIZE = 50;
const GOAL_MS = 50;

interface Plan {
  workspaceId: number;
  productIds: number[];
  customers: number;
  orders: number;
  accountBase: number;
  orderBase: number;
}

/** Every fourth order has two items: `orders` orders hold about 1.25 × orders items. */
const ordersFor = (items: number) => Math.ceil((items * 4) / 5);

async function seedCustomers(database: Database, plan: Plan, from: number, to: number) {
  await sql`
    with rows as materialized (
      select k, 'buyer.' || k || '@bench-portal.example' as email from generate_series(${from}::int, ${to}::int) as k
    ), acc as (
      insert into accounts (id, email, email_normalized, email_verified)
      select ${plan.accountBase}::int + k, email, email, true from rows
    )
    insert into developer_customers (workspace_id, account_id, email, source)
    select ${plan.workspaceId}, ${plan.accountBase}::int + k, email, 'import' from rows`.execute(database.db);
}

/**
 * Orders n = from..to of the crowd (customer = a hash of n) or, with `buyer`, of that one account;
 * their items (two on every fourth order) and, on every fourth order, a serial with up to two devices.
 */
async function seedOrders(database: Database, plan: Plan, from: number, to: number, buyer?: { accountId: number; orderBase: number }) {
  const orderBase = buyer ? buyer.orderBase : plan.orderBase;
  const customer = buyer ? sql`${buyer.accountId}::int` : sql`${plan.accountBase}::int + 1 + ((n::bigint * 7919) % ${plan.customers}::int)::int`;
  const everySerial = buyer ? 1 : 4;
  await sql`
    with o as materialized (
      select n, ${customer} as customer_id, case when n % 4 = 0 then 2 else 1 end as n_items,
        now() - make_interval(secs => ((n::bigint * 104729) % 1000000) / 1e6 * ${SPAN_SECONDS}) as purchased_at,
        (${sql`${plan.productIds}::int[]`})[1 + n % ${plan.productIds.length}] as product_id
      from generate_series(${from}::int, ${to}::int) as n
    ), ins as (
      insert into orders (id, workspace_id, customer_id, reference, channel, provider, status, total_cents, currency, purchased_at, created_at)
      select ${orderBase}::int + n, ${plan.workspaceId}, customer_id, 'BENCH-' || (${orderBase}::int + n), 'managed_checkout', 'paddle', 'paid',
        4900 * n_items, 'usd', purchased_at, purchased_at from o
    ), serial as (
      insert into serials (workspace_id, product_id, code, customer_id, order_id, origin, status, max_activations, active_activation_count, redeemed_at)
      select ${plan.workspaceId}, product_id, 'PRT-' || lpad((${orderBase}::int + n)::text, 10, '0'), customer_id, ${orderBase}::int + n, 'granted', 'redeemed', 3, n % 3, purchased_at
      from o where n % ${everySerial} = 0
      returning id, active_activation_count
    ), seats as (
      insert into serial_activations (workspace_id, serial_id, machine_id, machine_name, platform)
      select ${plan.workspaceId}, serial.id, 'machine-' || serial.id || '-' || m, 'Studio ' || m, 'macos'
      from serial cross join lateral generate_series(1, serial.active_activation_count) as m
    )
    insert into order_items (workspace_id, order_id, product_id, customer_id, channel, provider, record_type, status, currency, price_cents, sale_price_cents, purchased_at, created_at)
    select ${plan.workspaceId}, ${orderBase}::int + n, (${sql`${plan.productIds}::int[]`})[1 + (n + p) % ${plan.productIds.length}], customer_id,
      'managed_checkout', 'paddle', 'sale', 'paid', 'usd', 4900, 4900, purchased_at, purchased_at
    from o cross join lateral generate_series(1, o.n_items) as p`.execute(database.db);
}

interface Seeded {
  workspaceId: number;
  buyerEmail: string;
  buyerOrders: number;
  buyerSerials: number;
  items: number;
  newestOrderId: number;
  databaseVersion: string;
}

async function seed(database: Database, items: number, buyerOrders: number): Promise<Seeded> {
  const buyerEmail = 'the.buyer@bench-portal.example';
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true, slug: `bench-${Date.now()}` }],
    products: PRODUCTS.map((name, i) => ({ key: `p${i}`, workspace: 'ws', name, priceCents: 4900 })),
    customers: [{ key: 'buyer', workspace: 'ws', email: buyerEmail, firstName: 'Bench', lastName: 'Buyer' }],
  });
  const workspaceId = fixtures.ids.workspaces.ws!;
  const max = async (table: 'accounts' | 'orders') => (await sql<{ n: number }>`select coalesce(max(id), 0)::int as n from ${sql.table(table)}`.execute(database.db)).rows[0]!.n;
  const crowdOrders = Math.max(0, ordersFor(items) - buyerOrders);
  const plan: Plan = {
    workspaceId,
    productIds: PRODUCTS.map((_, i) => fixtures.ids.products[`p${i}`]!),
    customers: Math.max(1, Math.round(items / 5)),
    orders: crowdOrders,
    accountBase: await max('accounts'),
    orderBase: await max('orders'),
  };
  await seedInBatches('customers', plan.customers, CUSTOMER_BATCH, (from, to) => seedCustomers(database, plan, from, to));
  await seedInBatches('orders', plan.orders, ORDER_BATCH, (from, to) => seedOrders(database, plan, from, to));
  const buyer = await database.db
    .selectFrom('developer_customers')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', fixtures.ids.customers.buyer!)
    .select('account_id')
    .executeTakeFirstOrThrow();
  await seedOrders(database, plan, 1, buyerOrders, { accountId: buyer.account_id, orderBase: plan.orderBase + plan.orders });
  for (const table of ['accounts', 'orders'] as const) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(database.db);
  }
  await analyze(database);
  const one = async (query: RawBuilder<{ n: number }>) => (await query.execute(database.db)).rows[0]!.n;
  const seededItems = await one(sql<{ n: number }>`select order_items as n from workspace_stats where workspace_id = ${workspaceId}`);
  return {
    workspaceId,
    buyerEmail,
    buyerOrders,
    buyerSerials: await one(sql<{ n: number }>`select count(*)::int as n from serials where workspace_id = ${workspaceId} and customer_id = ${buyer.account_id}`),
    items: seededItems,
    newestOrderId: await one(sql<{ n: number }>`
      select id as n from orders where workspace_id = ${workspaceId} and customer_id = ${buyer.account_id} order by purchased_at desc, id desc limit 1`),
    databaseVersion: await databaseVersion(database.db),
  };
}

async function getJson(url: string, token: string): Promise<{ rows: Array<{ order_id?: number; serial_id?: number; activations?: unknown[] }>; total?: number }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as never;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const items = intEnv('BENCH_PURCHASE_ITEMS', 1_000_000, 1);
  const buyerOrders = intEnv('BENCH_PORTAL_ORDERS', 200, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();
  const bench = await createBenchDatabase('portal');
  log(`database: ${bench.description}`);
  log(`seeding about ${items.toLocaleString('en-US')} order items; the bench buyer has ${buyerOrders} orders`);
  const seedStarted = performance.now();
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  let token: string;
  try {
    seeded = await seed(seeding, items, buyerOrders);
    // A buyer session opened as `patchbay token create --customer` opens one.
    token = (await new CustomerSessions(seeding.db, 'http://bench.invalid').operatorSession(String(seeded.workspaceId), seeded.buyerEmail))!.token;
  } finally {
    await seeding.close();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`  seeded in ${seedSeconds.toFixed(1)} s: ${seeded.items.toLocaleString('en-US')} order items; the buyer has ${seeded.buyerSerials} serials`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(async () => {
    const hello = await measureHello(settings);
    const server = await startAppServer(bench, poolSize);
    try {
      const base = `${server.origin}/api/customer-portal`;
      const lastPage = Math.ceil(buyerOrders / PAGE_SIZE);
      const urls = {
        orders: `${base}/orders?page=1&limit=${PAGE_SIZE}`,
        lastPage: `${base}/orders?page=${lastPage}&limit=${PAGE_SIZE}`,
        order: `${base}/orders/${seeded.newestOrderId}`,
        licenses: `${base}/licenses`,
      };
      const first = await getJson(urls.orders, token);
      check(first.total === buyerOrders && first.rows[0]?.order_id === seeded.newestOrderId, `orders: total ${first.total}, first ${first.rows[0]?.order_id}`);
      const licenses = await getJson(urls.licenses, token);
      check(licenses.rows.length === seeded.buyerSerials, `licenses: ${licenses.rows.length} rows, expected ${seeded.buyerSerials}`);
      const auth = { authorization: `Bearer ${token}` };
      const scenario = async (label: string, url: string) => {
        log(label);
        const result = await load(url, settings, auth, () => server.waitIdle());
        log(`  ${Math.round(result.requestsPerSec)} req/s, p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
        return result;
      };
      const readyz = await measureReadyz(server, settings);
      return {
        hello,
        readyz,
        orders: await scenario(`orders, page 1 of ${lastPage}`, urls.orders),
        lastPage: await scenario(`orders, page ${lastPage}`, urls.lastPage),
        order: await scenario('one order', urls.order),
        licenses: await scenario(`licenses (${seeded.buyerSerials} serials with their devices)`, urls.licenses),
        lastPageNumber: lastPage,
      };
    } finally {
      await server.stop();
    }
  });

  const goal = (r: LoadResult) => ({ text: `≤ ${GOAL_MS} ms`, pass: r.p95 <= GOAL_MS });
  const figures: Figure[] = [
    throughputFigure(m, 'hello world', m.hello.requestsPerSec, 'req/s'),
    throughputFigure(m, 'GET /readyz', m.readyz.requestsPerSec, 'req/s'),
    throughputFigure(m, 'orders page 1', m.orders.requestsPerSec, 'req/s'),
    { name: 'orders page 1 p95', value: m.orders.p95, unit: 'ms', goal: goal(m.orders) },
    { name: `orders page ${m.lastPageNumber} p95`, value: m.lastPage.p95, unit: 'ms', goal: goal(m.lastPage) },
    { name: 'one order p95', value: m.order.p95, unit: 'ms' },
    throughputFigure(m, 'licenses', m.licenses.requestsPerSec, 'req/s'),
    { name: 'licenses p95', value: m.licenses.p95, unit: 'ms', goal: goal(m.licenses) },
  ];
  const report: Report = {
    target: 'customer-portal',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { orderItems: seeded.items, buyerOrders, buyerSerials: seeded.buyerSerials, pageSize: PAGE_SIZE, poolSize, ...settings },
    figures,
    details: { seedSeconds, load: m },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)}`);
}
