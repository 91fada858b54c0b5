/**
 * Outbound webhooks at volume (issue 24): one workspace with an endpoint that wants `customer.created`, pointing at
 * a receiver on loopback in this process (it verifies every delivery's signature with the Standard Webhooks library
 * and answers 204); BENCH_WEBHOOK_EVENTS (default 10,000) customers imported in one request make as many events,
 * which the app's relay fans out and its delivery runner sends. Measured: deliveries per second from the first
 * delivery received to the last, and from the import's POST to the last delivery; every delivery verified, received
 * once, and recorded as succeeded. Goal: ≥ 1,000 deliveries/s on PostgreSQL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { loadFixtures } from '../src/operator/fixtures.js';
import {
  BENCH_JWT,
  createBenchDatabase,
  databaseVersion,
  type Figure,
  intEnv,
  log,
  openSeeding,
  printReport,
  type Report,
  runImport,
  startAppServer,
  writeReport,
} from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

const GOAL_PER_SECOND = 1_000;
const WAIT_MS = 10 * 60_000;

interface Receiver {
  url: string;
  /** Set once the endpoint exists: the receiver verifies with it from then on. */
  useSecret(secret: string): void;
  /** Resolves when `count` distinct deliveries have arrived (or rejects at the deadline or on a bad signature). */
  waitFor(count: number): Promise<void>;
  stats(): { received: number; distinct: number; duplicates: number; firstMs: number | null; lastMs: number | null };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  let verifier: Webhook | null = null;
  const seen = new Set<string>();
  let received = 0;
  let firstMs: number | null = null;
  let lastMs: number | null = null;
  let failure: Error | null = null;
  let waiting: { count: number; resolve(): void } | null = null;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        if (!verifier) throw new Error('a delivery arrived before the endpoint existed');
        verifier.verify(body, request.headers as Record<string, string>);
      } catch (error) {
        failure ??= new Error(`a delivery failed verification: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      const now = performance.now();
      received += 1;
      firstMs ??= now;
      lastMs = now;
      seen.add(String(request.headers['webhook-id']));
      response.writeHead(204).end();
      if (waiting && seen.size >= waiting.count) waiting.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/patchbay`,
    useSecret: (secret) => (verifier = new Webhook(secret)),
    waitFor: (count) =>
      new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => reject(failure ?? new Error(`${seen.size} of ${count} deliveries after ${WAIT_MS / 1000} s`)), WAIT_MS);
        const check = setInterval(() => {
          if (failure) {
            clearTimeout(deadline);
            clearInterval(check);
            reject(failure);
          }
        }, 100);
        const done = () => {
          clearTimeout(deadline);
          clearInterval(check);
          resolve();
        };
        if (seen.size >= count) done();
        else waiting = { count, resolve: done };
      }),
    stats: () => ({ received, distinct: seen.size, duplicates: received - seen.size, firstMs, lastMs }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const events = intEnv('BENCH_WEBHOOK_EVENTS', 10_000, 1);
  const concurrency = intEnv('BENCH_WEBHOOK_DELIVERY_CONCURRENCY', 64, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);
  const bench = await createBenchDatabase('webhooks');
  log(`database: ${bench.description}`);
  const seeding = await openSeeding(bench);
  let token: string;
  let workspaceId: number;
  let version: string;
  try {
    const fixtures = await loadFixtures(seeding.db, BENCH_JWT, {
      workspaces: [{ key: 'ws', name: 'Bench Webhooks', billingEligible: true }],
      accounts: [{ key: 'owner', email: 'owner@bench-webhooks.patchbay.test', emailVerified: true }],
      memberships: [{ account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' }],
      tokens: [{ key: 'owner', account: 'owner', workspace: 'ws', ttlSeconds: 6 * 3600 }],
    });
    token = fixtures.tokens.owner!;
    workspaceId = fixtures.ids.workspaces.ws!;
    version = await databaseVersion(seeding.db);
  } finally {
    await seeding.close();
  }

  const receiver = await startReceiver();
  const loadAverage = checkQuiet();
  const { result: m, foreign } = await withForeignCpu(async () => {
    const server = await startAppServer(bench, poolSize, { webhookAllowedHosts: ['127.0.0.1'], webhookConcurrency: concurrency });
    try {
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.origin}/api/developer/webhooks/endpoints`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ url: receiver.url, events: ['customer.created'], description: 'bench receiver' }),
      });
      const endpoint = (await created.json()) as { id: number; secret: string };
      check(created.status === 201, `endpoint creation answered ${created.status}: ${JSON.stringify(endpoint)}`);
      receiver.useSecret(endpoint.secret);

      const body = JSON.stringify({
        customers: Array.from({ length: events }, (_, i) => ({ email: `hook.${i}@bench-webhooks.example`, firstName: 'Hook', lastName: `Number ${i}` })),
      });
      log(`importing ${events.toLocaleString('en-US')} customers (one customer.created event each), delivering with ${concurrency} attempts at once`);
      const posted = performance.now();
      const imported = await runImport(server.origin, '/api/developer/customers/import', token, body);
      check(imported.result.state === 'succeeded' && imported.result.insertedCount === events, `import: ${JSON.stringify(imported.result)}`);
      const importedAt = performance.now();
      await receiver.waitFor(events);
      const stats = receiver.stats();
      log(`  import ${(imported.seconds).toFixed(1)} s; ${stats.distinct.toLocaleString('en-US')} deliveries received (${stats.duplicates} twice)`);
      return { posted, importedAt, stats, importSeconds: imported.seconds, endpointId: endpoint.id };
    } finally {
      await server.stop();
      await receiver.close();
    }
  });

  // Every delivery is recorded as succeeded once the receiver has them all (its 204 reached the app before).
  const after = await openSeeding(bench);
  let succeeded: number;
  try {
    succeeded = (
      await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where workspace_id = ${workspaceId} and endpoint_id = ${m.endpointId} and status = 'succeeded'`.execute(
        after.db,
      )
    ).rows[0]!.n;
  } finally {
    await after.close();
  }

  const { firstMs, lastMs, distinct, duplicates } = m.stats;
  const spanSeconds = (lastMs! - firstMs!) / 1000;
  const rate = distinct / Math.max(spanSeconds, 0.001);
  const endToEnd = (lastMs! - m.posted) / 1000;
  const figures: Figure[] = [
    { name: 'deliveries/s, first to last received', value: rate, unit: '/s', goal: { text: `≥ ${GOAL_PER_SECOND.toLocaleString('en-US')}/s`, pass: rate >= GOAL_PER_SECOND } },
    { name: 'deliveries/s, import POST to last received', value: distinct / endToEnd, unit: '/s' },
    { name: 'import POST → finished', value: m.importSeconds * 1000, unit: 'ms' },
    { name: 'import finished → last delivery', value: lastMs! - m.importedAt, unit: 'ms' },
    { name: 'deliveries received twice', value: duplicates, unit: '' },
    { name: 'deliveries recorded succeeded', value: succeeded, unit: '', goal: { text: `= ${events}`, pass: succeeded === events } },
  ];
  const report: Report = {
    target: 'webhooks',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), database: bench.kind, databaseVersion: version, loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { events, concurrency, poolSize },
    figures,
    details: { stats: m.stats, spanSeconds, endToEndSeconds: endToEnd },
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)}`);
}
