import type { Db } from '../../platform/db/database.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { type Deliverer, WebhookDeliveryJob } from './webhooks.delivery.js';
import * as repo from './webhooks.repo.js';

/** Events (and their delivery logs) are kept this long. */
export const EVENT_RETENTION_DAYS = 30;

/**
 * The delivery job's handler, on the webhooks' own runner: a slow receiver holds one of its slots,
 * never one of the e-mail or import jobs'. The lease outlasts the request timeout by 5 s and the
 * runner renews it while an attempt runs; a worker that dies mid-attempt leaves the job to be
 * taken over when the lease ends (crash.test.ts waits for that).
 */
export function registerWebhookJobs(runner: JobRunner, db: Db, deliverer: Deliverer, timeoutMs: number): void {
  runner.handle(WebhookDeliveryJob, (job) => deliverer.attempt(job.payload.deliveryId, job.payload.schedule), { leaseSeconds: Math.ceil(timeoutMs / 1000) + 5 });
  runner.addMaintenance('webhook-events', () => repo.deleteOldEvents(db, EVENT_RETENTION_DAYS));
}
