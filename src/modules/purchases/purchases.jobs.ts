import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';

/**
 * Announced after purchases collected elsewhere (imports) are recorded, for the workspace the job
 * is queued for: the partner ledger's handler (`ledger.jobs.ts`) estimates their shares.
 */
export const PurchasesRecordedJob = defineJob('purchases.recorded', Type.Object({ source: Type.Literal('import') }, { additionalProperties: false }));
