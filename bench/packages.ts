/**
 * Plugin packages: build time of POST …/plugin-package/generate for each
 * variant (pluginscript and native), BENCH_PACKAGE_BUILDS (default 30)
 * sequential requests each, every one a real build (generate never reuses a
 * stored archive: it renders the templates, zips, stores the archive in
 * private storage and records the build); then GET …/plugin-package?variant=native
 * for the package already built, under BENCH_PACKAGE_CONNECTIONS (default 50)
 * connections, next to two baselines measured in the same run with the same
 * load: a hello-world Fastify server and the app's own GET /readyz.
 * A small seed: one workspace, one product, its owner.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadFixtures } from '../src/operator/fixtures.js';
import type { Database } from '../src/platform/db/database.js';
import {
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
  percentile,
  printReport,
  readyzGoal,
  type Report,
  startAppServer,
  throughputFigure,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

const VARIANTS = ['pluginscript', 'native'] as const;
type Variant = (typeof VARIANTS)[number];
const BUILD_P95_MS = 300;
const GET_SHARE_OF_READYZ = 0.5;
/** Unrecorded builds per variant before the timed ones (first template render, JIT, pool). */
const WARMUP_BUILDS = 2;
/**
 * GET plugin-package is limited per product (packages.downloadsPerMinute, 30 by default) so a
 * polling integration cannot keep the build slots busy. The bench measures what one request
 * costs, not the limiter: every load request is for the same product, so with the default the
 * run would be answers of 429 after the 30th. The bench server sets it far above anything
 * the load can send (the limiter still runs and counts every request).
 */
const BENCH_DOWNLOADS_PER_MINUTE = 100_000_000;

interface Seeded {
  token: string;
  productId: number;
  databaseVersion: string;
}

async function seed(database: Database): Promise<Seeded> {
  const fixtures = await loadFixtures(database.db, BENCH_JWT, {
    workspaces: [{ key: 'ws', name: 'Bench Audio', billingEligible: true, storefrontUrl: 'https://store.bench-audio.example' }],
    accounts: [{ key: 'owner', email: 'owner@bench.patchbay.test', emailVerified: true }],
    products: [{ key: 'synth', workspace: 'ws', name: 'Nebula Synth', priceCents: 14_900, status: 'active', offlineGraceDays: 14 }],
    memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
  });
  return { token: fixtures.tokens.owner!, productId: fixtures.ids.products.synth!, databaseVersion: await databaseVersion(database.db) };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

interface LinkAnswer {
  url: string;
  filename: string;
  expiresIn: number;
}

async function call(method: 'GET' | 'POST', url: string, token: string, body?: unknown): Promise<{ answer: LinkAnswer; ms: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${method} ${url}: HTTP ${response.status} ${text.slice(0, 500)}`);
  return { answer: JSON.parse(text) as LinkAnswer, ms };
}

interface Builds {
  /** Milliseconds per timed request, in order. */
  ms: number[];
  warmupMs: number[];
  p50: number;
  p95: number;
  max: number;
  archiveBytes: number;
}

interface Measured {
  hello: LoadResult;
  readyz: LoadResult;
  builds: Record<Variant, Builds>;
  get: LoadResult;
  getFirstMs: number;
  activity: Record<string, number>;
}

const activityCounts = async (database: Database, productId: number) => {
  const { rows } = await sql<{ action: string; n: number }>`
    select action, count(*)::int as n from package_activity where product_id = ${productId} group by action`.execute(database.db);
  return Object.fromEntries(rows.map((r) => [r.action, r.n])) as Record<string, number>;
};

async function measure(plan: { bench: BenchDatabase; seeded: Seeded; settings: LoadSettings; poolSize: number; buildsPerVariant: number; storageDir: string }): Promise<Measured> {
  const { bench, seeded, settings } = plan;
  const hello = await measureHello(settings);
  const server = await startAppServer(bench, plan.poolSize, { storageDir: plan.storageDir, packageDownloadsPerMinute: BENCH_DOWNLOADS_PER_MINUTE });
  const base = `${server.origin}/api/developer/products/${seeded.productId}/plugin-package`;
  const database = await bench.open();
  try {
    const builds = {} as Record<Variant, Builds>;
    for (const variant of VARIANTS) {
      log(`POST plugin-package/generate, variant ${variant}: ${WARMUP_BUILDS} warm-up + ${plan.buildsPerVariant} timed builds, one after the other`);
      const before = (await activityCounts(database, seeded.productId)).generated ?? 0;
      const run = async () => (await call('POST', `${base}/generate`, seeded.token, { variant })).ms;
      const warmupMs: number[] = [];
      for (let i = 0; i < WARMUP_BUILDS; i += 1) warmupMs.push(await run());
      const ms: number[] = [];
      for (let i = 0; i < plan.buildsPerVariant; i += 1) ms.push(await run());
      // Every generate must have built (and recorded) a package, not reused one.
      const generated = ((await activityCounts(database, seeded.productId)).generated ?? 0) - before;
      check(generated === WARMUP_BUILDS + plan.buildsPerVariant, `${generated} generate activity rows for ${variant}, expected ${WARMUP_BUILDS + plan.buildsPerVariant}`);
      const { rows } = await sql<{ n: number }>`
        select size_bytes::int as n from package_builds where product_id = ${seeded.productId} and variant = ${variant} order by last_built_at desc limit 1`.execute(database.db);
      const sorted = Float64Array.from(ms).sort();
      builds[variant] = { ms, warmupMs, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1]!, archiveBytes: rows[0]?.n ?? Number.NaN };
      log(`  p50 ${builds[variant].p50.toFixed(1)} ms, p95 ${builds[variant].p95.toFixed(1)} ms, max ${builds[variant].max.toFixed(1)} ms; archive ${(builds[variant].archiveBytes / 1024).toFixed(1)} KiB`);
      await server.waitIdle();
    }

    // GET for the settings just generated: the stored archive is reused (no build slot), and its link serves a zip.
    const getUrl = `${base}?variant=native`;
    const first = await call('GET', getUrl, seeded.token);
    // Links are absolute under PUBLIC_BASE_URL; the bench reaches the same server at its own origin.
    const link = new URL(first.answer.url);
    const zip = await fetch(`${server.origin}${link.pathname}${link.search}`);
    const bytes = Buffer.from(await zip.arrayBuffer());
    check(zip.status === 200 && bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])), `package link answered ${zip.status}, ${bytes.length} bytes`);
    check(bytes.length === builds.native.archiveBytes, `package link served ${bytes.length} bytes, the build has ${builds.native.archiveBytes}`);
    const beforeLoad = await activityCounts(database, seeded.productId);

    const readyz = await measureReadyz(server, settings);
    log(`GET plugin-package?variant=native (already built), ${settings.connections} connections`);
    const get = await load(getUrl, settings, { authorization: `Bearer ${seeded.token}` }, () => server.waitIdle());
    log(`  ${Math.round(get.requestsPerSec)} req/s, p50 ${get.p50.toFixed(2)} ms, p95 ${get.p95.toFixed(2)} ms, p99 ${get.p99.toFixed(2)} ms`);
    const activity = await activityCounts(database, seeded.productId);
    check((activity.built ?? 0) === (beforeLoad.built ?? 0), `GET built ${(activity.built ?? 0) - (beforeLoad.built ?? 0)} packages under load; it should reuse the stored one`);
    check((activity.reused ?? 0) - (beforeLoad.reused ?? 0) >= get.requests, `reused rows ${(activity.reused ?? 0) - (beforeLoad.reused ?? 0)} < ${get.requests} answers`);
    await server.stop();
    return { hello, readyz, builds, get, getFirstMs: first.ms, activity };
  } finally {
    await database.close();
  }
}

function figuresOf(m: Measured, buildsPerVariant: number): Figure[] {
  const buildFigures = VARIANTS.flatMap((variant): Figure[] => {
    const b = m.builds[variant];
    return [
      { name: `generate ${variant}, p50 of ${buildsPerVariant}`, value: b.p50, unit: 'ms' },
      { name: `generate ${variant}, p95 of ${buildsPerVariant}`, value: b.p95, unit: 'ms', goal: { text: `≤ ${BUILD_P95_MS} ms`, pass: b.p95 <= BUILD_P95_MS } },
      { name: `generate ${variant}, max`, value: b.max, unit: 'ms' },
    ];
  });
  return [
    throughputFigure(m, 'hello-world', m.hello.requestsPerSec, 'req/s'),
    throughputFigure(m, 'GET /readyz (SELECT 1)', m.readyz.requestsPerSec, 'req/s'),
    { name: 'GET /readyz p50', value: m.readyz.p50, unit: 'ms' },
    { name: 'GET /readyz p99', value: m.readyz.p99, unit: 'ms' },
    ...buildFigures,
    throughputFigure(m, 'GET plugin-package native (built)', m.get.requestsPerSec, 'req/s', readyzGoal(m, m.get.requestsPerSec, GET_SHARE_OF_READYZ)),
    { name: 'GET plugin-package p50', value: m.get.p50, unit: 'ms' },
    { name: 'GET plugin-package p99', value: m.get.p99, unit: 'ms' },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const buildsPerVariant = intEnv('BENCH_PACKAGE_BUILDS', 30, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings: LoadSettings = { ...loadSettings(), connections: intEnv('BENCH_PACKAGE_CONNECTIONS', 50, 1) };

  const bench = await createBenchDatabase('packages');
  if (bench.kind !== 'postgres') log('warning: DATABASE_URL is not set; the packages target is meant for PostgreSQL');
  log(`database: ${bench.description}`);
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-bench-packages-storage-'));
  onCleanup(() => fs.rmSync(storageDir, { recursive: true, force: true }));
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    seeded = await seed(seeding);
  } finally {
    await seeding.close();
  }
  log(`load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure({ bench, seeded, settings, poolSize, buildsPerVariant, storageDir }));

  const report: Report = {
    target: 'packages',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: {
      buildsPerVariant,
      warmupBuilds: WARMUP_BUILDS,
      poolSize,
      ...settings,
      downloadsPerMinute: BENCH_DOWNLOADS_PER_MINUTE,
      storage: 'LocalStorage (temp dir)',
      loadGenerator: 'autocannon 9 in the parent process; each server in a child process',
    },
    figures: figuresOf(m, buildsPerVariant),
    details: { builds: m.builds, getFirstMs: m.getFirstMs, activity: m.activity, load: { hello: m.hello, readyz: m.readyz, get: m.get } },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
