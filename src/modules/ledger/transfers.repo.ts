import { type Selectable, sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { PartnerTransfersTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import { payableSums } from './balances.repo.js';

// Queries of partner transfers. Transfers are service-wide (payout runs and provider confirmations
// have no request scope); every row carries its workspace, and the operator's views name it.

export type TransferStatus = PartnerTransfersTable['status'];

/** A transfer as the run hands it to its provider: with the destination account it was reserved for. */
export type TransferInHand = Pick<Selectable<PartnerTransfersTable>, 'id' | 'workspace_id' | 'agreement_id' | 'provider' | 'livemode' | 'currency' | 'amount' | 'status'> & {
  account_ref: string;
};

const IN_HAND = sql`t.id, t.workspace_id, t.agreement_id, t.provider, t.livemode, t.currency, t.amount::text, t.status, d.account_ref`;

/**
 * Payable balances at or above the minimum: the whole service's, or one workspace's (a run a
 * workspace asked for). From the balance snapshot plus the entries after its horizon, in one
 * statement (balances.repo.ts): the same figure as the sum of every entry. It is a candidate
 * list only: the run locks each agreement and sums its buckets again before reserving.
 */
export async function payableBalances(db: Db, minimum: bigint, workspaceId?: number) {
  return payableSums(db, minimum, workspaceId);
}

export async function hasTransferInFlight(tx: Tx, agreementId: number, currency: string): Promise<boolean> {
  const row = await tx
    .selectFrom('partner_transfers')
    .select('id')
    .where('agreement_id', '=', agreementId)
    .where('currency', '=', currency)
    .where('status', 'in', ['reserved', 'submitted', 'reconciliation_required'])
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertReservedTransfer(
  tx: Tx,
  t: { workspaceId: number; agreementId: number; recipientId: number; destinationId: number; provider: string; livemode: boolean; currency: string; amount: bigint; runId: string; leaseSeconds: number },
): Promise<number> {
  const inserted = await sql<{ id: number }>`
    insert into partner_transfers (workspace_id, agreement_id, recipient_id, destination_id, provider, livemode, currency, amount, status, run_id, lease_until, attempts)
    values (${t.workspaceId}, ${t.agreementId}, ${t.recipientId}, ${t.destinationId}, ${t.provider}, ${t.livemode}, ${t.currency}, ${t.amount.toString()}::bigint,
            'reserved', ${t.runId}, now() + make_interval(secs => ${t.leaseSeconds}), 1)
    returning id`.execute(tx);
  return Number(inserted.rows[0]!.id);
}

export async function transferInHand(db: Executor, transferId: number): Promise<TransferInHand> {
  const result = await sql<TransferInHand>`
    select ${IN_HAND} from partner_transfers t join payout_destinations d on d.id = t.destination_id where t.id = ${transferId}`.execute(db);
  return { ...result.rows[0]!, id: Number(result.rows[0]!.id) };
}

/**
 * Unfinished transfers of a mode that no live run holds: reserved or in reconciliation with
 * their lease run out (or never set: rows from before leases), and submitted ones whose wait for
 * the provider's confirmation has run out.
 */
export async function unattendedTransfers(db: Db, livemode: boolean, limit: number, workspaceId?: number) {
  const result = await sql<{ id: number; agreement_id: number; currency: string; provider: 'card' | 'wallet' }>`
    select id, agreement_id, currency, provider from partner_transfers
    where livemode = ${livemode} ${workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`} and status in ('reserved', 'submitted', 'reconciliation_required')
      and (lease_until is null or lease_until < now())
    order by id limit ${limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, id: Number(r.id), currency: r.currency.trim() }));
}

/**
 * Takes an unattended transfer over for `runId`, in one statement: of two runs racing for it, the
 * second finds the new lease and gets nothing. Only the transfer row is locked, so the lock order
 * (agreement, then transfer) of the other writers cannot deadlock with it.
 */
export async function claimTransfer(db: Db, transferId: number, runId: string, leaseSeconds: number): Promise<TransferInHand | null> {
  const result = await sql<TransferInHand>`
    update partner_transfers t set run_id = ${runId}, lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = t.attempts + 1, updated_at = now()
    from payout_destinations d
    where t.id = ${transferId} and d.id = t.destination_id
      and t.status in ('reserved', 'submitted', 'reconciliation_required') and (t.lease_until is null or t.lease_until < now())
    returning ${IN_HAND}`.execute(db);
  const row = result.rows[0];
  return row ? { ...row, id: Number(row.id) } : null;
}

/**
 * The provider accepted the payout (its word, whoever asked): recorded unless the transfer has
 * been settled meanwhile. The lease becomes the wait for the provider's confirmation, after
 * which a run asks the provider.
 */
export async function recordSubmitted(db: Executor, transferId: number, providerReference: string, waitSeconds: number): Promise<boolean> {
  const result = await sql`
    update partner_transfers set status = 'submitted', provider_reference = ${providerReference}, submitted_at = coalesce(submitted_at, now()),
      run_id = null, lease_until = now() + make_interval(secs => ${waitSeconds}), failure_reason = null, updated_at = now()
    where id = ${transferId} and status in ('reserved', 'submitted', 'reconciliation_required')`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * The outcome is unknown: released by its run (an operator may settle it now), and asked about
 * again by the first run after `retrySeconds`, so a provider that just failed is not asked again
 * by every run in a row.
 */
export async function recordOutcomeUnknown(db: Executor, transferId: number, reason: string, retrySeconds: number): Promise<boolean> {
  const result = await sql`
    update partner_transfers set status = 'reconciliation_required', failure_reason = ${reason.slice(0, 500)}, run_id = null,
      lease_until = now() + make_interval(secs => ${retrySeconds}), updated_at = now()
    where id = ${transferId} and status in ('reserved', 'submitted', 'reconciliation_required')`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

export async function lockTransfer(tx: Tx, transferId: number) {
  const result = await sql<{ status: TransferStatus; currency: string; amount: string; recipient_id: number; provider: 'card' | 'wallet'; livemode: boolean }>`
    select status, currency, amount::text, recipient_id, provider, livemode from partner_transfers where id = ${transferId} for update`.execute(tx);
  return result.rows[0];
}

export async function transferHead(db: Executor, transferId: number) {
  return db.selectFrom('partner_transfers').select(['workspace_id', 'agreement_id']).where('id', '=', transferId).executeTakeFirst();
}

export async function recordSettled(tx: Tx, transferId: number, outcome: 'paid' | 'failed', reason: string | null, providerReference: string | null): Promise<void> {
  await sql`
    update partner_transfers set status = ${outcome}, failure_reason = ${reason}, provider_reference = coalesce(provider_reference, ${providerReference}),
      run_id = null, lease_until = null, settled_at = now(), updated_at = now()
    where id = ${transferId}`.execute(tx);
}

/** A transfer as the operator sees it: every column but the destination, with where its provider and its runs stand. */
export type TransferForOperator = Omit<Selectable<PartnerTransfersTable>, 'destination_id'>;

const FOR_OPERATOR = sql`id, workspace_id, agreement_id, recipient_id, provider, livemode, currency, amount::text, status, provider_reference, failure_reason, attempts, run_id, lease_until,
  created_at, submitted_at, settled_at, updated_at`;

export async function transfersNeedingReconciliation(db: Db, filter: { workspaceId?: number | undefined }, limit: number): Promise<TransferForOperator[]> {
  const result = await sql<TransferForOperator>`
    select ${FOR_OPERATOR} from partner_transfers
    where status = 'reconciliation_required' ${filter.workspaceId === undefined ? sql`` : sql`and workspace_id = ${filter.workspaceId}`}
    order by id limit ${limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export async function transferForOperator(db: Executor, transferId: number): Promise<TransferForOperator | undefined> {
  const result = await sql<TransferForOperator>`select ${FOR_OPERATOR} from partner_transfers where id = ${transferId}`.execute(db);
  const row = result.rows[0];
  return row ? { ...row, id: Number(row.id) } : undefined;
}
