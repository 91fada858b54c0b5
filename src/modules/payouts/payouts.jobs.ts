import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';

/**
 * A payout provider's report on a transfer, as its webhook would deliver it (the sandbox queues it
 * when it accepts a payout); the ledger's handler (`ledger.jobs.ts`) confirms or fails the transfer.
 */
export const ProviderConfirmJob = defineJob(
  'payouts.provider-confirm',
  Type.Object(
    {
      transferId: Type.Integer({ minimum: 1 }),
      providerReference: Type.String({ minLength: 1, maxLength: 200 }),
      outcome: Type.Union([Type.Literal('paid'), Type.Literal('failed')]),
    },
    { additionalProperties: false },
  ),
);
