/**
 * Child process that serves one benchmark target, so the load generator in the
 * parent never shares an event loop with the server it measures.
 *
 * Protocol (IPC): the parent sends `start`; the child answers `ready` with its
 * port. `rss-start` / `rss-stop` bracket a measurement and the child answers
 * `rss` with the resident set size before and at its peak in between.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import type { ChildMessage, ParentMessage, ServerSpec } from './lib.js';

const RSS_SAMPLE_MS = 10;

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function start(spec: ServerSpec): Promise<{ app: FastifyInstance; database?: Database }> {
  if (spec.kind === 'hello') {
    const app = Fastify({ logger: false });
    app.get('/', async () => ({ hello: 'world' }));
    return { app };
  }
  const database = await openDatabase({ databaseUrl: spec.databaseUrl, dataDir: spec.dataDir, poolSize: spec.poolSize });
  const app = await buildApp({ database, jwt: spec.jwt, logger: false });
  return { app, database };
}

let running: { app: FastifyInstance; database?: Database } | undefined;
let sampler: { timer: NodeJS.Timeout; baseline: number; peak: number } | undefined;

process.on('message', (message: ParentMessage) => {
  void (async () => {
    switch (message.type) {
      case 'start': {
        running = await start(message.spec);
        await running.app.listen({ host: '127.0.0.1', port: 0 });
        const address = running.app.server.address();
        if (address === null || typeof address === 'string') throw new Error('no TCP address');
        send({ type: 'ready', port: address.port, pid: process.pid });
        break;
      }
      case 'rss-start': {
        const baseline = process.memoryUsage.rss();
        const state = { baseline, peak: baseline, timer: setInterval(() => {
          state.peak = Math.max(state.peak, process.memoryUsage.rss());
        }, RSS_SAMPLE_MS) };
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
