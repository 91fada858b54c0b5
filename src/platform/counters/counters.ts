import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import type { JobRunner } from '../jobs/runner.js';
import { FOLD_BATCH, foldCounters, VACUUM_AFTER, vacuumCounterDeltas } from './counters.repo.js';

export { foldCounters, pendingCounterDeltas, vacuumCounterDeltas } from './counters.repo.js';

// The counters that every write used to update in one row (workspace_stats, product_sales_daily)
// are delta rows summed on read (migration 0027): a sale inserts, and never waits on another sale's
// counter. Folding moves the deltas into the folded rows so a read sums a few rows, not one per
// statement since the start; it never changes a figure a reader sees.

/**
 * Each instance folds every `intervalMs` while its job runner runs (instances share the work: a
 * folder that finds another folding skips its turn), and again with the hourly maintenance.
 * A timer, not a queued job per fold: a job row per few seconds would be a write of its own on
 * the queue for work that needs no payload, retries or lease (a fold that fails leaves the deltas,
 * still summed on read, to the next turn).
 */
export function registerCounterFolding(app: FastifyInstance, db: Db, runner: JobRunner, options: { intervalMs?: number; run?: boolean } = {}): void {
  const intervalMs = options.intervalMs ?? 2_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const fold = () => {
    if (running) return;
    running = (async () => {
      // A burst leaves more than one batch: fold until it is drained (or another folder has it).
      let folded = 0;
      let last: number;
      do {
        last = await foldCounters(db);
        folded += last;
      } while (last >= FOLD_BATCH);
      // The folded deltas are dead rows that every read of the view steps over in the index until
      // they are vacuumed (a dashboard read after folding 400,000 deltas took 27 ms, most of it stepping over them): the live
      // tables are a few rows, so vacuuming them now is cheap and keeps the reads short.
      if (folded >= VACUUM_AFTER) await vacuumCounterDeltas(db);
    })()
      .catch((error: unknown) => app.log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'folding counter deltas failed; retrying at the next turn'))
      .finally(() => {
        running = undefined;
      });
  };
  runner.addMaintenance('counter-deltas', () => foldCounters(db));
  if (options.run === false) return;
  app.addHook('onReady', async () => {
    timer = setInterval(fold, intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    await running;
  });
}
