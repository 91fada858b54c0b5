import { Type } from '@sinclair/typebox';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { defineJob } from '../../platform/jobs/define-job.js';
import { type JobRunner, workspaceOf } from '../../platform/jobs/runner.js';
import { AgreementLiveJob } from '../partners/index.js';
import { ProviderConfirmJob } from '../payouts/index.js';
import { PurchasesRecordedJob } from '../purchases/index.js';
import { FoldBalancesJob, foldBalances } from './balances.service.js';
import { allocateExternalSales, releasePending } from './ledger.service.js';
import type { Transfers } from './transfers.service.js';

/**
 * A payout run as a job (`{ livemode }`); `patchbay payouts run` runs the same thing directly.
 * Transfers a dead run left behind are finished by the next run (see Transfers), not by a
 * background task: only a run sends money, so payouts stopped by stopping the runs stay stopped.
 */
export const PayoutRunJob = defineJob('payouts.run', Type.Object({ livemode: Type.Optional(Type.Boolean()) }, { additionalProperties: false }));

/** The ledger's reactions to other modules' events. Each handler is idempotent (a repeat finds nothing left to move). */
export function registerLedgerJobs(runner: JobRunner, db: Db, transfers: Transfers): void {
  runner.handle(AgreementLiveJob, async (job) => {
    const released = await inTransaction(db, (tx) => releasePending(tx, workspaceOf(job), job.payload.agreementId));
    return { released: released.toString() };
  });
  runner.handle(ProviderConfirmJob, async ({ payload: { transferId, outcome, providerReference } }) => {
    return { status: await transfers.confirm(transferId, outcome, outcome === 'failed' ? 'the provider reported the transfer failed' : null, providerReference) };
  });
  runner.handle(PurchasesRecordedJob, async (job) => ({ allocated: await allocateExternalSales(db, workspaceOf(job)) }));
  runner.handle(PayoutRunJob, async (job) => transfers.run(job.payload.livemode === true));
  // Balance snapshots: folded when a read finds the tail long (balances.service.ts), and at least hourly. The
  // maintenance runs where the runner claims jobs, so it waits at most 1 s for older transactions to end (and
  // otherwise leaves the fold to the next read's job or hour) rather than hold up the claims.
  runner.handle(FoldBalancesJob, async () => foldBalances(db));
  runner.addMaintenance('ledger-balance-snapshots', () => foldBalances(db, { waitMs: 1_000 }));
}
