import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { AGREEMENT_LIVE_JOB } from '../partners/partners.service.js';
import { PROVIDER_CONFIRM_JOB } from '../payouts/sandbox-provider.js';
import { PURCHASES_RECORDED_JOB } from '../purchases/purchases.service.js';
import { allocateExternalSales, releasePending } from './ledger.service.js';
import type { Transfers } from './transfers.service.js';

/** A payout run as a job (`{ livemode }`); `patchbay payouts run` runs the same thing directly. */
export const PAYOUT_RUN_JOB = 'payouts.run';

/** The ledger's reactions to other modules' events. Each handler is idempotent (a repeat finds nothing left to move). */
export function registerLedgerJobs(runner: JobRunner, db: Db, transfers: Transfers): void {
  runner.register(AGREEMENT_LIVE_JOB, async (job) => {
    const { agreementId } = job.payload as { agreementId: number };
    const released = await inTransaction(db, (tx) => releasePending(tx, job.workspaceId!, agreementId));
    return { released: released.toString() };
  });
  runner.register(PROVIDER_CONFIRM_JOB, async (job) => {
    const { transferId, outcome } = job.payload as { transferId: number; outcome: 'paid' | 'failed' };
    return { status: await transfers.confirm(transferId, outcome, outcome === 'failed' ? 'the provider reported the transfer failed' : null) };
  });
  runner.register(PURCHASES_RECORDED_JOB, async (job) => ({ allocated: await allocateExternalSales(db, job.workspaceId!) }));
  runner.register(PAYOUT_RUN_JOB, async (job) => transfers.run((job.payload as { livemode?: boolean }).livemode === true));
}
