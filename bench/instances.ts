/**
 * Past one machine (PostgreSQL and Redis required): 1, 2 and 4 instances of the compiled service
 * (`node dist/server.js`, built here first, as production runs it) on this machine, sharing one
 * PostgreSQL database and one Redis (REDIS_URL, default redis://127.0.0.1:6379), each started with
 * the environment an operator sets. For each instance count:
 * 1. licensing validate: one autocannon load generator per instance (BENCH_CONNECTIONS each), all at
 *    once, rotating over the activated serials of a workspace seeded as the serials target seeds it
 *    (BENCH_INSTANCES_SERIALS serials, default 2,000); every answer must say valid; req/s summed.
 * 2. checkout webhook ingestion: BENCH_INSTANCES_SALES (default 500) signed sales and a tenth as many
 *    refunds, as the partners target sends them, BENCH_WEBHOOK_CONCURRENCY (default 16) senders per
 *    instance, each event to the next instance in turn; timed from the first POST until every sale
 *    is booked (an order item each, and the checkout clearing account holds sales − refunds), then
 *    the ledger checked (every transaction sums to zero). A fresh database per instance count (the
 *    event ids repeat), seeded as the partners target seeds it.
 * Both as a ratio to GET /readyz req/s of ONE instance (one generator) measured in the same run; no goal (the issue
 * asks to measure them and name the next bottleneck, docs/scaling.md).
 * 3. After the validate load: a serial every instance has just validated is suspended through the first instance,
 *    then unsuspended; how long until every instance's validate says so (goal: within 5 s, as the issue asks of the
 *    validate cache).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { unbalancedTransactions } from '../src/modules/ledger/ledger.repo.js';
import type { Database } from '../src/platform/db/database.js';
import {
  autovacuumStandIn,
  type BenchDatabase,
  BENCH_JWT,
  BENCH_LICENSE_KEY_HEX,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  intEnv,
  load,
  type LoadResult,
  type LoadSettings,
  loadSettings,
  log,
  onCleanup,
  openSeeding,
  printReport,
  type Report,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';
import { ingest, type Ingestion, SECRET, seed as seedPartners } from './partners.js';
import { seed as seedSerials, type Seeded as SerialsSeeded } from './serials.js';
import { freePort } from './startup.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const READY_LIMIT_MS = 120_000;
const BOOKED_LIMIT_MS = 10 * 60_000;
const SETTLE_LIMIT_MS = 60_000;
const UNLIMITED = '10000000';
/** The issue: a revocation or release is visible on every instance within 5 s. */
const VISIBLE_WITHIN_MS = 5_000;

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

function instanceCounts(): number[] {
  const raw = process.env.BENCH_INSTANCES || '1,2,4';
  const counts = raw.split(',').map((v) => Number(v.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) throw new Error(`BENCH_INSTANCES must list whole numbers 1..16 (got "${raw}")`);
  return counts;
}

async function checkRedis(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
    const info = await redis.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch (error) {
    throw new Error(`the instances target needs Redis at REDIS_URL (${url}): ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------- the service, as an operator starts it

interface Instance {
  origin: string;
  stop(): Promise<void>;
}

/** `node dist/server.js` with the environment an operator sets; resolves when GET /readyz answers 200. */
async function startInstance(bench: BenchDatabase, redisUrl: string, poolSize: number, index: number): Promise<Instance> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `patchbay-bench-instance-${index}-`));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['NODE_ENV', 'NODE_OPTIONS', 'JWKS_URL', 'STORAGE_DIR', 'STORAGE_DRIVER', 'PUBLIC_BASE_URL']) delete env[name];
  Object.assign(env, {
    DATABASE_URL: bench.databaseUrl,
    REDIS_URL: redisUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    DB_POOL_SIZE: String(poolSize),
    JWT_SECRET: BENCH_JWT.secret,
    JWT_ISSUER: BENCH_JWT.issuer,
    JWT_AUDIENCE: BENCH_JWT.audience,
    LICENSE_KEY_ENCRYPTION_KEY: BENCH_LICENSE_KEY_HEX,
    CHECKOUT_WEBHOOK_SECRET: SECRET,
    // The load generators are one client address standing for many (as bench/server.ts sets the same limits).
    LICENSING_RATE_LIMIT_PER_IP: UNLIMITED,
    LICENSING_RATE_LIMIT_PER_SERIAL: UNLIMITED,
    LICENSING_RATE_LIMIT_PER_SERIAL_TOTAL: UNLIMITED,
    PUBLIC_INFLIGHT_PER_IP: '0',
    MAX_CONNECTIONS_PER_IP: '0',
    DEMO: '0',
    LOG_LEVEL: 'warn',
  });
  const child = spawn(process.execPath, ['dist/server.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // The tail of what it printed (the log at LOG_LEVEL=warn goes to stdout, a crash to either).
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // An instance that dies while measured says why (its output), instead of a bare "fetch failed" in the generator.
  child.once('close', (code, signal) => {
    if (!stopping) log(`instance ${index} (${port}) exited (code ${code}, signal ${signal}) while in use; its output:\n${output}`);
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  onCleanup(() => {
    stopping = true;
    kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const origin = `http://127.0.0.1:${port}`;
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance ${index} exited ${child.exitCode} before it was ready: ${output}`);
    if (performance.now() - started > READY_LIMIT_MS) throw new Error(`instance ${index}: no 200 from /readyz within ${READY_LIMIT_MS / 1000} s: ${output}`);
    const status = await fetch(`${origin}/readyz`).then((r) => r.status, () => 0);
    if (status === 200) break;
    await sleep(50);
  }
  return {
    origin,
    async stop() {
      stopping = true;
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 30_000);
      await exited;
      clearTimeout(timer);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts `count` instances one after the other (each start runs the migrations check). */
async function startInstances(bench: BenchDatabase, redisUrl: string, poolSize: number, count: number): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (let i = 1; i <= count; i++) instances.push(await startInstance(bench, redisUrl, poolSize, i));
  return instances;
}

const stopAll = (instances: Instance[]) => Promise.all(instances.map((i) => i.stop()));

/**
 * Waits until PostgreSQL runs nothing for the bench database for 200 ms (the requests a stopped load generator left
 * behind are done): the instances are separate processes, so this is the shared database's view of idle.
 */
async function settle(database: Database): Promise<void> {
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  let quietSince: number | undefined;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()`.execute(database.db);
    if (rows[0]!.n === 0) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= 200) return;
    } else quietSince = undefined;
    await sleep(50);
  }
}

// ---------------------------------------------------------------- measurements

interface Spread {
  instances: number;
  /** Sum over the generators (one per instance, all at once). */
  requestsPerSec: number;
  perInstance: LoadResult[];
}

/** One load generator per instance, all at once; the generators share `plan`'s rotation. */
async function spread(instances: Instance[], pathName: string, settings: LoadSettings, plan?: Parameters<typeof load>[4]): Promise<Spread> {
  const perInstance = await Promise.all(instances.map((i) => load(`${i.origin}${pathName}`, settings, {}, async () => {}, plan)));
  return { instances: instances.length, requestsPerSec: perInstance.reduce((s, r) => s + r.requestsPerSec, 0), perInstance };
}

async function measureValidate(instances: Instance[], seeded: SerialsSeeded, settings: LoadSettings, database: Database): Promise<Spread> {
  // Every instance answers with a signed token before the load (a figure of wrong answers means nothing).
  for (const instance of instances) {
    const one = seeded.validate[0]!;
    const response = await fetch(`${instance.origin}/api/licensing/v1/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ productAppId: seeded.appId, serial: one.serial, machineId: one.machineId, nonce: 'check' }),
    });
    const body = (await response.json()) as { valid?: boolean; token?: unknown };
    check(response.status === 200 && body.valid === true && typeof body.token === 'string', `validate on ${instance.origin}: ${JSON.stringify(body)}`);
  }
  let v = 0;
  log(`validate, ${instances.length} instance(s), ${settings.connections} connections each (${seeded.validate.length} serials, rotating)`);
  const result = await spread(instances, '/api/licensing/v1/validate', settings, {
    method: 'POST',
    body: () => {
      const one = seeded.validate[v % seeded.validate.length]!;
      v += 1;
      return JSON.stringify({ productAppId: seeded.appId, serial: one.serial, machineId: one.machineId, nonce: `n${v}` });
    },
    verify: (status, body) => status === 200 && body.includes('"valid":true'),
  });
  await settle(database);
  log(`  ${Math.round(result.requestsPerSec)} req/s (${result.perInstance.map((r) => Math.round(r.requestsPerSec)).join(' + ')})`);
  return result;
}

/** Visibility of a suspension and its reversal on every instance (the issue: within 5 s). */
interface Staleness {
  instances: number;
  /** Per instance: ms from the suspend answer (sent to the first instance) until that instance's validate said invalid. */
  suspendVisibleMs: number[];
  /** The same for the unsuspend that follows, until valid again. */
  unsuspendVisibleMs: number[];
}

const STALENESS_LIMIT_MS = 30_000;

/**
 * A serial every instance has just validated (so each holds it in its cache) is suspended through the first
 * instance; each instance is then asked every 20 ms until it answers invalid; then unsuspended, until valid again.
 */
async function measureStaleness(instances: Instance[], seeded: SerialsSeeded, database: Database): Promise<Staleness> {
  const one = seeded.validate[0]!;
  const { rows } = await sql<{ id: number }>`select id from serials where workspace_id = ${seeded.workspaceId} and code = ${one.serial}`.execute(database.db);
  const serialId = rows[0]!.id;
  const validate = async (origin: string) => {
    const response = await fetch(`${origin}/api/licensing/v1/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ productAppId: seeded.appId, serial: one.serial, machineId: one.machineId, nonce: 'staleness' }),
    });
    return ((await response.json()) as { valid?: boolean }).valid === true;
  };
  const act = async (action: 'suspend' | 'unsuspend') => {
    const response = await fetch(`${instances[0]!.origin}/api/developer/serials/${serialId}/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const text = await response.text();
    check(response.status === 200, `${action} answered ${response.status} ${text.slice(0, 300)}`);
    return performance.now();
  };
  const until = (expected: boolean, since: number) =>
    Promise.all(
      instances.map(async (instance) => {
        for (;;) {
          if ((await validate(instance.origin)) === expected) return performance.now() - since;
          if (performance.now() - since > STALENESS_LIMIT_MS) throw new Error(`${instance.origin} still answered valid=${!expected} ${STALENESS_LIMIT_MS / 1000} s after the change`);
          await sleep(20);
        }
      }),
    );
  for (const instance of instances) check(await validate(instance.origin), `validate before the suspension on ${instance.origin}`);
  const suspendVisibleMs = await until(false, await act('suspend'));
  const unsuspendVisibleMs = await until(true, await act('unsuspend'));
  log(`  suspension seen by every instance after ${Math.round(Math.max(...suspendVisibleMs))} ms, its reversal after ${Math.round(Math.max(...unsuspendVisibleMs))} ms`);
  return { instances: instances.length, suspendVisibleMs, unsuspendVisibleMs };
}

interface Booking {
  instances: number;
  ingestion: Ingestion;
  /** First POST to the last answer. */
  acknowledgedPerSec: number;
  /** First POST until every sale is an order item and the clearing account holds sales − refunds. */
  bookedSeconds: number;
  bookedPerSec: number;
}

async function measureCheckout(
  redisUrl: string,
  poolSize: number,
  count: number,
  sales: number,
  sendersPerInstance: number,
): Promise<Booking> {
  const bench = await createBenchDatabase(`instances_checkout_${count}`);
  const seeding = await openSeeding(bench);
  let seeded: Awaited<ReturnType<typeof seedPartners>>;
  try {
    seeded = await seedPartners(seeding);
  } finally {
    await seeding.close();
  }
  const instances = await startInstances(bench, redisUrl, poolSize, count);
  const database = await bench.open();
  try {
    const started = performance.now();
    const stopAnalyze = await autovacuumStandIn(database);
    const ingestion = await ingest(instances.map((i) => i.origin), seeded, sales, sendersPerInstance * count).finally(stopAnalyze).catch((error: unknown) => {
      // fetch hides the socket error in `cause`.
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
      throw new Error(`checkout webhook with ${count} instance(s): ${error instanceof Error ? error.message : String(error)}${cause}`, { cause: error });
    });
    // Booked, whether the answer books the sale or a job does it afterwards (on any instance).
    const deadline = performance.now() + BOOKED_LIMIT_MS;
    let bookedSeconds: number | undefined;
    let last = { items: 0, clearing: '0' };
    while (bookedSeconds === undefined) {
      const { rows } = await sql<{ items: number; clearing: string }>`
        select (select count(*)::int from order_items where workspace_id = ${seeded.workspaceId} and channel = 'managed_checkout') as items,
               (select coalesce(sum(amount), 0)::text from ledger_entries where workspace_id = ${seeded.workspaceId} and account = 'checkout_clearing') as clearing`.execute(database.db);
      last = rows[0]!;
      if (last.items >= ingestion.sales && BigInt(last.clearing) === -BigInt(ingestion.collectedCents)) bookedSeconds = (performance.now() - started) / 1000;
      else if (performance.now() > deadline) throw new Error(`not booked after ${BOOKED_LIMIT_MS / 60_000} minutes: ${last.items} order items, clearing ${last.clearing} (expected ${-ingestion.collectedCents})`);
      else await sleep(25);
    }
    check(last.items === ingestion.sales, `${last.items} order items for ${ingestion.sales} sales`);
    const unbalanced = await unbalancedTransactions(database.db);
    check(unbalanced.length === 0, `${unbalanced.length} unbalanced ledger transactions`);
    const events = ingestion.sales + ingestion.refunds;
    log(`  booked: ${events} events in ${bookedSeconds.toFixed(1)} s: ${Math.round(events / bookedSeconds)} events/s`);
    return { instances: count, ingestion, acknowledgedPerSec: ingestion.eventsPerSec, bookedSeconds, bookedPerSec: events / bookedSeconds };
  } finally {
    await database.close();
    await stopAll(instances);
  }
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const counts = instanceCounts();
  const total = intEnv('BENCH_INSTANCES_SERIALS', 2_000, 100);
  const validateSerials = Math.min(intEnv('BENCH_VALIDATE_SERIALS', 300, 1), Math.floor(total / 4));
  const sales = intEnv('BENCH_INSTANCES_SALES', 500, 10);
  const senders = intEnv('BENCH_WEBHOOK_CONCURRENCY', 16, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const settings = loadSettings();
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  if (!process.env.DATABASE_URL) {
    throw new Error('the instances target needs PostgreSQL: set DATABASE_URL (instances cannot share the embedded database, which one process owns)');
  }
  const redisVersion = await checkRedis(redisUrl);

  const build = spawnSync(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');

  const bench = await createBenchDatabase('instances');
  log(`database: ${bench.description}; Redis ${redisVersion} at ${redisUrl}`);
  const seeding = await openSeeding(bench);
  let seeded: SerialsSeeded;
  try {
    seeded = await seedSerials(seeding, total, validateSerials, 10);
  } finally {
    await seeding.close();
  }

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(async () => {
    const database = await bench.open();
    try {
      const one = await startInstances(bench, redisUrl, poolSize, 1);
      log('GET /readyz (SELECT 1 through the pool), one instance');
      const readyz = await load(`${one[0]!.origin}/readyz`, settings);
      await settle(database);
      log(`  ${Math.round(readyz.requestsPerSec)} req/s, p50 ${readyz.p50.toFixed(2)} ms, p99 ${readyz.p99.toFixed(2)} ms`);
      await stopAll(one);
      const validate: Spread[] = [];
      const checkout: Booking[] = [];
      const staleness: Staleness[] = [];
      for (const count of counts) {
        const instances = await startInstances(bench, redisUrl, poolSize, count);
        try {
          validate.push(await measureValidate(instances, seeded, settings, database));
          staleness.push(await measureStaleness(instances, seeded, database));
        } finally {
          await stopAll(instances);
        }
        log(`checkout webhook, ${count} instance(s), ${senders} senders each, ${sales} sales + ${Math.floor(sales / 10)} refunds`);
        checkout.push(await measureCheckout(redisUrl, poolSize, count, sales, senders));
      }
      return { readyz, validate, staleness, checkout, databaseVersion: await databaseVersion(database.db) };
    } finally {
      await database.close();
    }
  });

  const ofReadyz = (value: number) => value / m.readyz.requestsPerSec;
  const figures: Figure[] = [
    { name: 'GET /readyz, one instance', value: m.readyz.requestsPerSec, unit: 'req/s', ratioToReadyz: 1 },
    ...m.validate.map((v): Figure => ({
      name: `validate, ${v.instances} instance(s)`,
      value: v.requestsPerSec,
      unit: 'req/s',
      ratioToReadyz: ofReadyz(v.requestsPerSec),
    })),
    ...m.staleness.map((t): Figure => {
      const worst = Math.max(...t.suspendVisibleMs, ...t.unsuspendVisibleMs);
      return {
        name: `suspend/unsuspend visible on every instance, ${t.instances} instance(s)`,
        value: worst,
        unit: 'ms',
        goal: { text: `≤ ${VISIBLE_WITHIN_MS / 1000} s`, pass: worst <= VISIBLE_WITHIN_MS },
      };
    }),
    ...m.checkout.flatMap((c): Figure[] => [
      {
        name: `checkout booked, ${c.instances} instance(s)`,
        value: c.bookedPerSec,
        unit: 'events/s',
        ratioToReadyz: ofReadyz(c.bookedPerSec),
      },
      { name: `checkout acknowledged, ${c.instances} instance(s)`, value: c.acknowledgedPerSec, unit: 'events/s', ratioToReadyz: ofReadyz(c.acknowledgedPerSec) },
    ]),
  ];
  const result: Report = {
    target: 'instances',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: m.databaseVersion, redisVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { counts, serials: total, validateSerials, sales, sendersPerInstance: senders, poolSize, ...settings },
    figures,
    details: { readyz: m.readyz, validate: m.validate, staleness: m.staleness, checkout: m.checkout },
  };
  printReport(result);
  log('validate and checkout have no goal: the issue asks to measure them and name the next bottleneck (docs/scaling.md); ratios are to /readyz of ONE instance, this run');
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(result)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
