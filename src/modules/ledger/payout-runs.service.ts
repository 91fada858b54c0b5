import { writeAudit } from '../../platform/audit/audit.repo.js';
import { AuthErrors } from '../../platform/auth/policy.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { transferJson } from './accounting.service.js';
import { PAYOUT_CONSOLE_RUN } from './payout-runs.jobs.js';
import * as repo from './payout-runs.repo.js';
import type { PayoutRunResult, Transfers } from './transfers.service.js';

/** Transfers listed with a run, at most. */
export const RUN_TRANSFERS_LISTED = 1000;

const runJson = async (db: Db, run: repo.RunRecord) => {
  const result = run.result as repo.StoredRunResult | null;
  const transfers = await repo.transfersOfRun(db, run, result?.resumed_transfer_ids ?? [], RUN_TRANSFERS_LISTED + 1);
  return {
    id: run.id,
    livemode: run.livemode,
    state: run.state,
    requested_by: run.requested_by === null ? null : { id: run.requested_by, email: run.requested_by_email ?? '' },
    created_at: run.created_at.toISOString(),
    started_at: run.started_at?.toISOString() ?? null,
    finished_at: run.finished_at?.toISOString() ?? null,
    failure: run.failure,
    transfers: transfers.slice(0, RUN_TRANSFERS_LISTED).map(transferJson),
    transfers_truncated: transfers.length > RUN_TRANSFERS_LISTED,
    skipped: result?.skipped ?? [],
  };
};

export type PayoutRunJson = Awaited<ReturnType<typeof runJson>>;

/**
 * Payout runs from the console. A request queues a job of the server's runner (so it works on the
 * embedded database while the server runs, which the CLI cannot), one run per workspace and mode
 * at a time; the job calls the ledger's payout run and keeps this workspace's part of its outcome.
 */
export class PayoutRuns {
  constructor(
    private readonly db: Db,
    private readonly transfers: Transfers,
  ) {}

  /** Queues a run, or answers the one of this mode already queued or running. Live mode is the owner's alone. */
  async request(scope: Scope, livemode: boolean): Promise<PayoutRunJson> {
    if (livemode && !scope.owner) throw new AppError(AuthErrors.OWNER_REQUIRED, 'Only the workspace owner may start a live payout run');
    const runId = await inTransaction(this.db, async (tx) => {
      const id = await repo.insertRun(tx, scope, livemode);
      if (id === null) return (await repo.activeRun(tx, scope, livemode))!.id;
      await PAYOUT_CONSOLE_RUN.enqueue(tx, { payoutRunId: id }, { workspaceId: scope.workspaceId });
      await writeAudit(tx, scope, { action: 'payouts.run_requested', subjectType: 'payout_run', subjectId: id, data: { livemode } });
      return id;
    });
    return this.get(scope, runId);
  }

  async get(scope: Scope, runId: number): Promise<PayoutRunJson> {
    const run = await repo.findRun(this.db, scope, runId);
    if (!run) throw notFound('Payout run');
    return runJson(this.db, run);
  }

  /** The job's work: the ledger's payout run, and this workspace's part of its outcome kept on the run. */
  async runJob(payoutRunId: number, lastAttempt: boolean) {
    const run = await repo.startRun(this.db, payoutRunId);
    if (!run) return { payoutRunId, state: 'finished before' };
    let result: PayoutRunResult;
    try {
      result = await this.transfers.run(run.livemode, { workspaceId: run.workspace_id });
    } catch (error) {
      if (lastAttempt) await repo.finishRun(this.db, payoutRunId, { state: 'failed', failure: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    // The run covers only this workspace's agreements (never another workspace's money).
    const agreements = await repo.agreementsOf(this.db, run.workspace_id, [...new Set([...result.resumed, ...result.skipped].map((r) => r.agreement_id))]);
    await repo.finishRun(this.db, payoutRunId, {
      state: 'succeeded',
      result: {
        run_id: result.run_id,
        resumed_transfer_ids: result.resumed.filter((r) => agreements.has(r.agreement_id)).map((r) => r.transfer_id),
        skipped: result.skipped.filter((s) => agreements.has(s.agreement_id)),
      },
    });
    return { payoutRunId, state: 'succeeded', run_id: result.run_id };
  }
}
