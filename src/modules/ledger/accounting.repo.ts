import { type Selectable, sql } from 'kysely';
import type { PartnerTransfersTable } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';
import * as balances from './balances.repo.js';

// Read side of the partner ledger. Amounts come back as text and are turned into BigInt.

export interface AccountSum {
  account: string;
  agreement_id: number | null;
  currency: string;
  total: bigint;
}

const sums = (rows: Array<{ account: string; agreement_id: number | null; currency: string; total: string }>): AccountSum[] =>
  rows.map((r) => ({ account: r.account, agreement_id: r.agreement_id, currency: r.currency.trim(), total: BigInt(r.total) }));

/**
 * Every account balance of a workspace: the balance snapshot plus the entries after its horizon
 * (balances.repo.ts), equal to the sum of every entry (the ledger stays the only source of truth).
 * `unfolded` says how far the snapshot is behind, so the caller can ask for a fold.
 */
export async function workspaceBalances(db: Executor, workspaceId: number): Promise<{ sums: AccountSum[]; unfolded: bigint }> {
  const { rows, unfolded } = await balances.workspaceSums(db, workspaceId);
  return { sums: sums(rows), unfolded };
}

/** A recipient's balances, across every workspace they have agreements with: snapshot plus tail, as above. */
export async function recipientBalances(db: Executor, recipientId: number): Promise<{ sums: AccountSum[]; unfolded: bigint }> {
  const { rows, unfolded } = await balances.recipientSums(db, recipientId);
  return { sums: sums(rows), unfolded };
}

export interface AllocatedSum {
  party: string;
  agreement_id: number | null;
  currency: string;
  basis: string;
  allocated: bigint;
  reversed: bigint;
}

/** What the saved splits gave each party (and refunds took back), per currency and basis. */
export async function allocatedTotals(db: Executor, where: { workspaceId: number } | { agreementIds: number[] }): Promise<AllocatedSum[]> {
  const filter = 'workspaceId' in where ? sql`p.workspace_id = ${where.workspaceId}` : sql`p.agreement_id = any(${where.agreementIds}::int[])`;
  const result = await sql<{ party: string; agreement_id: number | null; currency: string; basis: string; allocated: string; reversed: string }>`
    select p.party, p.agreement_id, a.currency, a.basis, sum(p.amount)::text as allocated, sum(p.reversed)::text as reversed
    from partner_allocation_parts p join partner_allocations a on a.workspace_id = p.workspace_id and a.id = p.allocation_id
    where ${filter} group by p.party, p.agreement_id, a.currency, a.basis`.execute(db);
  return result.rows.map((r) => ({ ...r, currency: r.currency.trim(), allocated: BigInt(r.allocated), reversed: BigInt(r.reversed) }));
}

export interface AllocationRow {
  id: number;
  order_item_id: number;
  product_id: number;
  currency: string;
  basis: string;
  proceeds: string;
  platform_fee: string;
  processing_fee: string;
  refunded: string;
  referral_agreement_id: number | null;
  created_at: Date;
  parts: Array<{ party: string; agreement_id: number | null; rate_bps: number | null; amount: string; reversed: string }>;
}

export async function listAllocations(db: Executor, workspaceId: number, page: number, pageSize: number, refundedOnly: boolean): Promise<{ rows: AllocationRow[]; total: number }> {
  const refunded = refundedOnly ? sql`and a.refunded > 0` : sql``;
  const [rows, count] = await Promise.all([
    sql<AllocationRow>`
      select a.id, a.order_item_id, a.product_id, a.currency, a.basis, a.proceeds::text, a.platform_fee::text, a.processing_fee::text, a.refunded::text,
             a.referral_agreement_id, a.created_at,
             (select json_agg(json_build_object('party', p.party, 'agreement_id', p.agreement_id, 'rate_bps', p.rate_bps, 'amount', p.amount::text, 'reversed', p.reversed::text) order by p.position)
                from partner_allocation_parts p where p.workspace_id = a.workspace_id and p.allocation_id = a.id) as parts
      from partner_allocations a where a.workspace_id = ${workspaceId} ${refunded}
      order by a.id desc limit ${pageSize} offset ${(page - 1) * pageSize}`.execute(db),
    sql<{ n: number }>`select count(*)::int as n from partner_allocations a where a.workspace_id = ${workspaceId} ${refunded}`.execute(db),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** A transfer in the accounting views: its amount as text (bigint), without where a run or the provider holds it. */
export type TransferRow = Omit<Selectable<PartnerTransfersTable>, 'destination_id' | 'provider_reference' | 'run_id' | 'lease_until' | 'attempts' | 'updated_at'>;

export async function listTransfers(db: Executor, where: { workspaceId: number } | { recipientId: number }, limit: number): Promise<TransferRow[]> {
  const filter = 'workspaceId' in where ? sql`workspace_id = ${where.workspaceId}` : sql`recipient_id = ${where.recipientId}`;
  const result = await sql<TransferRow>`
    select id, workspace_id, agreement_id, recipient_id, provider, livemode, currency, amount::text, status, failure_reason, created_at, submitted_at, settled_at
    from partner_transfers where ${filter} order by id desc limit ${limit}`.execute(db);
  return result.rows;
}

export async function workspaceAgreements(db: Executor, workspaceId: number) {
  return db.selectFrom('partner_agreements').select(['id', 'kind', 'name', 'status', 'recipient_id', 'recipient_email']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

export async function recipientAgreements(db: Executor, recipientId: number) {
  return db
    .selectFrom('partner_agreements as a')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .select(['a.id', 'a.kind', 'a.name', 'a.status', 'a.workspace_id', 'w.name as workspace_name'])
    .where('a.recipient_id', '=', recipientId)
    .where('w.partner_programs_enabled', '=', true)
    .orderBy('a.id')
    .execute();
}

export interface RecipientEntryRow {
  allocation_id: number;
  agreement_id: number;
  party: string;
  rate_bps: number | null;
  amount: string;
  reversed: string;
  currency: string;
  basis: string;
  proceeds: string;
  refunded: string;
  product_name: string;
  created_at: Date;
}

/**
 * The recipient's own parts of saved splits, newest first: one row per allocation and agreement of
 * theirs, never another party's part. `agreements` are (workspace, agreement) pairs the caller owns.
 */
export async function listRecipientEntries(
  db: Executor,
  agreements: Array<{ workspaceId: number; agreementId: number }>,
  page: number,
  pageSize: number,
  reversedOnly: boolean,
  currency: string | null,
): Promise<{ rows: RecipientEntryRow[]; total: number }> {
  if (agreements.length === 0) return { rows: [], total: 0 };
  const own = sql`unnest(${agreements.map((a) => a.workspaceId)}::int[], ${agreements.map((a) => a.agreementId)}::int[]) as o(workspace_id, agreement_id)`;
  const reversed = sql`${reversedOnly ? sql`and p.reversed > 0` : sql``} ${currency === null ? sql`` : sql`and a.currency = ${currency}`}`;
  const [rows, count] = await Promise.all([
    sql<RecipientEntryRow>`
      select a.id as allocation_id, p.agreement_id, p.party, p.rate_bps, p.amount::text, p.reversed::text, a.currency, a.basis,
             a.proceeds::text, a.refunded::text, pr.name as product_name, a.created_at
      from ${own}
      join partner_allocation_parts p on p.workspace_id = o.workspace_id and p.agreement_id = o.agreement_id
      join partner_allocations a on a.workspace_id = p.workspace_id and a.id = p.allocation_id
      join products pr on pr.workspace_id = a.workspace_id and pr.id = a.product_id
      where true ${reversed}
      order by a.created_at desc, a.id desc, p.agreement_id limit ${pageSize} offset ${(page - 1) * pageSize}`.execute(db),
    sql<{ n: number }>`
      select count(*)::int as n from ${own}
      join partner_allocation_parts p on p.workspace_id = o.workspace_id and p.agreement_id = o.agreement_id
      join partner_allocations a on a.workspace_id = p.workspace_id and a.id = p.allocation_id
      where true ${reversed}`.execute(db),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}
