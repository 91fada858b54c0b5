import { Type } from '@sinclair/typebox';
import { Id, List } from '../../platform/http/bounded.js';
import { defineJob } from '../../platform/jobs/define-job.js';

/**
 * Queued when a Paddle customer event arrives for which failed sales were waiting (their
 * transaction.completed came first): the handler (index.ts) re-processes them. Idempotent: an
 * event that is no longer failed is left alone.
 */
export const ReprocessWaitingJob = defineJob(
  'checkout-connections.reprocess-waiting',
  Type.Object({ connectionId: Id(), eventIds: List(Type.Integer({ minimum: 1 }), 1_000, { minItems: 1 }) }, { additionalProperties: false }),
);
