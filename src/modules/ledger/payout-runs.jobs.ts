import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';
import type { JobRunner } from '../../platform/jobs/runner.js';

/**
 * A payout run asked for from the console, run by the server's job runner. A failed attempt is
 * tried again soon (a run is safe to repeat: it finishes what the previous one left); after three
 * the run is `failed`.
 */
export const PAYOUT_CONSOLE_RUN = defineJob('payouts.console-run', Type.Object({ payoutRunId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), {
  maxAttempts: 3,
  backoffMs: () => 30_000,
});

/** What the handler needs of the payout runs (PayoutRuns in payout-runs.service.ts, which queues this job: typed here by shape, so the two files do not import each other). */
export interface PayoutRunWorker {
  runJob(payoutRunId: number, lastAttempt: boolean): Promise<unknown>;
}

export function registerPayoutRunJobs(runner: JobRunner, runs: PayoutRunWorker): void {
  runner.handle(PAYOUT_CONSOLE_RUN, (job) => runs.runJob(job.payload.payoutRunId, job.attempt >= job.maxAttempts));
}
