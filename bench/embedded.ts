/**
 * The embedded database under a large import: the app on PGlite (which runs in
 * a worker thread, so the main thread keeps answering while a long statement
 * runs), a 100,000-row customers import sent as a user sends it (202, then the
 * import resource polled until it finished), and GET /healthz hammered by a
 * few keep-alive connections the whole time. /healthz touches no database: its
 * latency is how long the server's event loop was busy with something else.
 *
 * Always embedded, whatever DATABASE_URL says. Goals: /healthz p99 < 100 ms
 * during the import, and the import finished ≤ 10 s after the POST.
 */
import http from 'node:http';
import { loadFixtures } from '../src/operator/fixtures.js';
import { IMPORT_MAX_ROWS } from '../src/platform/import/errors.js';
import {
  BENCH_JWT,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  type ImportRun,
  intEnv,
  log,
  openSeeding,
  percentile,
  printReport,
  type Report,
  type RssGrowth,
  runImport,
  startAppServer,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';
import { FIRST, LAST } from './names.js';

const MB = 1024 * 1024;
const HEALTHZ_P99_GOAL_MS = 100;
const IMPORT_GOAL_SECONDS = 10;

interface Seeded {
  token: string;
  productIds: number[];
  databaseVersion: string;
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

// ---------------------------------------------------------------- /healthz under way

export interface Probe {
  requests: number;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Requests answered with anything but 200, or failed at the socket. */
  failures: number;
}

/**
 * `connections` keep-alive loops, each sending GET `url` as soon as the last
 * answer arrived, until stopped. Every request's latency is kept (exact
 * percentiles); a request in flight when the probe is stopped is awaited and
 * counted, so a stall at the end is not cut off. `stop` may be called again (same result).
 */
function startProbe(url: string, connections: number): { stop(): Promise<Probe> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const started = performance.now();
  const once = () =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const request = http.get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          latencies.push(performance.now() - sent);
          if (response.statusCode !== 200) failures += 1;
          resolve();
        });
        response.on('error', () => {
          failures += 1;
          resolve();
        });
      });
      request.on('error', () => {
        failures += 1;
        resolve();
      });
    });
  const loops = Array.from({ length: connections }, async () => {
    while (running) await once();
  });
  const finish = async (): Promise<Probe> => {
    running = false;
    await Promise.all(loops);
    const seconds = (performance.now() - started) / 1000;
    agent.destroy();
    const sorted = Float64Array.from(latencies).sort();
    return {
      requests: latencies.length,
      requestsPerSec: latencies.length / seconds,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      failures,
    };
  };
  let stopped: Promise<Probe> | undefined;
  return {
    stop() {
      stopped ??= finish();
      return stopped;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const describeProbe = (p: Probe) =>
  `${p.requests.toLocaleString('en-US')} requests (${Math.round(p.requestsPerSec)}/s), p50 ${p.p50.toFixed(2)} ms, ` +
  `p95 ${p.p95.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms, max ${p.max.toFixed(1)} ms${p.failures ? `, ${p.failures} failures` : ''}`;

// ---------------------------------------------------------------- measurement

interface Measured {
  idle: Probe;
  during: Probe;
  imported: ImportRun & { bodyBytes: number; rss: RssGrowth };
}

async function measure(
  bench: Awaited<ReturnType<typeof createBenchDatabase>>,
  seeded: Seeded,
  importRows: number,
  connections: number,
  idleSeconds: number,
): Promise<Measured> {
  const server = await startAppServer(bench, 1);
  const healthz = `${server.origin}/healthz`;
  const auth = { authorization: `Bearer ${seeded.token}` };
  const total = async () => {
    const response = await fetch(`${server.origin}/api/developer/customers?page=1&limit=1`, { headers: auth });
    if (response.status !== 200) throw new Error(`customers list: HTTP ${response.status} ${await response.text()}`);
    return ((await response.json()) as { total: number }).total;
  };
  const before = await total();

  log(`GET /healthz, idle server (${connections} connections, ${idleSeconds} s)`);
  const warm = startProbe(healthz, connections);
  await sleep(1000);
  await warm.stop();
  const idleProbe = startProbe(healthz, connections);
  await sleep(idleSeconds * 1000);
  const idle = await idleProbe.stop();
  log(`  ${describeProbe(idle)}`);

  log(`customers import (${importRows.toLocaleString('en-US')} rows, JSON) with GET /healthz hammered meanwhile`);
  const body = importBody(importRows, seeded.productIds);
  const probe = startProbe(healthz, connections);
  // The probe is stopped (its last requests awaited) whatever happened to the import.
  const imported = await server
    .measureRss(() => runImport(server.origin, '/api/developer/customers/import', seeded.token, body))
    .finally(() => probe.stop());
  const during = await probe.stop();
  const ir = imported.result;
  log(
    `  answered ${ir.status} in ${ir.answerMs.toFixed(0)} ms; ${ir.result.state} after ${ir.seconds.toFixed(2)} s (${ir.polls} polls` +
      `${ir.server ? `; server: queued ${ir.server.queuedMs} ms, ran ${ir.server.runMs} ms` : ''}), RSS +${(imported.rss.growthBytes / MB).toFixed(1)} MB`,
  );
  log(`  /healthz meanwhile: ${describeProbe(during)}`);
  if (ir.result.state !== 'succeeded' || ir.result.insertedCount !== importRows) {
    throw new Error(`sanity check failed: import ended ${JSON.stringify(ir.result).slice(0, 300)}`);
  }
  const after = await total();
  if (after !== before + importRows) throw new Error(`sanity check failed: ${after} customers after the import, expected ${before + importRows}`);
  if (during.failures > 0 || idle.failures > 0) throw new Error(`/healthz failed ${during.failures + idle.failures} times`);
  await server.stop();
  return { idle, during, imported: { ...ir, bodyBytes: Buffer.byteLength(body), rss: imported.rss } };
}

function figuresOf(m: Measured, importRows: number): Figure[] {
  const rows = importRows.toLocaleString('en-US');
  const succeeded = m.imported.result.state === 'succeeded';
  return [
    { name: 'GET /healthz idle', value: m.idle.requestsPerSec, unit: 'req/s' },
    { name: 'GET /healthz idle p99', value: m.idle.p99, unit: 'ms' },
    { name: 'GET /healthz during import', value: m.during.requestsPerSec, unit: 'req/s' },
    { name: 'GET /healthz during import p50', value: m.during.p50, unit: 'ms' },
    {
      name: 'GET /healthz during import p99',
      value: m.during.p99,
      unit: 'ms',
      goal: { text: `< ${HEALTHZ_P99_GOAL_MS} ms`, pass: m.during.p99 < HEALTHZ_P99_GOAL_MS },
    },
    { name: 'GET /healthz during import max', value: m.during.max, unit: 'ms' },
    { name: `import ${rows} rows: answer (${m.imported.status})`, value: m.imported.answerMs, unit: 'ms' },
    {
      name: `import ${rows} rows: POST to ${m.imported.result.state}`,
      value: m.imported.seconds * 1000,
      unit: 'ms',
      goal: { text: `≤ ${(IMPORT_GOAL_SECONDS * 1000).toLocaleString('en-US')} ms`, pass: succeeded && m.imported.seconds <= IMPORT_GOAL_SECONDS },
    },
    { name: 'import RSS growth', value: m.imported.rss.growthBytes / MB, unit: 'MB' },
  ];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runStarted = performance.now();
  const importRows = intEnv('BENCH_IMPORT_ROWS', 100_000, 1);
  if (importRows > IMPORT_MAX_ROWS) throw new Error(`BENCH_IMPORT_ROWS is at most ${IMPORT_MAX_ROWS}`);
  const connections = intEnv('BENCH_HEALTHZ_CONNECTIONS', 4, 1);
  const idleSeconds = intEnv('BENCH_DURATION', 10, 1);

  const bench = await createBenchDatabase('embedded', { embedded: true });
  log(`database: ${bench.description}`);
  const seeding = await openSeeding(bench);
  let seeded: Seeded;
  try {
    const fixtures = await loadFixtures(seeding.db, BENCH_JWT, {
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
    const products = await seeding.db.selectFrom('products').where('workspace_id', '=', workspaceId).select('id').orderBy('id').execute();
    seeded = { token: fixtures.tokens.owner!, productIds: products.map((p) => p.id), databaseVersion: await databaseVersion(seeding.db) };
  } finally {
    await seeding.close();
  }
  log(`probe: ${connections} keep-alive connections sending GET /healthz back to back`);

  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(() => measure(bench, seeded, importRows, connections, idleSeconds));

  const report: Report = {
    target: 'embedded',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: seeded.databaseVersion, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { importRows, healthzConnections: connections, idleSeconds, importPollMs: 50, loadGenerator: 'keep-alive http loops in the parent process; the server in a child process' },
    figures: figuresOf(m, importRows),
    details: { healthzIdle: m.idle, healthzDuringImport: m.during, import: { ...m.imported, rows: importRows } },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)} (whole run ${((performance.now() - runStarted) / 1000).toFixed(0)} s)`);
}
