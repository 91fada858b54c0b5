/**
 * Customers at volume: one workspace with BENCH_CUSTOMERS (default 1,000,000)
 * customers; list (first and middle page), search, CSV export and a
 * 100,000-row import (a 202 job, polled until it finished, as a user runs it),
 * each next to two baselines measured in the same run with the same load: a
 * hello-world Fastify server and the app's own GET /readyz (SELECT 1).
 */
import http from 'node:http';
import { sql } from 'kysely';
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
  startAppServer,
  measureHello,
  timed,
  writeReport,
  listFigures,
  measureReadyz,
  runImport,
  throughputFigure,
  type ImportRun,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';
import { COMMON_TERM, DOMAINS, FIRST, LAST, RARE_AT, RARE_EVERY, RARE_NAME } from './names.js';

const PAGE_SIZE = 50;
const SEED_BATCH = 50_000;
const MB = 1024 * 1024;


const textArray = (values: string[]) => sql`${values}::text[]`;

/**
 * Customers n = from..to in one statement: the global account, the workspace
 * relationship and one or two product links. The statement-level triggers keep
 * workspace_stats exact, as for any other insert.
 */
async function seedCustomers(database: Database, workspaceId: number, productIds: number[], total: number, from: number, to: number) {
  await sql`
    with src as materialized (
      select n,
        (${textArray(FIRST)})[1 + n % ${FIRST.length}] as first_name,
        case when n % ${RARE_EVERY} = ${RARE_AT} then ${RARE_NAME}
             else (${textArray(LAST)})[1 + (n / ${FIRST.length}) % ${LAST.length}] end as last_name,
        (${textArray(DOMAINS)})[1 + n % ${DOMAINS.length}] as domain,
        now() - (${total}::int - n) * interval '1 minute' as created_at
      from generate_series(${from}::int, ${to}::int) as n
    ),
    rows as materialized (
      select src.*, lower(first_name || '.' || last_name || '.' || n || '@' || domain) as email from src
    ),
    acc as (
      insert into accounts (email, email_normalized, email_verified, created_at)
      select email, email, n % 3 <> 0, created_at from rows
      returning id, email_normalized
    ),
    dc as (
      insert into developer_customers (workspace_id, account_id, email, first_name, last_name, source, created_at, updated_at)
      select ${workspaceId}, acc.id, rows.email, rows.first_name, rows.last_name, 'import', rows.created_at, rows.created_at
      from rows join acc on acc.email_normalized = rows.email
      returning id, email
    )
    insert into customer_products (workspace_id, developer_customer_id, product_id, created_at)
    select ${workspaceId}, dc.id, p.product_id, rows.created_at
    from dc join rows on rows.email = dc.email
    cross join lateral unnest(case when rows.n % 4 = 0
      then array[(${productIds}::int[])[1 + rows.n % 3], (${productIds}::int[])[1 + (rows.n + 1) % 3]]
      else array[(${productIds}::int[])[1 + rows.n % 3]] end) as p(product_id)`.execute(database.db);
}

export interface Seeded {
  token: string;
  productIds: number[];
  rareMatches: number;
  commonMatches: number;
  databaseVersion: string;
}

/** The workspace of one owner (owner@bench.patchbay.test) with three products and `total` customers; the console target seeds the same. */
export async function seed(database: Database, total: number): Promise<Seeded> {
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: [
      { key: 'synth', workspace: 'ws', name: 'Nebula Synth', priceCents: 14900 },
      { key: 'reverb', workspace: 'ws', name: 'Cathedral Reverb', priceCents: 7900 },
      { key: 'drums', workspace: 'ws', name: 'Tape Drums', priceCents: 4900 },
    ],
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  const workspaceId = fixtures.ids.workspaces.ws!;
  // Read back rather than taken from the fixture result, whose product entry may carry more than the id.
  const products = await database.db.selectFrom('products').where('workspace_id', '=', workspaceId).select('id').orderBy('id').execute();
  const productIds = products.map((p) => p.id);
  await seedInBatches('customers', total, SEED_BATCH, (from, to) => seedCustomers(database, workspaceId, productIds, total, from, to));
  await timed(database.kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE', () => analyze(database));

  const count = async (term: string) => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from developer_customers
      where workspace_id = ${workspaceId} and status = 'active' and search_text like ${`%${term}%`}`.execute(database.db);
    return rows[0]!.n;
  };
  return {
    token: fixtures.tokens.owner!,
    productIds,
    rareMatches: await count(RARE_NAME.toLowerCase()),
    commonMatches: await count(COMMON_TERM),
    databaseVersion: await databaseVersion(database.db),
  };
}

async function getJson(url: string, token: string): Promise<{ rows: Array<{ id: number }>; total: number }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as { rows: Array<{ id: number }>; total: number };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

/** Streams the whole export; counts data rows (our cells hold no line breaks) and bytes. */
function streamExport(url: string, token: string): Promise<{ rows: number; bytes: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`export: HTTP ${response.statusCode}`));
        response.resume();
        return;
      }
      let lines = 0;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      });
      response.on('end', () => resolve({ rows: lines - 1, bytes, seconds: (performance.now() - started) / 1000 }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

function importBody(rows: number, productIds: number[]): string {
  const customers = Array.from({ length: rows }, (_, i) => {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    return {
      email: `${first}.${last}.${i}@import.example`.toLowerCase(),
      firstName: first,
      lastName: last,
      productId: productIds[i % productIds.length],
      marketingConsent: i % 4 === 0,
    };
  });
  return JSON.stringify({ customers });
}

interface Measured {
  hello: LoadResult;
  readyz: LoadResult;
  page1: LoadResult;
  deepFirstMs: number;
  deep: LoadResult;
  rare: LoadResult;
  common: LoadResult;
  exported: { rows: number; bytes: number; seconds: number; rss: RssGrowth };
  imported: ImportRun & { bodyBytes: number; rss: RssGrowth };
}

interface Plan {
  total: number;
  importRows: number;
  deepPage: number;
  poolSize: number;
  settings: LoadSettings;
  bench: BenchDatabase;
  seeded: Seeded;
}

/** Timed GET that must answer 200 (the first deep page builds the server's page anchors). */
async function timedGet(url: string, token: string) {
  const started = performance.now();
  const body = await getJson(url, token);
  return { body, ms: performance.now() - started };
}

async function measure({ total, importRows, deepPage, poolSize, settings, bench, seeded }: Plan): Promise<Measured> {
  const hello = await measureHello(settings);
  const server = await startAppServer(bench, poolSize);
  const auth = { authorization: `Bearer ${seeded.token}` };
  const list = (query: string) => `${server.origin}/api/developer/customers?${query}`;
  const urls = {
    page1: list(`page=1&limit=${PAGE_SIZE}`),
    deep: list(`page=${deepPage}&limit=${PAGE_SIZE}`),
    rare: list(`search=${RARE_NAME.toLowerCase()}&limit=${PAGE_SIZE}`),
    common: list(`search=${COMMON_TERM}&limit=${PAGE_SIZE}`),
  };

  // The figures mean nothing if the answers are wrong.
  const first = await getJson(urls.page1, seeded.token);
  check(first.total === total && first.rows.length === Math.min(PAGE_SIZE, total), `page 1 has total ${first.total} and ${first.rows.length} rows`);
  const deepFirst = await timedGet(urls.deep, seeded.token);
  const deepRows = Math.min(PAGE_SIZE, total - (deepPage - 1) * PAGE_SIZE);
  check(deepFirst.body.rows.length === deepRows, `page ${deepPage} has ${deepFirst.body.rows.length} rows`);
  // Row n of the seed has id n + (ids taken before it); the page must hold the rows at its offset, not merely 50 rows.
  const newest = first.rows[0]!.id;
  check(deepFirst.body.rows[0]!.id === newest - (deepPage - 1) * PAGE_SIZE, `page ${deepPage} starts at id ${deepFirst.body.rows[0]!.id}`);
  log(`first request for page ${deepPage}: ${deepFirst.ms.toFixed(0)} ms`);
  check((await getJson(urls.rare, seeded.token)).total === seeded.rareMatches, 'rare search total');
  check((await getJson(urls.common, seeded.token)).total === seeded.commonMatches, 'common search total');

  const scenario = async (label: string, url: string) => {
    log(label);
    const result = await load(url, settings, auth, () => server.waitIdle());
    log(`  ${Math.round(result.requestsPerSec)} req/s, p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
    return result;
  };
  const readyz = await measureReadyz(server, settings);
  const page1 = await scenario('list, page 1', urls.page1);
  const deep = await scenario(`list, page ${deepPage} (offset ${((deepPage - 1) * PAGE_SIZE).toLocaleString('en-US')})`, urls.deep);
  const rare = await scenario(`search "${RARE_NAME.toLowerCase()}" (${seeded.rareMatches} matches)`, urls.rare);
  const common = await scenario(`search "${COMMON_TERM}" (${seeded.commonMatches.toLocaleString('en-US')} matches)`, urls.common);

  log('export (whole CSV)');
  const exported = await server.measureRss(() => streamExport(`${server.origin}/api/developer/customers/export`, seeded.token));
  check(exported.result.rows === total, `export has ${exported.result.rows} rows, expected ${total}`);
  log(`  ${exported.result.rows.toLocaleString('en-US')} rows in ${exported.result.seconds.toFixed(1)} s, RSS +${(exported.rss.growthBytes / MB).toFixed(1)} MB`);

  log(`import (${importRows.toLocaleString('en-US')} rows, JSON)`);
  const body = importBody(importRows, seeded.productIds);
  const imported = await server.measureRss(() => runImport(server.origin, '/api/developer/customers/import', seeded.token, body));
  const ir = imported.result;
  check(
    ir.result.state === 'succeeded' && ir.result.insertedCount === importRows,
    `import answered ${ir.status} and ended ${JSON.stringify(ir.result).slice(0, 300)}`,
  );
  log(
    `  answered ${ir.status} in ${ir.answerMs.toFixed(0)} ms; finished after ${ir.seconds.toFixed(2)} s (${ir.polls} polls` +
      `${ir.server ? `; server: queued ${ir.server.queuedMs} ms, ran ${ir.server.runMs} ms` : ''}), RSS +${(imported.rss.growthBytes / MB).toFixed(1)} MB`,
  );
  const after = await getJson(urls.page1, seeded.token);
  check(after.total === total + importRows, `total after import is ${after.total}`);
  await server.stop();

  return {
    hello,
    readyz,
    page1,
    deepFirstMs: deepFirst.ms,
    deep,
    rare,
    common,
    exported: { ...exported.result, rss: exported.rss },
    imported: { ...ir, bodyBytes: Buffer.byteLength(body), rss: imported.rss },
  };
}

function figuresOf(m: Measured, deepPage: number, importRows: number): Figure[] {
  const exportRowsPerSec = m.exported.rows / m.exported.seconds;
  const rare = RARE_NAME.toLowerCase();
  const rows = importRows.toLocaleString('en-US');
  return [
    ...listFigures(m, deepPage),
    throughputFigure(m, `search "${rare}"`, m.rare.requestsPerSec, 'req/s'),
    { name: `search "${rare}" p95`, value: m.rare.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.rare.p95 <= 50 } },
    throughputFigure(m, `search "${COMMON_TERM}"`, m.common.requestsPerSec, 'req/s'),
    { name: `search "${COMMON_TERM}" p95`, value: m.common.p95, unit: 'ms', goal: { text: '≤ 50 ms', pass: m.common.p95 <= 50 } },
    { name: 'export', value: exportRowsPerSec, unit: 'rows/s', goal: { text: '≥ 150,000 rows/s', pass: exportRowsPerSec >= 150_000 } },
    {
      name: 'export RSS growth',
      value: m.exported.rss.growthBytes / MB,
      unit: 'MB',
      goal: { text: '< 50 MB', pass: m.exported.rss.growthBytes < 50 * MB },
    },
    { name: `import ${rows} rows: answer (${m.imported.status})`, value: m.imported.answerMs, unit: 'ms' },
    {
      name: `import ${rows} rows: POST to ${m.imported.result.state}`,
      value: m.imported.seconds * 1000,
      unit: 'ms',
      goal: { text: '≤ 3,000 ms', pass: m.imported.result.state === 'succeeded' && m.imported.seconds <= 3 },
    },
    { name: 'import RSS growth', value: m.imported.rss.growthBytes / MB, unit: 'MB' },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const total = intEnv('BENCH_CUSTOMERS', 1_000_000, 1);
  const importRows = intEnv('BENCH_IMPORT_ROWS', 100_000, 1);
  if (importRows > IMPORT_MAX_ROWS) throw new Error(`BENCH_IMPORT_ROWS is at most ${IMPORT_MAX_ROWS}`);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();
  // The middle of the list: page 10,000 (offset 499,950) at one million customers.
  const deepPage = Math.max(1, Math.floor(total / 2 / PAGE_SIZE));

  const bench = await createBenchDatabase('customers');
  log(`database: ${bench.description}`);
  log(`seeding ${total.toLocaleString('en-US')} customers`);
  const seedStarted = performance.now();
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding, total);
  } finally {
    await seeding.close();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`  seeded in ${seedSeconds.toFixed(1)} s; "${RARE_NAME.toLowerCase()}" matches ${seeded.rareMatches}, "${COMMON_TERM}" matches ${seeded.commonMatches}`);
  log(`load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure({ total, importRows, deepPage, poolSize, settings, bench, seeded }));

  const report: Report = {
    target: 'customers',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { customers: total, importRows, deepPage, pageSize: PAGE_SIZE, poolSize, ...settings, loadGenerator: 'autocannon 9 in the parent process; each server in a child process' },
    figures: figuresOf(m, deepPage, importRows),
    details: {
      seedSeconds,
      searchMatches: { [RARE_NAME.toLowerCase()]: seeded.rareMatches, [COMMON_TERM]: seeded.commonMatches },
      load: { hello: m.hello, readyz: m.readyz, page1: m.page1, deep: m.deep, rare: m.rare, common: m.common },
      deepPageFirstRequestMs: m.deepFirstMs,
      export: { ...m.exported, rowsPerSec: m.exported.rows / m.exported.seconds },
      import: { ...m.imported, rows: importRows },
    },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
