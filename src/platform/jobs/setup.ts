import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import { JobRunner } from './runner.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's background job runner (tests wait on it with `jobs.idle()`). */
    jobs: JobRunner;
  }
}

/**
 * One runner per instance, on which modules register their job handlers: started when the app is
 * ready (unless `run: false`: tests that inspect the queue), stopped at close — its running jobs
 * finish first, then `sender` (the mail transport they send through) closes.
 */
export function registerJobRunner(
  app: FastifyInstance,
  db: Db,
  options: { pollIntervalMs?: number; concurrency?: number; run?: boolean } | undefined,
  sender: { close?(): Promise<void> | void },
): JobRunner {
  const runner = new JobRunner(db, { ...options, log: app.log });
  app.decorate('jobs', runner);
  if (options?.run !== false) app.addHook('onReady', async () => runner.start());
  app.addHook('onClose', async () => {
    await runner.stop();
    await sender.close?.();
  });
  return runner;
}
