import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import type { TransferRow } from './accounting.repo.js';

// Payout runs asked for from the console: one row per request, in its workspace. The run itself
// (Transfers.run) works on transfers; this table only says who asked, when it ran and how it went.

/** What a finished run keeps: the run's id and, of what it did, only this workspace's part. */
export interface StoredRunResult {
  run_id: string;
  resumed_transfer_ids: number[];
  skipped: Array<{ agreement_id: number; currency: string; reason: string; transfer_id?: number }>;
}

const RUN_COLUMNS = ['r.id', 'r.workspace_id', 'r.livemode', 'r.state', 'r.result', 'r.failure', 'r.created_at', 'r.started_at', 'r.finished_at', 'r.requested_by', 'a.email as requested_by_email'] as const;

function runs(db: Executor) {
  return db.selectFrom('payout_runs as r').leftJoin('accounts as a', 'a.id', 'r.requested_by').select(RUN_COLUMNS);
}

export type RunRecord = NonNullable<Awaited<ReturnType<typeof findRun>>>;

export async function findRun(db: Executor, scope: Scope, runId: number) {
  return runs(db).where('r.workspace_id', '=', scope.workspaceId).where('r.id', '=', runId).executeTakeFirst();
}

/**
 * A new queued run, or nothing when the workspace already has one of this mode queued or running
 * (the partial unique index decides, also between concurrent requests).
 */
export async function insertRun(tx: Tx, scope: Scope, livemode: boolean): Promise<number | null> {
  const inserted = await sql<{ id: number }>`
    INSERT INTO payout_runs (workspace_id, requested_by, livemode) VALUES (${scope.workspaceId}, ${scope.accountId}, ${livemode})
    ON CONFLICT (workspace_id, livemode) WHERE state IN ('queued', 'running') DO NOTHING
    RETURNING id`.execute(tx);
  return inserted.rows[0]?.id ?? null;
}

export async function activeRun(db: Executor, scope: Scope, livemode: boolean) {
  return runs(db).where('r.workspace_id', '=', scope.workspaceId).where('r.livemode', '=', livemode).where('r.state', 'in', ['queued', 'running']).executeTakeFirst();
}

/** Marks a run running (again, after a retry); nothing when it has finished. */
export async function startRun(db: Db, runId: number) {
  return db
    .updateTable('payout_runs')
    .set({ state: 'running', started_at: sql`coalesce(started_at, now())` })
    .where('id', '=', runId)
    .where('state', 'in', ['queued', 'running'])
    .returning(['id', 'workspace_id', 'livemode'])
    .executeTakeFirst();
}

export async function finishRun(db: Db, runId: number, outcome: { state: 'succeeded'; result: StoredRunResult } | { state: 'failed'; failure: string }): Promise<void> {
  await db
    .updateTable('payout_runs')
    .set({
      state: outcome.state,
      result: outcome.state === 'succeeded' ? JSON.stringify(outcome.result) : null,
      failure: outcome.state === 'failed' ? outcome.failure.slice(0, 500) : null,
      finished_at: new Date(),
    })
    .where('id', '=', runId)
    .where('state', 'in', ['queued', 'running'])
    .execute();
}

/** Which of these agreements belong to the workspace. */
export async function agreementsOf(db: Executor, workspaceId: number, agreementIds: number[]): Promise<Set<number>> {
  if (agreementIds.length === 0) return new Set();
  const rows = await db.selectFrom('partner_agreements').where('workspace_id', '=', workspaceId).where('id', 'in', agreementIds).select('id').execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The transfers of a run in its workspace: those it took over (by id), and those reserved in its
 * mode while it ran (a run does not keep its id on the transfers it finishes).
 */
export async function transfersOfRun(db: Executor, run: RunRecord, resumedIds: number[], limit: number) {
  if (run.started_at === null && resumedIds.length === 0) return [];
  const until = run.finished_at ?? new Date();
  const result = await sql<Omit<TransferRow, 'workspace_id' | 'recipient_id'>>`
    SELECT id, agreement_id, provider, livemode, currency, amount::text, status, failure_reason, created_at, submitted_at, settled_at
    FROM partner_transfers
    WHERE workspace_id = ${run.workspace_id} AND livemode = ${run.livemode}
      AND (id = ANY(${resumedIds}::int[]) ${run.started_at === null ? sql`` : sql`OR (created_at >= ${run.started_at} AND created_at <= ${until})`})
    ORDER BY id LIMIT ${limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, id: Number(r.id) }));
}
