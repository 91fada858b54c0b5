/**
 * The product dashboard at volume: one workspace whose product has
 * BENCH_PURCHASE_ITEMS (default 1,000,000) order items bought by
 * BENCH_PRODUCT_CUSTOMERS (default 100,000) customers, BENCH_REVIEWS (default
 * 1,000) reviews, serials with events, product events, versions and files.
 * Measures GET /api/developer/products/{id}/dashboard with every permission
 * (the owner's token) next to two baselines measured in the same run with the
 * same load (a hello-world Fastify server and the app's own GET /readyz), and
 * a private-link download of a BENCH_FILE_MB (default 200) MB delivery file
 * uploaded through the API into local private storage: MB/s and the server's
 * RSS growth while it streams.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type RawBuilder, sql } from 'kysely';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
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
  measureHello,
  measureReadyz,
  onCleanup,
  openSeeding,
  printReport,
  readyzGoal,
  type Report,
  type RssGrowth,
  seedInBatches,
  type ServerProcess,
  startAppServer,
  startServer,
  throughputFigure,
  timed,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';
import { DOMAINS, FIRST, LAST } from './names.js';

const MB = 1024 * 1024;
const SEED_BATCH = 50_000;
const SPAN_SECONDS = 3 * 365 * 86_400;
const PRICE_CENTS = 14_900;
/** The dashboard's share of /readyz and its p95 (the issue's goals). */
const DASHBOARD_SHARE_OF_READYZ = 0.25;
const DASHBOARD_P95_MS = 50;
const DOWNLOAD_MB_PER_S = 200;
const DOWNLOAD_RSS_MB = 50;
/** Timed downloads of the file (after one that checks its SHA-256); the figure is their median. */
const TIMED_DOWNLOADS = 3;

const textArray = (values: string[]) => sql`${values}::text[]`;
/** A pseudo-random bucket 0..size-1 of n, independent for each seed. */
const bucket = (n: RawBuilder<unknown>, seed: number, size: number) =>
  sql`((hashint8extended((${n})::bigint, ${sql.lit(seed)}) % ${sql.lit(size)} + ${sql.lit(size)}) % ${sql.lit(size)})`;

interface SeedPlan {
  workspaceId: number;
  productId: number;
  items: number;
  customers: number;
  reviews: number;
  serials: number;
  events: number;
  accountBase: number;
  customerBase: number;
  orderBase: number;
  itemBase: number;
}

/** Customers k = from..to: accounts, workspace relationships and the product link, with explicit ids (base + k). */
async function seedCustomers(database: Database, plan: SeedPlan, from: number, to: number) {
  await sql`
    with src as materialized (
      select k,
        (${textArray(FIRST)})[1 + k % ${FIRST.length}] as first_name,
        (${textArray(LAST)})[1 + (k / ${FIRST.length}) % ${LAST.length}] as last_name,
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
    ),
    dc as (
      insert into developer_customers (id, workspace_id, account_id, email, first_name, last_name, source, created_at, updated_at)
      select ${plan.customerBase}::int + k, ${plan.workspaceId}, ${plan.accountBase}::int + k, email, first_name, last_name, 'purchase', created_at, created_at from rows
    )
    insert into customer_products (workspace_id, developer_customer_id, product_id, created_at)
    select ${plan.workspaceId}, ${plan.customerBase}::int + k, ${plan.productId}, created_at from rows`.execute(database.db);
}

/**
 * Orders n = from..to, one item each, and the entitlements they grant, in one
 * statement. Channel managed_checkout 60 % / external_store 15 % / import 20 % /
 * manual_grant 5 %; 10 % in EUR; 20 % at a discount; 3 % of paid items fully
 * and 2 % partly refunded (reported up to 30 days later); purchased over three
 * years in order of n. The statement triggers keep workspace_stats and
 * product_sales_daily exact, as for any other insert.
 */
async function seedOrders(database: Database, plan: SeedPlan, from: number, to: number) {
  const { items } = plan;
  await sql`
    with h as materialized (
      select n, ${bucket(sql`n`, 1, 100)} as c, ${bucket(sql`n`, 2, 100)} as pv, ${bucket(sql`n`, 3, 100)} as f, ${bucket(sql`n`, 4, 100)} as d
      from generate_series(${from}::int, ${to}::int) as n
    ),
    o as materialized (
      select n, f, d,
        case when c < 60 then 'managed_checkout' when c < 75 then 'external_store' when c < 95 then 'import' else 'manual_grant' end as channel,
        ${plan.accountBase}::int + 1 + ((n::bigint * 7919) % ${plan.customers}::int)::int as customer_id,
        case when ${bucket(sql`n`, 5, 10)} = 0 then 'eur' else 'usd' end as currency,
        now() - make_interval(secs => (${items}::int - n)::float8 / ${items}::int * ${SPAN_SECONDS}) as purchased_at,
        pv
      from h
    ),
    i as materialized (
      select o.*,
        case channel
          when 'managed_checkout' then case when pv < 70 then 'paddle' else 'stripe' end
          when 'external_store' then case when pv < 50 then 'gumroad' else 'plugin-boutique' end
          when 'import' then 'external'
          else 'manual' end as provider,
        case channel when 'managed_checkout' then case when pv < 15 then 'subscription' else 'sale' end when 'manual_grant' then 'grant' else 'sale' end as record_type,
        case channel when 'import' then 'imported' when 'manual_grant' then 'granted' else 'paid' end as status,
        case when channel = 'manual_grant' then 0 when d < 20 then ${PRICE_CENTS * 3 / 4}::int else ${PRICE_CENTS}::int end as sale_price_cents,
        case channel when 'import' then 'LEGACY-' || n when 'external_store' then 'EXT-' || n end as external_reference
      from o
    ),
    r as materialized (
      select i.*,
        case when status = 'paid' and f < 3 then 'full' when status = 'paid' and f < 5 then 'partial' else 'none' end as refund_status
      from i
    ),
    ord as (
      insert into orders (id, workspace_id, customer_id, reference, external_reference, channel, provider, status, refund_status, total_cents, currency, purchased_at, created_at)
      select ${plan.orderBase}::int + n, ${plan.workspaceId}, customer_id, 'ORD-' || lpad(n::text, 8, '0'), external_reference, channel, provider, status, refund_status,
        sale_price_cents, currency, purchased_at, purchased_at
      from r
    ),
    items as (
      insert into order_items (id, workspace_id, order_id, product_id, customer_id, channel, provider, record_type, status, refund_status, currency,
                               price_cents, sale_price_cents, refunded_cents, refunded_at, external_reference, purchased_at, created_at)
      select ${plan.itemBase}::int + n, ${plan.workspaceId}, ${plan.orderBase}::int + n, ${plan.productId}, customer_id, channel, provider, record_type, status, refund_status, currency,
        ${PRICE_CENTS}, sale_price_cents,
        case refund_status when 'full' then sale_price_cents when 'partial' then sale_price_cents / 2 else 0 end,
        case when refund_status <> 'none' then least(now(), purchased_at + make_interval(days => ${bucket(sql`n`, 6, 30)}::int)) end,
        external_reference, purchased_at, purchased_at
      from r order by n
    )
    insert into entitlements (workspace_id, customer_id, product_id, source, kind, status, order_item_id, starts_at)
    select ${plan.workspaceId}, customer_id, ${plan.productId},
      case channel when 'import' then 'import' when 'manual_grant' then 'grant' else 'purchase' end,
      case when record_type = 'subscription' then 'subscription' else 'perpetual' end,
      case when refund_status = 'full' then 'revoked' else 'active' end,
      ${plan.itemBase}::int + n, purchased_at
    from r`.execute(database.db);
}

/** Reviews (linked to customers, most published), serials with one event each, and product events. */
async function seedProductRecords(database: Database, plan: SeedPlan) {
  const { workspaceId: ws, productId: pid } = plan;
  await sql`
    insert into product_reviews (workspace_id, product_id, account_id, rating, title, body, status, customer_name, customer_email, imported, verified, external_id, created_at, updated_at)
    select ${ws}, ${pid}, dc.account_id,
      1 + ${bucket(sql`r`, 21, 5)},
      'Review ' || r, repeat('Warm pads, fast workflow. ', 1 + ${bucket(sql`r`, 22, 8)}::int),
      case when ${bucket(sql`r`, 23, 100)} < 85 then 'published' when ${bucket(sql`r`, 23, 100)} < 95 then 'pending' else 'hidden' end,
      dc.first_name || ' ' || dc.last_name, dc.email, true, r % 2 = 0, 'BENCH-R-' || r,
      now() - make_interval(secs => (${plan.reviews}::int - r)::float8 / ${plan.reviews}::int * 2 * 365 * 86400),
      now() - make_interval(secs => (${plan.reviews}::int - r)::float8 / ${plan.reviews}::int * 2 * 365 * 86400)
    from generate_series(1, ${plan.reviews}::int) as r
    join developer_customers dc on dc.workspace_id = ${ws} and dc.id = ${plan.customerBase}::int + 1 + ((r::bigint * 97) % ${plan.customers}::int)::int`.execute(database.db);
  await sql`
    with s as (
      insert into serials (workspace_id, product_id, code, status, customer_id, origin, max_activations, redeemed_at, created_at, updated_at)
      select ${ws}, ${pid}, 'BENCHP-' || lpad(k::text, 8, '0'), case when k % 2 = 0 then 'redeemed' else 'available' end,
        case when k % 2 = 0 then ${plan.accountBase}::int + 1 + ((k::bigint * 31) % ${plan.customers}::int)::int end, 'generated', 3,
        case when k % 2 = 0 then now() - make_interval(secs => (${plan.serials}::int - k)::float8 / ${plan.serials}::int * 365 * 86400) end,
        now() - make_interval(secs => (${plan.serials}::int - k)::float8 / ${plan.serials}::int * 365 * 86400),
        now() - make_interval(secs => (${plan.serials}::int - k)::float8 / ${plan.serials}::int * 365 * 86400)
      from generate_series(1, ${plan.serials}::int) as k
      returning id, status, created_at
    )
    insert into serial_events (workspace_id, serial_id, product_id, action, actor_type, before_status, after_status, created_at)
    select ${ws}, id, ${pid}, case when status = 'redeemed' then 'redeemed' else 'generated' end, case when status = 'redeemed' then 'runtime' else 'developer' end,
      'available', status, created_at from s`.execute(database.db);
  await sql`
    insert into product_events (workspace_id, product_id, kind, data, occurred_at)
    select ${ws}, ${pid}, (array['product.updated', 'version.created', 'file.registered', 'review.moderated'])[1 + e % 4],
      jsonb_build_object('note', 'bench event ' || e),
      now() - make_interval(secs => (${plan.events}::int - e)::float8 / ${plan.events}::int * 365 * 86400)
    from generate_series(1, ${plan.events}::int) as e`.execute(database.db);
}

interface Expected {
  /** Items that count as orders (paid or imported), as the roll-up sums them. */
  orders: number;
  /** The same, in USD within the last 365 days (the dashboard's 365d window). */
  usd365Orders: number;
  customers: number;
  reviews: number;
}

interface Seeded {
  token: string;
  workspaceId: number;
  productId: number;
  expected: Expected;
  databaseVersion: string;
}

async function seed(database: Database, sizes: { items: number; customers: number; reviews: number; serials: number; events: number }): Promise<Seeded> {
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true, storefrontUrl: 'https://store.bench-audio.example' }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: [
      {
        key: 'synth',
        workspace: 'ws',
        name: 'Nebula Synth',
        priceCents: PRICE_CENTS,
        status: 'active',
        storefrontUrl: 'https://store.bench-audio.example/nebula-synth',
        description: 'A wavetable synthesizer.',
      },
    ],
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    versions: ['2.0.0', '2.1.0', '2.2.0', '2.3.0', '2.4.0'].map((version, i, all) => ({
      product: 'synth',
      version,
      changelog: `Changes in ${version}`,
      releaseDate: new Date(Date.now() - (all.length - i) * 60 * 86_400_000).toISOString(),
      isCurrent: i === all.length - 1,
    })),
    files: [
      { product: 'synth', filename: 'NebulaSynth-2.4.0-mac.dmg', url: 'https://cdn.bench-audio.example/NebulaSynth-2.4.0-mac.dmg', platform: 'macos', version: '2.4.0' },
      { product: 'synth', filename: 'NebulaSynth-Manual.pdf', url: 'https://cdn.bench-audio.example/NebulaSynth-Manual.pdf', type: 'manual' },
    ],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  const workspaceId = fixtures.ids.workspaces.ws!;
  const productId = fixtures.ids.products.synth!;
  const base = async (table: 'accounts' | 'developer_customers' | 'orders' | 'order_items') => {
    const { rows } = await sql<{ n: number }>`select coalesce(max(id), 0)::int as n from ${sql.table(table)}`.execute(database.db);
    return rows[0]!.n;
  };
  const plan: SeedPlan = {
    workspaceId,
    productId,
    ...sizes,
    accountBase: await base('accounts'),
    customerBase: await base('developer_customers'),
    orderBase: await base('orders'),
    itemBase: await base('order_items'),
  };
  await seedInBatches('customers', plan.customers, SEED_BATCH, (from, to) => seedCustomers(database, plan, from, to));
  await seedInBatches('order items (with orders and entitlements)', plan.items, SEED_BATCH, (from, to) => seedOrders(database, plan, from, to));
  // Ids were given explicitly: move the identity sequences past them.
  for (const table of ['accounts', 'developer_customers', 'orders', 'order_items'] as const) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(database.db);
  }
  await timed(`reviews (${plan.reviews}), serials with events (${plan.serials}), product events (${plan.events})`, () => seedProductRecords(database, plan));
  await timed(database.kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE', () => analyze(database));

  const one = async (query: RawBuilder<{ n: number }>) => (await query.execute(database.db)).rows[0]?.n ?? Number.NaN;
  const ws = workspaceId;
  const expected: Expected = {
    orders: await one(sql<{ n: number }>`select count(*)::int as n from order_items where workspace_id = ${ws} and product_id = ${productId} and status in ('paid', 'imported')`),
    usd365Orders: await one(sql<{ n: number }>`
      select count(*)::int as n from order_items where workspace_id = ${ws} and product_id = ${productId} and status in ('paid', 'imported') and currency = 'usd'
        and (purchased_at at time zone 'UTC')::date > (now() at time zone 'utc')::date - 365`),
    customers: plan.customers,
    reviews: plan.reviews,
  };
  const rollup = await one(sql<{ n: number }>`select coalesce(sum(orders), 0)::int as n from product_sales_daily where workspace_id = ${ws} and product_id = ${productId}`);
  if (rollup !== expected.orders) throw new Error(`product_sales_daily counts ${rollup} orders, the items ${expected.orders}`);
  return { token: fixtures.tokens.owner!, workspaceId, productId, expected, databaseVersion: await databaseVersion(database.db) };
}

// ---------------------------------------------------------------- HTTP helpers

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

async function call(method: 'GET' | 'POST', url: string, token: string, body?: unknown): Promise<{ status: number; json: unknown; ms: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status < 200 || response.status >= 300) throw new Error(`${method} ${url}: HTTP ${response.status} ${text.slice(0, 500)}`);
  return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null, ms };
}

/**
 * POSTs a file of `bytes` as multipart/form-data (platform, type and version
 * fields, then the file part) the way a browser streams it: one 1 MiB random
 * block repeated, written with back-pressure. Returns the answer, the SHA-256
 * of the content sent and the seconds from the first byte to the answer.
 */
function uploadFile(url: string, token: string, filename: string, bytes: number): Promise<{ status: number; body: string; sha256: string; seconds: number }> {
  const boundary = `----patchbay-bench-${randomBytes(8).toString('hex')}`;
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    field('platform', 'windows') +
      field('type', 'installer') +
      field('version', '2.4.0') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = randomBytes(MB);
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + bytes + tail.length),
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body, sha256: hash.digest('hex'), seconds: (performance.now() - started) / 1000 }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    void (async () => {
      request.write(head);
      for (let sent = 0; sent < bytes; ) {
        const chunk = bytes - sent >= block.length ? block : block.subarray(0, bytes - sent);
        hash.update(chunk);
        sent += chunk.length;
        if (!request.write(chunk)) await new Promise((r) => request.once('drain', r));
      }
      request.end(tail);
    })().catch(reject);
  });
}

/** Streams a download to nowhere; counts bytes (and hashes them when asked). */
function download(url: string, hashIt: boolean): Promise<{ bytes: number; seconds: number; sha256: string | null; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`download ${url}: HTTP ${response.statusCode}`));
        return;
      }
      const hash = hashIt ? createHash('sha256') : null;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        hash?.update(chunk);
      });
      response.on('end', () =>
        resolve({ bytes, seconds: (performance.now() - started) / 1000, sha256: hash ? hash.digest('hex') : null, headers: response.headers }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

// ---------------------------------------------------------------- measurement

interface FileRun {
  bytes: number;
  upload: { seconds: number; mbPerSec: number };
  /** MB/s of each timed download. */
  downloads: number[];
  mbPerSec: number;
  /** Plain Fastify streaming the same file, each run just before one of the timed downloads. */
  baselineDownloads: number[];
  baselineMbPerSec: number;
  /** Over the checked download and the timed ones. */
  rss: RssGrowth;
}

interface Measured {
  hello: LoadResult;
  readyz: LoadResult;
  dashboard: LoadResult;
  dashboardFirstMs: number;
  dashboardBytes: number;
  file: FileRun;
}

async function measureFile(server: ServerProcess, seeded: Seeded, fileBytes: number, storageDir: string): Promise<FileRun> {
  const files = `${server.origin}/api/developer/products/${seeded.productId}/files`;
  log(`upload of a ${(fileBytes / MB).toFixed(0)} MB file (multipart, into local private storage)`);
  const upload = await uploadFile(files, seeded.token, 'NebulaSynth-2.4.0-win64.exe', fileBytes);
  check(upload.status === 201, `upload answered ${upload.status} ${upload.body.slice(0, 300)}`);
  const metadata = JSON.parse(upload.body) as { id: string; sizeBytes: number; sha256: string; managed: boolean };
  check(metadata.sizeBytes === fileBytes && metadata.sha256 === upload.sha256 && metadata.managed, `upload recorded ${JSON.stringify(metadata)}`);
  const uploadMbPerSec = fileBytes / MB / upload.seconds;
  log(`  ${upload.seconds.toFixed(2)} s (${uploadMbPerSec.toFixed(0)} MB/s)`);

  const link = await call('POST', `${files}/${metadata.id}/link`, seeded.token);
  // Links are absolute under PUBLIC_BASE_URL; the bench reaches the same server at its own origin.
  const answered = new URL((link.json as { url: string }).url);
  const linkUrl = `${server.origin}${answered.pathname}${answered.search}`;
  // A reference: plain Fastify streaming the same stored file (no auth, no database, no hooks), in a child of its own.
  const stored = path.join(storageDir, `ws${seeded.workspaceId}`, 'products', String(seeded.productId), 'files', metadata.id);
  check(fs.statSync(stored).size === fileBytes, `stored file ${stored}`);
  const plain = await startServer({ kind: 'hello', file: stored });

  log(`private-link download: 1 checked + ${TIMED_DOWNLOADS} timed, each timed one after a plain-Fastify download of the same file (server RSS sampled every 10 ms)`);
  const { result, rss } = await server.measureRss(async () => {
    // The bytes must be the ones uploaded (hashing here slows this download; it is not timed).
    const verified = await download(linkUrl, true);
    check(verified.bytes === fileBytes && verified.sha256 === upload.sha256, `download gave ${verified.bytes} bytes, sha256 ${verified.sha256}`);
    check(verified.headers['cache-control'] === 'private, no-store', `download cache-control ${verified.headers['cache-control']}`);
    const app: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < TIMED_DOWNLOADS; i += 1) {
      const raw = await download(`${plain.origin}/file`, false);
      check(raw.bytes === fileBytes, `plain download ${i + 1} gave ${raw.bytes} bytes`);
      baseline.push(fileBytes / MB / raw.seconds);
      const run = await download(linkUrl, false);
      check(run.bytes === fileBytes, `download ${i + 1} gave ${run.bytes} bytes`);
      app.push(fileBytes / MB / run.seconds);
    }
    return { app, baseline };
  });
  await plain.stop();
  const mbPerSec = median(result.app);
  const baselineMbPerSec = median(result.baseline);
  log(`  private link: ${result.app.map((r) => r.toFixed(0)).join(' / ')} MB/s (median ${mbPerSec.toFixed(0)}), RSS +${(rss.growthBytes / MB).toFixed(1)} MB`);
  log(`  plain Fastify, same file: ${result.baseline.map((r) => r.toFixed(0)).join(' / ')} MB/s (median ${baselineMbPerSec.toFixed(0)})`);
  return {
    bytes: fileBytes,
    upload: { seconds: upload.seconds, mbPerSec: uploadMbPerSec },
    downloads: result.app,
    mbPerSec,
    baselineDownloads: result.baseline,
    baselineMbPerSec,
    rss,
  };
}

async function measure(plan: { bench: BenchDatabase; seeded: Seeded; settings: LoadSettings; poolSize: number; fileBytes: number; storageDir: string }): Promise<Measured> {
  const { bench, seeded, settings, poolSize } = plan;
  const hello = await measureHello(settings);
  const server = await startAppServer(bench, poolSize, { storageDir: plan.storageDir });
  const file = await measureFile(server, seeded, plan.fileBytes, plan.storageDir);

  // A generated plugin package, so the dashboard's package section reads a real build.
  await call('POST', `${server.origin}/api/developer/products/${seeded.productId}/plugin-package/generate`, seeded.token, { variant: 'pluginscript' });

  // The figures mean nothing if the answers are wrong. The first request also provisions the product credential.
  const url = `${server.origin}/api/developer/products/${seeded.productId}/dashboard`;
  const first = await call('GET', url, seeded.token);
  const d = first.json as {
    access: Record<string, boolean>;
    kpis: { customerCount: number; orderCount: number; ratingCount: number | null };
    performance: { available: boolean; ranges: Array<{ days: number; orders: number }> };
    reviewSummary: { total?: number };
    reviews: unknown[];
    files: Array<{ id: string }>;
    versions: unknown[];
    recentActivity: unknown[];
    pluginPackage: { packageReady: boolean } | null;
    restApi: { ready: boolean } | null;
  };
  const e = seeded.expected;
  check(Object.values(d.access).every(Boolean), `access ${JSON.stringify(d.access)}`);
  check(d.kpis.customerCount === e.customers, `customerCount ${d.kpis.customerCount}, expected ${e.customers}`);
  check(d.kpis.orderCount === e.orders, `orderCount ${d.kpis.orderCount}, expected ${e.orders}`);
  const year = d.performance.ranges.find((r) => r.days === 365);
  check(d.performance.available && year?.orders === e.usd365Orders, `365-day USD orders ${year?.orders}, expected ${e.usd365Orders}`);
  check(d.reviewSummary.total === e.reviews && d.reviews.length === Math.min(10, e.reviews), `reviews: summary total ${d.reviewSummary.total}, ${d.reviews.length} listed`);
  check(d.files.length === 3 && d.versions.length === 5 && d.recentActivity.length === 20, `files ${d.files.length}, versions ${d.versions.length}, activity ${d.recentActivity.length}`);
  check(d.pluginPackage?.packageReady === true && d.restApi?.ready === true, `pluginPackage ${JSON.stringify(d.pluginPackage)}, restApi ready ${d.restApi?.ready}`);
  const dashboardBytes = Buffer.byteLength(JSON.stringify(first.json));
  const second = await call('GET', url, seeded.token);
  log(`dashboard: first request ${first.ms.toFixed(0)} ms, second ${second.ms.toFixed(0)} ms, ${(dashboardBytes / 1024).toFixed(1)} KiB`);

  const readyz = await measureReadyz(server, settings);
  log('GET /api/developer/products/{id}/dashboard (owner: every permission)');
  const dashboard = await load(url, settings, { authorization: `Bearer ${seeded.token}` }, () => server.waitIdle());
  log(`  ${Math.round(dashboard.requestsPerSec)} req/s, p50 ${dashboard.p50.toFixed(2)} ms, p95 ${dashboard.p95.toFixed(2)} ms, p99 ${dashboard.p99.toFixed(2)} ms`);
  await server.stop();
  return { hello, readyz, dashboard, dashboardFirstMs: first.ms, dashboardBytes, file };
}

function figuresOf(m: Measured): Figure[] {
  const fileMb = (m.file.bytes / MB).toFixed(0);
  return [
    throughputFigure(m, 'hello-world', m.hello.requestsPerSec, 'req/s'),
    throughputFigure(m, 'GET /readyz (SELECT 1)', m.readyz.requestsPerSec, 'req/s'),
    { name: 'GET /readyz p50', value: m.readyz.p50, unit: 'ms' },
    { name: 'GET /readyz p99', value: m.readyz.p99, unit: 'ms' },
    throughputFigure(m, 'dashboard', m.dashboard.requestsPerSec, 'req/s', readyzGoal(m, m.dashboard.requestsPerSec, DASHBOARD_SHARE_OF_READYZ)),
    { name: 'dashboard p50', value: m.dashboard.p50, unit: 'ms' },
    { name: 'dashboard p95', value: m.dashboard.p95, unit: 'ms', goal: { text: `≤ ${DASHBOARD_P95_MS} ms`, pass: m.dashboard.p95 <= DASHBOARD_P95_MS } },
    { name: 'dashboard p99', value: m.dashboard.p99, unit: 'ms' },
    { name: 'dashboard, first request', value: m.dashboardFirstMs, unit: 'ms' },
    { name: `upload ${fileMb} MB (multipart)`, value: m.file.upload.mbPerSec, unit: 'MB/s' },
    { name: `plain Fastify streaming the same file, median of ${m.file.baselineDownloads.length}`, value: m.file.baselineMbPerSec, unit: 'MB/s' },
    {
      name: `private-link download ${fileMb} MB, median of ${m.file.downloads.length} (${((m.file.mbPerSec / m.file.baselineMbPerSec) * 100).toFixed(0)} % of plain)`,
      value: m.file.mbPerSec,
      unit: 'MB/s',
      goal: { text: `≥ ${DOWNLOAD_MB_PER_S} MB/s`, pass: m.file.mbPerSec >= DOWNLOAD_MB_PER_S },
    },
    {
      name: 'download RSS growth',
      value: m.file.rss.growthBytes / MB,
      unit: 'MB',
      goal: { text: `< ${DOWNLOAD_RSS_MB} MB`, pass: m.file.rss.growthBytes / MB < DOWNLOAD_RSS_MB },
    },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const sizes = {
    items: intEnv('BENCH_PURCHASE_ITEMS', 1_000_000, 1),
    customers: intEnv('BENCH_PRODUCT_CUSTOMERS', 100_000, 1),
    reviews: intEnv('BENCH_REVIEWS', 1_000, 10),
    serials: intEnv('BENCH_PRODUCT_SERIALS', 10_000, 20),
    events: 2_000,
  };
  const fileBytes = intEnv('BENCH_FILE_MB', 200, 1) * MB;
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();

  const bench = await createBenchDatabase('products');
  if (bench.kind !== 'postgres') log('warning: DATABASE_URL is not set; the products target is meant for PostgreSQL');
  log(`database: ${bench.description}`);
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-bench-products-storage-'));
  onCleanup(() => fs.rmSync(storageDir, { recursive: true, force: true }));
  log(`private storage: ${storageDir}`);
  log(
    `seeding one product: ${sizes.items.toLocaleString('en-US')} order items, ${sizes.customers.toLocaleString('en-US')} customers, ` +
      `${sizes.reviews.toLocaleString('en-US')} reviews, ${sizes.serials.toLocaleString('en-US')} serials`,
  );
  const seedStarted = performance.now();
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding, sizes);
  } finally {
    await seeding.close();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`  seeded in ${seedSeconds.toFixed(1)} s: ${seeded.expected.orders.toLocaleString('en-US')} paid or imported items (${seeded.expected.usd365Orders.toLocaleString('en-US')} in USD within 365 days)`);
  log(`load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure({ bench, seeded, settings, poolSize, fileBytes, storageDir }));

  const report: Report = {
    target: 'products',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { ...sizes, fileBytes, poolSize, ...settings, storage: 'LocalStorage (temp dir)', loadGenerator: 'autocannon 9 in the parent process; each server in a child process' },
    figures: figuresOf(m),
    details: {
      seedSeconds,
      expected: seeded.expected,
      dashboardBytes: m.dashboardBytes,
      load: { hello: m.hello, readyz: m.readyz, dashboard: m.dashboard },
      file: m.file,
    },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
