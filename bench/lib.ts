/**
 * What every benchmark target shares: settings from the environment, a fresh
 * database, the server child process, the load generator with exact
 * percentiles, RSS measurement, goals and the results file.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import type { JwtSettings } from '../src/platform/auth/jwt.js';
import { type Database, type Db, migrate, openDatabase } from '../src/platform/db/database.js';

// ---------------------------------------------------------------- settings

export function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min} (got "${raw}")`);
  return value;
}

export interface LoadSettings {
  connections: number;
  /** Seconds measured per scenario. */
  duration: number;
  /** Seconds of unrecorded load before each scenario (JIT, pool, caches). */
  warmup: number;
}

export function loadSettings(): LoadSettings {
  return {
    connections: intEnv('BENCH_CONNECTIONS', 10, 1),
    duration: intEnv('BENCH_DURATION', 10, 1),
    warmup: intEnv('BENCH_WARMUP', 2, 0),
  };
}

export const BENCH_JWT: JwtSettings = {
  secret: randomBytes(32).toString('base64url'),
  issuer: 'patchbay',
  audience: 'patchbay-api',
  jwksUrl: undefined,
};

/** Key-encryption key for license signing keys (hex: the spec crosses the IPC channel as JSON). */
export const BENCH_LICENSE_KEY_HEX = randomBytes(32).toString('hex');

export const log = (line: string) => process.stdout.write(`${line}\n`);

export async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  log(`  ${label}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

// ---------------------------------------------------------------- clean-up on exit or Ctrl-C

const cleanups: Array<() => Promise<void> | void> = [];

/** Registers work to undo (newest first) when the run ends, fails or is interrupted. */
export function onCleanup(work: () => Promise<void> | void): void {
  cleanups.unshift(work);
}

export async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const work = cleanups.shift()!;
    try {
      await work();
    } catch (error) {
      process.stderr.write(`clean-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    void runCleanups().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- database

export interface BenchDatabase {
  kind: 'postgres' | 'pglite';
  /** Where the server child connects. */
  databaseUrl: string | undefined;
  dataDir: string | null;
  description: string;
  open(): Promise<Database>;
}

const keep = () => process.env.BENCH_KEEP === '1';

/**
 * A database of its own for one run: a new database on the DATABASE_URL server
 * (dropped afterwards unless BENCH_KEEP=1), or embedded PGlite in a temp dir
 * (always with `embedded: true`, whatever DATABASE_URL says).
 */
export async function createBenchDatabase(target: string, options: { embedded?: boolean } = {}): Promise<BenchDatabase> {
  const serverUrl = options.embedded ? undefined : process.env.DATABASE_URL;
  if (!serverUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `patchbay-bench-${target}-`));
    onCleanup(() => {
      if (keep()) log(`BENCH_KEEP=1: kept the embedded database in ${dataDir}`);
      else fs.rmSync(dataDir, { recursive: true, force: true });
    });
    return {
      kind: 'pglite',
      databaseUrl: undefined,
      dataDir,
      description: `embedded PGlite in ${dataDir}`,
      open: () => openDatabase({ dataDir }),
    };
  }

  const name = `patchbay_bench_${target}_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  onCleanup(async () => {
    if (keep()) {
      log(`BENCH_KEEP=1: kept database ${name}`);
      return;
    }
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind: 'postgres',
    databaseUrl,
    dataDir: null,
    description: `PostgreSQL database ${name} on ${url.host}`,
    open: () => openDatabase({ databaseUrl, dataDir: null, poolSize: 4 }),
  };
}

/** Opens the bench database with the schema applied, for seeding. */
export async function openSeeding(bench: BenchDatabase): Promise<Database> {
  const database = await bench.open();
  await migrate(database.db);
  return database;
}

/** Runs `insert(from, to)` over [1, total] in batches and prints progress. */
export async function seedInBatches(
  label: string,
  total: number,
  batchSize: number,
  insert: (from: number, to: number) => Promise<void>,
): Promise<void> {
  const started = performance.now();
  for (let from = 1; from <= total; from += batchSize) {
    const to = Math.min(total, from + batchSize - 1);
    await insert(from, to);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`\r  ${label}: ${to.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} (${seconds.toFixed(1)} s)`);
  }
  process.stdout.write('\n');
}

/**
 * Fresh planner statistics (and, on PostgreSQL, a visibility map) as autovacuum
 * would leave them after a bulk load.
 */
export async function analyze(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    await sql`ANALYZE`.execute(database.db);
    return;
  }
  await sql`VACUUM ANALYZE`.execute(database.db);
  // Write the bulk load out now, so the checkpointer does not do it during a measurement.
  await sql`CHECKPOINT`.execute(database.db).catch((error: unknown) => {
    process.stderr.write(`warning: CHECKPOINT skipped (${error instanceof Error ? error.message : String(error)})\n`);
  });
}

/**
 * While a load writes into tables that were empty when the seeding's statistics were taken, does what autovacuum's
 * analyze would do on a production server: on a PostgreSQL server whose autovacuum is off (CI's configuration on
 * these machines), ANALYZE every `everyMs` until stopped (autovacuum looks once a `autovacuum_naptime`, a minute by
 * default, and analyzes a table after 50 rows plus 10 % of it changed). Without it the planner keeps the empty
 * tables' statistics for the whole load and reaches rows through the wrong index (a workspace's index for a
 * foreign-key check on (workspace_id, id)), which makes every statement slower as the tables grow. Nothing on the
 * embedded database or when autovacuum runs. Returns the stop function, which waits for a running ANALYZE.
 */
export async function autovacuumStandIn(database: Database, everyMs = 10_000): Promise<() => Promise<void>> {
  if (database.kind === 'pglite') return async () => {};
  const { rows } = await sql<{ on: string }>`select current_setting('autovacuum') as on`.execute(database.db);
  if (rows[0]?.on === 'on') return async () => {};
  log(`  the server runs without autovacuum: ANALYZE every ${everyMs / 1000} s during the load, as autovacuum would`);
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => sql`ANALYZE`.execute(database.db)).catch((error: unknown) => process.stderr.write(`warning: ANALYZE failed (${String(error)})\n`));
  }, everyMs);
  return async () => {
    clearInterval(timer);
    await running;
  };
}

export async function databaseVersion(db: Db): Promise<string> {
  const { rows } = await sql<{ v: string }>`select version() as v`.execute(db);
  return rows[0]?.v ?? 'unknown';
}

// ---------------------------------------------------------------- server child process

export type ServerSpec =
  | {
      kind: 'hello';
      /** Also serve this file at GET /file (a stream, as the app sends it): a reference for a download through Fastify. */
      file?: string;
    }
  | {
      kind: 'app';
      databaseUrl: string | undefined;
      dataDir: string | null;
      poolSize: number;
      jwt: JwtSettings;
      licenseKeyHex: string;
      /** Optional app settings of the targets that need them (products, packages). */
      extra?: AppExtras;
    };

/** App settings beyond the defaults, for targets that need private storage or other limits. */
export interface AppExtras {
  /** Private storage in this directory (LocalStorage); without it, file and package routes answer 503. */
  storageDir?: string;
  /** The app's PUBLIC_BASE_URL (links and package configuration). */
  publicBaseUrl?: string;
  /** The app option packages.downloadsPerMinute (GET plugin-package per product and minute). */
  packageDownloadsPerMinute?: number;
  /** Checkout webhook secrets (the partners target posts signed events). */
  checkoutWebhookSecrets?: string[];
  /** Referral redirects one address may request per minute. */
  referralsPerMinute?: number;
  /** Serve the front end's build from this directory (the console target); without it, web/dist. */
  webDir?: string;
  /** Outbound webhooks may go (over plain http) to these hosts (the webhooks target's receiver on loopback). */
  webhookAllowedHosts?: string[];
  /** Delivery attempts one instance makes at once (the app's WEBHOOK_CONCURRENCY). */
  webhookConcurrency?: number;
}

export type ParentMessage =
  | { type: 'start'; spec: ServerSpec }
  | { type: 'rss-start' }
  | { type: 'rss-stop' }
  | { type: 'wait-idle' }
  | { type: 'stop' };

export type ChildMessage =
  | { type: 'ready'; port: number; pid: number }
  | { type: 'rss'; baseline: number; peak: number; end: number }
  | { type: 'idle' }
  | { type: 'error'; message: string };

export interface RssGrowth {
  baselineBytes: number;
  peakBytes: number;
  growthBytes: number;
}

export interface ServerProcess {
  origin: string;
  pid: number;
  /** Runs `work` while the child samples its RSS; returns both results. */
  measureRss<T>(work: () => Promise<T>): Promise<{ result: T; rss: RssGrowth }>;
  /** Resolves when the server has finished the requests a stopped load run left behind. */
  waitIdle(): Promise<void>;
  stop(): Promise<void>;
}

const SERVER_ENTRY = fileURLToPath(new URL('./server.ts', import.meta.url));

function nextMessage<T extends ChildMessage['type']>(child: ChildProcess, type: T): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'error') {
        cleanup();
        reject(new Error(`server child failed: ${message.message}`));
      } else if (message.type === type) {
        cleanup();
        resolve(message as Extract<ChildMessage, { type: T }>);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`server child exited (code ${code}) while waiting for "${type}"`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Forks bench/server.ts (with the tsx loader this process runs under) and waits until it listens. */
export async function startServer(spec: ServerSpec): Promise<ServerProcess> {
  const child = fork(SERVER_ENTRY, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  onCleanup(kill);
  const ready = nextMessage(child, 'ready');
  child.send({ type: 'start', spec } satisfies ParentMessage);
  const { port, pid } = await ready;
  return {
    origin: `http://127.0.0.1:${port}`,
    pid,
    async measureRss(work) {
      child.send({ type: 'rss-start' } satisfies ParentMessage);
      const result = await work();
      const reply = nextMessage(child, 'rss');
      child.send({ type: 'rss-stop' } satisfies ParentMessage);
      const { baseline, peak } = await reply;
      return { result, rss: { baselineBytes: baseline, peakBytes: peak, growthBytes: peak - baseline } };
    },
    async waitIdle() {
      const reply = nextMessage(child, 'idle');
      child.send({ type: 'wait-idle' } satisfies ParentMessage);
      await reply;
    },
    async stop() {
      child.send({ type: 'stop' } satisfies ParentMessage);
      const timer = setTimeout(kill, 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------- load generation

export interface LoadResult {
  requests: number;
  requestsPerSec: number;
  /** Latencies in milliseconds, from every response (exact, not bucketed). */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** 'duration': the usual timed run; 'amount': the fallback for answers slower than the window (see load). */
  mode: 'duration' | 'amount';
  /** With a RequestPlan only: answers of the measured run by HTTP status. */
  statuses?: Record<string, number>;
}

/**
 * What to send instead of a bare GET (see load): a method, a fresh body per
 * request (so a run can rotate over serials or machines), answers that are
 * expected outcomes rather than failures, and a check of every answer's body.
 */
export interface RequestPlan {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Called once per request, warm-up included; the JSON body to send (none for a GET). */
  body?: () => string;
  /** Non-2xx statuses that are results, not failures (e.g. 422 for a full serial). Counted and timed like 2xx. */
  expected?: readonly number[];
  /** Checks every answer (warm-up included); false fails the run, as a non-2xx answer would. */
  verify?: (status: number, body: string) => boolean;
  /** Sees every answer of every run, warm-up included (the caller's own bookkeeping). */
  onAnswer?: (status: number) => void;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

interface CannonRun {
  url: string;
  headers: Record<string, string>;
  connections: number;
  duration?: number;
  amount?: number;
  onLatency?: (ms: number) => void;
  plan?: RequestPlan;
}

function cannon(run: CannonRun) {
  return new Promise<{ ok: number; bad: Record<string, number>; errors: number; seconds: number; statuses: Record<string, number> }>((resolve, reject) => {
    const bad: Record<string, number> = {};
    const statuses: Record<string, number> = {};
    let ok = 0;
    const started = performance.now();
    const { plan } = run;
    // A plan sends one request definition whose body is built anew for every request.
    const requests = plan && [
      {
        method: plan.method,
        setupRequest: (request: Record<string, unknown>) => (plan.body ? { ...request, body: plan.body() } : request),
        onResponse: (status: number, body: string) => {
          plan.onAnswer?.(status);
          if (plan.verify && !plan.verify(status, body)) bad[`${status} (body failed the check)`] = (bad[`${status} (body failed the check)`] ?? 0) + 1;
        },
      },
    ];
    const headers = plan?.body ? { 'content-type': 'application/json', ...run.headers } : run.headers;
    const options = { url: run.url, headers, connections: run.connections, timeout: 120, ...(requests ? { requests } : {}) };
    const instance = autocannon(run.amount ? { ...options, amount: run.amount } : { ...options, duration: run.duration ?? 1 }, (error, result) => {
      if (error) reject(error);
      else resolve({ ok, bad, errors: result.errors + result.timeouts, seconds: (performance.now() - started) / 1000, statuses });
    });
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if ((statusCode >= 200 && statusCode < 300) || plan?.expected?.includes(statusCode)) {
        ok += 1;
        run.onLatency?.(responseTime);
      } else bad[statusCode] = (bad[statusCode] ?? 0) + 1;
    });
  });
}

/** Below this many answers per connection a timed run says little about percentiles. */
const MIN_ANSWERS_PER_CONNECTION = 3;

/**
 * Drives `url` with autocannon: an unrecorded warm-up, then the measured run.
 * `settle` (the server's waitIdle) runs after each, because autocannon drops
 * the requests in flight when its time is up and the server finishes them
 * anyway; they must not slow the next measurement down.
 *
 * An endpoint too slow to answer a few requests per connection within the
 * window is measured again with a fixed number of requests (two per
 * connection) that are all awaited, so its latency is measured, not censored.
 * Any non-2xx answer or socket error fails the benchmark: a fast 401 is not a result.
 *
 * With a `plan` the requests carry its method and bodies; its `expected`
 * statuses count as answers (in `requests`, the rate and the percentiles) and
 * `statuses` tells them apart. Without one, a GET as always.
 */
export async function load(
  url: string,
  settings: LoadSettings,
  headers: Record<string, string> = {},
  settle: () => Promise<void> = async () => {},
  plan?: RequestPlan,
): Promise<LoadResult> {
  const { connections } = settings;
  const fail = (run: { bad: Record<string, number>; errors: number }) => {
    if (Object.keys(run.bad).length > 0 || run.errors > 0) {
      throw new Error(`${url}: ${JSON.stringify(run.bad)} non-2xx answers, ${run.errors} errors/timeouts`);
    }
  };
  if (settings.warmup > 0) {
    const warm = await cannon({ url, headers, connections, duration: settings.warmup, ...(plan ? { plan } : {}) });
    await settle();
    if (plan) fail(warm);
  }
  let latencies: number[] = [];
  let mode: LoadResult['mode'] = 'duration';
  let run = await cannon({ url, headers, connections, duration: settings.duration, onLatency: (ms) => latencies.push(ms), ...(plan ? { plan } : {}) });
  await settle();
  if (run.ok < MIN_ANSWERS_PER_CONNECTION * connections && Object.keys(run.bad).length === 0 && run.errors === 0) {
    log(`  only ${run.ok} answers in ${settings.duration} s: measuring ${2 * connections} requests to completion instead`);
    latencies = [];
    mode = 'amount';
    run = await cannon({ url, headers, connections, amount: 2 * connections, onLatency: (ms) => latencies.push(ms), ...(plan ? { plan } : {}) });
    await settle();
  }
  fail(run);
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: run.ok,
    requestsPerSec: run.ok / run.seconds,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mode,
    ...(plan ? { statuses: run.statuses } : {}),
  };
}

// ---------------------------------------------------------------- report

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** Throughput figures only: value / hello-world req/s. */
  ratioToHello?: number;
  /** Throughput figures only: value / the app's own GET /readyz req/s (one SELECT 1 through the pool). */
  ratioToReadyz?: number;
  goal?: { text: string; pass: boolean };
}

export interface Report {
  target: string;
  startedAt: string;
  revision: { commit: string; srcDirty: boolean };
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  figures: Figure[];
  details: Record<string, unknown>;
}

const formatValue = (f: Figure) =>
  f.unit === 'ms' ? f.value.toFixed(2) : f.unit === 'MB' ? f.value.toFixed(1) : Math.round(f.value).toLocaleString('en-US');

export function printReport(report: Report): void {
  const percent = (r: number | undefined) => (r === undefined ? '' : `${(r * 100).toFixed(r < 0.1 ? 2 : 1)} %`);
  const rows = report.figures.map((f) => [
    f.name,
    `${formatValue(f)} ${f.unit}`,
    percent(f.ratioToHello),
    percent(f.ratioToReadyz),
    f.goal?.text ?? '',
    f.goal ? (f.goal.pass ? 'PASS' : 'FAIL') : '',
  ]);
  const header = ['figure', 'value', 'of hello-world', 'of /readyz', 'goal', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 1 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  log('');
  log(line(header));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) log(line(row));
  const goals = report.figures.filter((f) => f.goal);
  log('');
  log(`goals met: ${goals.filter((f) => f.goal!.pass).length} of ${goals.length}`);
  const failed = goals.filter((f) => !f.goal!.pass);
  if (failed.length > 0) log(`FAIL: ${failed.map((f) => f.name).join('; ')}`);
}

export function writeReport(report: Report): string {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${report.target}-${report.startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** The two baselines of a run: a plain Fastify hello-world, and the app's own GET /readyz (one SELECT 1 through the pool). */
export interface Baselines {
  hello: LoadResult;
  readyz: LoadResult;
}

/** A throughput figure with its ratios to both baselines. */
export function throughputFigure(b: Baselines, name: string, value: number, unit: string, goal?: Figure['goal']): Figure {
  return {
    name,
    value,
    unit,
    ratioToHello: value / b.hello.requestsPerSec,
    ratioToReadyz: value / b.readyz.requestsPerSec,
    ...(goal ? { goal } : {}),
  };
}

/** A goal stated as a share of /readyz req/s (the floor of any route that reads the database through the pool). */
export function readyzGoal(b: Baselines, perSecond: number, share: number): Figure['goal'] {
  return { text: `≥ ${Math.round(share * 100)} % of /readyz`, pass: perSecond / b.readyz.requestsPerSec >= share };
}

/** The share of /readyz a list's first page must reach. */
export const LIST_PAGE1_SHARE_OF_READYZ = 0.4;

/** The baselines and list figures that every list target reports, with the shared goals. */
export function listFigures(
  m: Baselines & { page1: LoadResult; deep: LoadResult; deepFirstMs: number },
  deepPage: number,
): Figure[] {
  return [
    throughputFigure(m, 'hello-world', m.hello.requestsPerSec, 'req/s'),
    throughputFigure(m, 'GET /readyz (SELECT 1)', m.readyz.requestsPerSec, 'req/s'),
    { name: 'GET /readyz p50', value: m.readyz.p50, unit: 'ms' },
    { name: 'GET /readyz p99', value: m.readyz.p99, unit: 'ms' },
    throughputFigure(m, 'list page 1', m.page1.requestsPerSec, 'req/s', readyzGoal(m, m.page1.requestsPerSec, LIST_PAGE1_SHARE_OF_READYZ)),
    { name: 'list page 1 p50', value: m.page1.p50, unit: 'ms' },
    { name: 'list page 1 p99', value: m.page1.p99, unit: 'ms' },
    throughputFigure(m, `list page ${deepPage}`, m.deep.requestsPerSec, 'req/s'),
    {
      name: `list page ${deepPage} p50`,
      value: m.deep.p50,
      unit: 'ms',
      goal: { text: `≤ 2 × page-1 p50 (${(2 * m.page1.p50).toFixed(2)} ms)`, pass: m.deep.p50 <= 2 * m.page1.p50 },
    },
    { name: `list page ${deepPage} p99`, value: m.deep.p99, unit: 'ms' },
    { name: `list page ${deepPage}, first request`, value: m.deepFirstMs, unit: 'ms' },
  ];
}

/** The plain Fastify hello-world every figure is compared with, measured with the same load settings. */
export async function measureHello(settings: LoadSettings): Promise<LoadResult> {
  log('hello-world');
  const server = await startServer({ kind: 'hello' });
  const hello = await load(`${server.origin}/`, settings, {}, () => server.waitIdle());
  await server.stop();
  log(`  ${Math.round(hello.requestsPerSec)} req/s`);
  return hello;
}

/**
 * The app's own GET /readyz on the running app server: one `SELECT 1` through
 * the same pool, with the same load settings as everything else: the ceiling
 * of any route that reads the database.
 */
export async function measureReadyz(server: ServerProcess, settings: LoadSettings): Promise<LoadResult> {
  log('GET /readyz (SELECT 1 through the pool)');
  const readyz = await load(`${server.origin}/readyz`, settings, {}, () => server.waitIdle());
  log(`  ${Math.round(readyz.requestsPerSec)} req/s, p50 ${readyz.p50.toFixed(2)} ms, p99 ${readyz.p99.toFixed(2)} ms`);
  return readyz;
}

// ---------------------------------------------------------------- imports as a user runs them

/** GET /api/developer/imports/{id}, as far as the benchmarks read it. */
export interface ImportResource {
  id: number;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  totalRows: number;
  processedRows: number;
  importedCount: number | null;
  insertedCount: number | null;
  failedCount: number | null;
  failure: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface ImportRun {
  /** POST sent to the import finished (succeeded or failed), as the client saw it. */
  seconds: number;
  /** POST sent to its answer (202 with the import resource, or 201/207 below the threshold). */
  answerMs: number;
  status: number;
  /** The final import resource (or, for an answer that ran the import at once, its counts). */
  result: { state: string; importedCount: number | null; insertedCount: number | null; failedCount: number | null; failure?: string | null };
  /** Polls of the import resource until it finished. */
  polls: number;
  /** The server's own timestamps: queued → started → finished (202 only). */
  server?: { queuedMs: number; runMs: number };
}

const POLL_MS = 50;
const IMPORT_TIMEOUT_MS = 15 * 60_000;

/**
 * An import as a user runs it: POST the rows; a 202 names the import resource
 * (`Location`), which is polled every 50 ms until its state is succeeded or
 * failed. The time is from sending the POST to seeing it finished (so it
 * includes up to one poll interval); the answer latency is measured too. A
 * 201/207 (an import at or below the async threshold) is finished on arrival.
 */
export async function runImport(origin: string, path: string, token: string, body: string): Promise<ImportRun> {
  const auth = { authorization: `Bearer ${token}` };
  const started = performance.now();
  const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
  const text = await response.text();
  const answerMs = performance.now() - started;
  if (response.status === 201 || response.status === 207) {
    const answer = JSON.parse(text) as { importedCount: number; insertedCount: number; failedCount: number };
    return {
      seconds: answerMs / 1000,
      answerMs,
      status: response.status,
      result: { state: 'succeeded', importedCount: answer.importedCount, insertedCount: answer.insertedCount, failedCount: answer.failedCount },
      polls: 0,
    };
  }
  const location = response.headers.get('location');
  if (response.status !== 202 || !location) throw new Error(`import ${path} answered ${response.status} ${text.slice(0, 300)}`);
  let polls = 0;
  for (;;) {
    if (performance.now() - started > IMPORT_TIMEOUT_MS) throw new Error(`import ${location} did not finish within ${IMPORT_TIMEOUT_MS / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const poll = await fetch(`${origin}${location}`, { headers: auth });
    const pollText = await poll.text();
    polls += 1;
    if (poll.status !== 200) throw new Error(`GET ${location} answered ${poll.status} ${pollText.slice(0, 300)}`);
    const resource = JSON.parse(pollText) as ImportResource;
    if (resource.state !== 'succeeded' && resource.state !== 'failed') continue;
    const seconds = (performance.now() - started) / 1000;
    const at = (iso: string | null) => (iso ? Date.parse(iso) : Number.NaN);
    return {
      seconds,
      answerMs,
      status: 202,
      result: {
        state: resource.state,
        importedCount: resource.importedCount,
        insertedCount: resource.insertedCount,
        failedCount: resource.failedCount,
        failure: resource.failure,
      },
      polls,
      server: { queuedMs: at(resource.startedAt) - at(resource.createdAt), runMs: at(resource.finishedAt) - at(resource.startedAt) },
    };
  }
}

/** The real application on the bench database, in a child process (with `extra` settings where a target needs them). */
export function startAppServer(bench: BenchDatabase, poolSize: number, extra?: AppExtras): Promise<ServerProcess> {
  return startServer({
    kind: 'app',
    databaseUrl: bench.databaseUrl,
    dataDir: bench.dataDir,
    poolSize,
    jwt: BENCH_JWT,
    licenseKeyHex: BENCH_LICENSE_KEY_HEX,
    ...(extra ? { extra } : {}),
  });
}
