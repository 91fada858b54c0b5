/**
 * Child process that serves one benchmark target, so the load generator in the
 * parent never shares an event loop with the server it measures.
 *
 * Protocol (IPC): the parent sends `start`; the child answers `ready` with its
 * port. `rss-start` / `rss-stop` bracket a measurement and the child answers
 * `rss` with the resident set size before and at its peak in between.
 * `wait-idle` is answered with `idle` once requests left over from a load run
 * (a load generator that stops mid-request leaves the server working) are done.
 */
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { LocalStorage } from '../src/platform/storage/storage.js';
import type { ChildMessage, ParentMessage, ServerSpec } from './lib.js';

const RSS_SAMPLE_MS = 10;
const IDLE_WINDOW_MS = 100;
const IDLE_MAX_MS = 180_000;

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function start(spec: ServerSpec): Promise<{ app: FastifyInstance; database?: Database }> {
  if (spec.kind === 'hello') {
    const app = Fastify({ logger: false });
    app.get('/', async () => ({ hello: 'world' }));
    const file = spec.file;
    if (file) {
      // The same stream LocalStorage hands the private-link route, sent by plain Fastify: no auth, no database, no hooks.
      app.get('/file', (_request, reply) =>
        reply
          .type('application/octet-stream')
          .header('content-length', String(statSync(file).size))
          .send(createReadStream(file, { highWaterMark: 256 * 1024 })),
      );
    }
    return { app };
  }
  // DB_PREPARED_STATEMENTS=0 measures without prepared statements, as the service's own setting does.
  const database = await openDatabase({ databaseUrl: spec.databaseUrl, dataDir: spec.dataDir, poolSize: spec.poolSize, preparedStatements: process.env.DB_PREPARED_STATEMENTS !== '0' });
  const extra = spec.extra ?? {};
  const app = await buildApp({
    database,
    jwt: spec.jwt,
    licensing: { encryptionKey: Buffer.from(spec.licenseKeyHex, 'hex'), rateLimit: { perIp: 10_000_000, perSerial: 10_000_000, perSerialTotal: 10_000_000 } },
    // The load generator is one client address standing for many: no per-address cap on requests in progress
    // (as no per-address rate limit above). (Runs before the fix in the next commit also hit a leak there:
    // a request abandoned by its client kept its slot for good.)
    httpLimits: { publicInflightPerIp: 0 },
    logger: false,
    ...(extra.storageDir ? { storage: new LocalStorage(extra.storageDir) } : {}),
    ...(extra.publicBaseUrl ? { publicBaseUrl: extra.publicBaseUrl } : {}),
    ...(extra.packageDownloadsPerMinute ? { packages: { downloadsPerMinute: extra.packageDownloadsPerMinute } } : {}),
    ...(extra.checkoutWebhookSecrets ? { checkout: { webhookSecrets: extra.checkoutWebhookSecrets } } : {}),
    ...(extra.referralsPerMinute ? { partners: { referralsPerMinute: extra.referralsPerMinute } } : {}),
    ...(extra.webDir ? { web: { mode: 'static' as const, dir: extra.webDir } } : {}),
    ...(extra.webhookAllowedHosts
      ? { webhooks: { allowedHosts: extra.webhookAllowedHosts, ...(extra.webhookConcurrency ? { concurrency: extra.webhookConcurrency } : {}) } }
      : {}),
  });
  return { app, database };
}

let running: { app: FastifyInstance; database?: Database } | undefined;

async function activeQueries(database: Database): Promise<number> {
  if (database.kind !== 'postgres') return 0;
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()`.execute(database.db);
  return rows[0]?.n ?? 0;
}

/** Idle: the event loop is almost unused (embedded PGlite works on it) and PostgreSQL runs nothing for us. */
async function waitIdle(): Promise<void> {
  const deadline = Date.now() + IDLE_MAX_MS;
  while (Date.now() < deadline) {
    const before = performance.eventLoopUtilization();
    await sleep(IDLE_WINDOW_MS);
    const busy = performance.eventLoopUtilization(before).utilization;
    if (busy < 0.05 && (!running?.database || (await activeQueries(running.database)) === 0)) return;
  }
}

// BENCH_CPU_PROF=<file>: the app's CPU profile from its start to the first wait-idle (the load a target
// measures first, e.g. the partners target's checkout webhook), written as a .cpuprofile for Chrome's DevTools.
let profiler: Session | undefined;
async function startProfile(): Promise<void> {
  if (!process.env.BENCH_CPU_PROF) return;
  profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
async function stopProfile(): Promise<void> {
  if (!profiler) return;
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(process.env.BENCH_CPU_PROF!, JSON.stringify(profile));
  profiler.disconnect();
  profiler = undefined;
}

let sampler: { timer: NodeJS.Timeout; baseline: number; peak: number } | undefined;

process.on('message', (message: ParentMessage) => {
  void (async () => {
    switch (message.type) {
      case 'start': {
        running = await start(message.spec);
        if (message.spec.kind === 'app') await startProfile();
        await running.app.listen({ host: '127.0.0.1', port: 0 });
        const address = running.app.server.address();
        if (address === null || typeof address === 'string') throw new Error('no TCP address');
        send({ type: 'ready', port: address.port, pid: process.pid });
        break;
      }
      case 'rss-start': {
        const baseline = process.memoryUsage.rss();
        const state = { baseline, peak: baseline, timer: undefined as unknown as NodeJS.Timeout };
        state.timer = setInterval(() => {
          state.peak = Math.max(state.peak, process.memoryUsage.rss());
        }, RSS_SAMPLE_MS);
        sampler = state;
        break;
      }
      case 'rss-stop': {
        if (!sampler) throw new Error('rss-stop without rss-start');
        clearInterval(sampler.timer);
        const end = process.memoryUsage.rss();
        send({ type: 'rss', baseline: sampler.baseline, peak: Math.max(sampler.peak, end), end });
        sampler = undefined;
        break;
      }
      case 'wait-idle': {
        await stopProfile();
        await waitIdle();
        send({ type: 'idle' });
        break;
      }
      case 'stop': {
        await running?.app.close();
        await running?.database?.close();
        process.exit(0);
      }
    }
  })().catch((error: unknown) => {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  });
});

process.on('disconnect', () => process.exit(0));
