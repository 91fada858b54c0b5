import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';

/**
 * Announced when an agreement may have become live (the second live consent, a resumption): the
 * ledger's handler (`ledger.jobs.ts`) makes what accrued as pending payable. This module never books money.
 */
export const AgreementLiveJob = defineJob('partners.agreement-live', Type.Object({ agreementId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }));
