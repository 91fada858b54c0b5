import { sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import { MANAGED_LIVE_POLICY_VERSION } from '../partners/index.js';
import type { Basis, PartnerBuckets, PartyKind } from './split.js';

// Amounts cross the driver as text and become BigInt here: PostgreSQL bigint is never read as a JS number.

export type LedgerAccount =
  | 'checkout_clearing'
  | 'platform_share'
  | 'developer_earnings'
  | 'partner_pending'
  | 'partner_payable'
  | 'partner_recovery'
  | 'external_estimate'
  | 'external_offset'
  | 'transfer_in_flight'
  | 'paid_out';

export type LedgerKind = 'sale' | 'refund' | 'release' | 'transfer_reserved' | 'transfer_paid' | 'transfer_failed';

export interface Entry {
  account: LedgerAccount;
  agreementId: number | null;
  recipientId: number | null;
  currency: string;
  amount: bigint;
}

/** Writes one ledger transaction and its non-zero entries; the database checks at commit that they balance. */
export async function insertTransaction(
  tx: Tx,
  t: { workspaceId: number; kind: LedgerKind; allocationId?: number | null; agreementId?: number | null; transferId?: number | null },
  entries: Entry[],
): Promise<number | null> {
  const rows = entries.filter((e) => e.amount !== 0n);
  if (rows.length === 0) return null;
  const result = await sql<{ id: number }>`
    with t as (
      insert into ledger_transactions (workspace_id, kind, allocation_id, agreement_id, transfer_id)
      values (${t.workspaceId}, ${t.kind}, ${t.allocationId ?? null}, ${t.agreementId ?? null}, ${t.transferId ?? null})
      returning id
    ), e as (
      insert into ledger_entries (transaction_id, workspace_id, account, agreement_id, recipient_id, currency, amount)
      select t.id, ${t.workspaceId}, x.account, x.agreement_id, x.recipient_id, x.currency, x.amount
      from t, unnest(${rows.map((r) => r.account)}::text[], ${rows.map((r) => r.agreementId)}::int[], ${rows.map((r) => r.recipientId)}::int[],
                     ${rows.map((r) => r.currency)}::text[], ${rows.map((r) => r.amount.toString())}::bigint[])
        as x(account, agreement_id, recipient_id, currency, amount)
    )
    select id from t`.execute(tx);
  return result.rows[0]!.id;
}

export interface AgreementForMoney {
  id: number;
  kind: 'affiliate' | 'collaborator';
  status: 'accepted' | 'active' | 'paused';
  recipient_id: number;
  rate_bps: number;
  product_rate_bps: number | null;
  include_reseller_sales: boolean;
  attribution_window_days: number;
  live: boolean;
}

const liveExpression = sql<boolean>`(a.status = 'active'
  and exists (select 1 from partner_consents c where c.agreement_id = a.id and c.party = 'developer' and c.terms_version = a.accepted_terms_version and c.policy_version = ${MANAGED_LIVE_POLICY_VERSION})
  and exists (select 1 from partner_consents c where c.agreement_id = a.id and c.party = 'recipient' and c.terms_version = a.accepted_terms_version and c.policy_version = ${MANAGED_LIVE_POLICY_VERSION}))`;

/**
 * The accepted agreements that share in a sale of `productId` at `at`: the collaborators of the
 * product and, when named, the referring affiliate. Locked (in id order, so concurrent writers
 * never deadlock) because their balances are read and written next.
 */
export const lockAgreementsForSale = (tx: Tx, workspaceId: number, productId: number, affiliateId: number | null, at: Date) => agreementsForSale(tx, workspaceId, productId, affiliateId, at, true);

export async function agreementsForSale(db: Executor, workspaceId: number, productId: number, affiliateId: number | null, at: Date, lock: boolean): Promise<AgreementForMoney[]> {
  const result = await sql<AgreementForMoney>`
    select a.id, a.kind, a.status, a.recipient_id, t.rate_bps, tp.rate_bps as product_rate_bps, t.include_reseller_sales, t.attribution_window_days,
           ${liveExpression} as live
    from partner_agreements a
    join partner_terms t on t.agreement_id = a.id and t.version = a.accepted_terms_version
    left join partner_term_products tp on tp.agreement_id = a.id and tp.version = t.version and tp.product_id = ${productId}
    where a.workspace_id = ${workspaceId} and a.status in ('accepted', 'active', 'paused') and t.effective_from <= ${at}
      and ((a.kind = 'collaborator' and tp.product_id is not null) or (a.kind = 'affiliate' and a.id = ${affiliateId ?? 0}))
    order by a.id
    ${lock ? sql`for update of a` : sql``}`.execute(db);
  return result.rows;
}

/** One sale's part in `lockAgreementsForSales`: its product, the affiliate its referral named, its time. */
export interface SaleAgreementKey {
  productId: number;
  affiliateId: number | null;
  at: Date;
}

/**
 * `lockAgreementsForSale` for several sales at once: per sale (by position), the accepted
 * agreements that share in it, by the same rules. All are locked in one statement, in id order.
 */
export async function lockAgreementsForSales(tx: Tx, workspaceId: number, sales: SaleAgreementKey[]): Promise<AgreementForMoney[][]> {
  const out: AgreementForMoney[][] = sales.map(() => []);
  if (sales.length === 0) return out;
  const result = await sql<AgreementForMoney & { sale: number }>`
    select x.sale::int as sale, a.id, a.kind, a.status, a.recipient_id, t.rate_bps, tp.rate_bps as product_rate_bps, t.include_reseller_sales, t.attribution_window_days,
           ${liveExpression} as live
    from unnest(${sales.map((s) => s.productId)}::int[], ${sales.map((s) => s.affiliateId ?? 0)}::int[], ${sales.map((s) => s.at)}::timestamptz[])
           with ordinality as x(product_id, affiliate_id, at, sale)
    join partner_agreements a on a.workspace_id = ${workspaceId} and a.status in ('accepted', 'active', 'paused')
    join partner_terms t on t.agreement_id = a.id and t.version = a.accepted_terms_version and t.effective_from <= x.at
    left join partner_term_products tp on tp.agreement_id = a.id and tp.version = t.version and tp.product_id = x.product_id
    where (a.kind = 'collaborator' and tp.product_id is not null) or (a.kind = 'affiliate' and a.id = x.affiliate_id)
    order by a.id, x.sale
    for update of a`.execute(tx);
  for (const { sale, ...agreement } of result.rows) out[sale - 1]!.push(agreement);
  return out;
}

export async function findAgreementForPreview(db: Executor, workspaceId: number, agreementId: number) {
  return db.selectFrom('partner_agreements').select(['id', 'kind', 'status']).where('workspace_id', '=', workspaceId).where('id', '=', agreementId).executeTakeFirst();
}

/** The agreement (locked) with whether it is live: active, and both parties consented to its accepted terms. */
export async function lockAgreement(tx: Tx, workspaceId: number, agreementId: number): Promise<{ id: number; recipient_id: number | null; live: boolean } | null> {
  const result = await sql<{ id: number; recipient_id: number | null; live: boolean }>`
    select a.id, a.recipient_id, ${liveExpression} as live from partner_agreements a
    where a.workspace_id = ${workspaceId} and a.id = ${agreementId} for update`.execute(tx);
  return result.rows[0] ?? null;
}

/** Pending, payable and owed (recovery) balances of one agreement, per currency. */
export async function partnerBuckets(db: Executor, agreementId: number, currency?: string): Promise<Map<string, PartnerBuckets>> {
  const result = await sql<{ currency: string; account: string; total: string }>`
    select currency, account, sum(amount)::text as total from ledger_entries
    where agreement_id = ${agreementId} and account in ('partner_pending', 'partner_payable', 'partner_recovery')
      ${currency ? sql`and currency = ${currency}` : sql``}
    group by currency, account`.execute(db);
  const out = new Map<string, PartnerBuckets>();
  for (const r of result.rows) {
    const b = out.get(r.currency.trim()) ?? { pending: 0n, payable: 0n, recovery: 0n };
    const total = BigInt(r.total);
    if (r.account === 'partner_pending') b.pending = total;
    else if (r.account === 'partner_payable') b.payable = total;
    else b.recovery = -total;
    out.set(r.currency.trim(), b);
  }
  return out;
}

/** `partnerBuckets` of several agreements in one currency each, in one statement: agreement id → buckets. */
export async function partnerBucketsOf(db: Executor, named: Array<{ agreementId: number; currency: string }>): Promise<Map<string, PartnerBuckets>> {
  const out = new Map<string, PartnerBuckets>();
  // Each agreement and currency once, however often the caller names it.
  const keys = [...new Map(named.map((k) => [bucketKey(k.agreementId, k.currency), k])).values()];
  if (keys.length === 0) return out;
  const result = await sql<{ agreement_id: number; currency: string; account: string; total: string }>`
    select e.agreement_id, e.currency, e.account, sum(e.amount)::text as total
    from unnest(${keys.map((k) => k.agreementId)}::int[], ${keys.map((k) => k.currency)}::text[]) as k(agreement_id, currency)
    join ledger_entries e on e.agreement_id = k.agreement_id and e.currency = k.currency
    where e.account in ('partner_pending', 'partner_payable', 'partner_recovery')
    group by e.agreement_id, e.currency, e.account`.execute(db);
  for (const r of result.rows) {
    const key = bucketKey(r.agreement_id, r.currency.trim());
    const b = out.get(key) ?? { pending: 0n, payable: 0n, recovery: 0n };
    const total = BigInt(r.total);
    if (r.account === 'partner_pending') b.pending = total;
    else if (r.account === 'partner_payable') b.payable = total;
    else b.recovery = -total;
    out.set(key, b);
  }
  return out;
}

/** The key of `partnerBucketsOf`'s answer. */
export const bucketKey = (agreementId: number, currency: string) => `${agreementId}:${currency}`;

export interface NewAllocation {
  orderItemId: number;
  productId: number;
  currency: string;
  basis: Basis;
  proceeds: bigint;
  platformFee: bigint;
  processingFee: bigint;
  referralAgreementId: number | null;
  referralVisitedAt: Date | null;
  parts: Array<{ party: PartyKind; agreementId: number | null; rateBps: number | null; amount: bigint }>;
}

/** Saves a sale's split; null when the item already has one (allocation is once per item). */
export async function insertAllocation(tx: Tx, workspaceId: number, a: NewAllocation): Promise<number | null> {
  // One statement: the allocation and its parts, or nothing when the item already has an allocation.
  const result = await sql<{ id: number }>`
    with a as (
      insert into partner_allocations (workspace_id, order_item_id, product_id, currency, basis, proceeds, platform_fee, processing_fee, referral_agreement_id, referral_visited_at)
      values (${workspaceId}, ${a.orderItemId}, ${a.productId}, ${a.currency}, ${a.basis}, ${a.proceeds.toString()}::bigint, ${a.platformFee.toString()}::bigint,
              ${a.processingFee.toString()}::bigint, ${a.referralAgreementId}, ${a.referralVisitedAt})
      on conflict (workspace_id, order_item_id) do nothing
      returning id
    ), p as (
      insert into partner_allocation_parts (allocation_id, workspace_id, position, party, agreement_id, rate_bps, amount)
      select a.id, ${workspaceId}, x.position, x.party, x.agreement_id, x.rate_bps, x.amount
      from a, unnest(${a.parts.map((_, i) => i)}::int[], ${a.parts.map((p) => p.party)}::text[], ${a.parts.map((p) => p.agreementId)}::int[],
                     ${a.parts.map((p) => p.rateBps)}::int[], ${a.parts.map((p) => p.amount.toString())}::bigint[])
        as x(position, party, agreement_id, rate_bps, amount)
    )
    select id from a`.execute(tx);
  return result.rows[0]?.id ?? null;
}

/**
 * `insertAllocation` for several items in one statement: the allocations and their parts; items
 * that already have an allocation are skipped. Answers order item id → the new allocation's id.
 */
export async function insertAllocations(tx: Tx, workspaceId: number, allocations: NewAllocation[]): Promise<Map<number, number>> {
  if (allocations.length === 0) return new Map();
  const col = <T>(f: (a: NewAllocation) => T) => allocations.map(f);
  const parts = allocations.flatMap((a) => a.parts.map((p, position) => ({ orderItemId: a.orderItemId, position, ...p })));
  const pcol = <T>(f: (p: (typeof parts)[number]) => T) => parts.map(f);
  const result = await sql<{ id: number; order_item_id: number }>`
    with a as (
      insert into partner_allocations (workspace_id, order_item_id, product_id, currency, basis, proceeds, platform_fee, processing_fee, referral_agreement_id, referral_visited_at)
      select ${workspaceId}, x.order_item_id, x.product_id, x.currency, x.basis, x.proceeds, x.platform_fee, x.processing_fee, x.referral_agreement_id, x.referral_visited_at
      from unnest(${col((a) => a.orderItemId)}::int[], ${col((a) => a.productId)}::int[], ${col((a) => a.currency)}::text[], ${col((a) => a.basis)}::text[],
                  ${col((a) => a.proceeds.toString())}::bigint[], ${col((a) => a.platformFee.toString())}::bigint[], ${col((a) => a.processingFee.toString())}::bigint[],
                  ${col((a) => a.referralAgreementId)}::int[], ${col((a) => a.referralVisitedAt)}::timestamptz[])
        as x(order_item_id, product_id, currency, basis, proceeds, platform_fee, processing_fee, referral_agreement_id, referral_visited_at)
      on conflict (workspace_id, order_item_id) do nothing
      returning id, order_item_id
    ), p as (
      insert into partner_allocation_parts (allocation_id, workspace_id, position, party, agreement_id, rate_bps, amount)
      select a.id, ${workspaceId}, y.position, y.party, y.agreement_id, y.rate_bps, y.amount
      from unnest(${pcol((p) => p.orderItemId)}::int[], ${pcol((p) => p.position)}::int[], ${pcol((p) => p.party)}::text[], ${pcol((p) => p.agreementId)}::int[],
                  ${pcol((p) => p.rateBps)}::int[], ${pcol((p) => p.amount.toString())}::bigint[])
        as y(order_item_id, position, party, agreement_id, rate_bps, amount)
      join a on a.order_item_id = y.order_item_id
    )
    select id, order_item_id from a`.execute(tx);
  return new Map(result.rows.map((r) => [r.order_item_id, r.id]));
}

/**
 * `insertTransaction` for several allocations in one statement: one ledger transaction of `kind`
 * (a sale, or a refund's reversal) per allocation, with its non-zero entries (an allocation without any is skipped).
 */
export async function insertAllocationTransactions(tx: Tx, workspaceId: number, kind: 'sale' | 'refund', transactions: Array<{ allocationId: number; entries: Entry[] }>): Promise<void> {
  const kept = transactions.map((t) => ({ allocationId: t.allocationId, entries: t.entries.filter((e) => e.amount !== 0n) })).filter((t) => t.entries.length > 0);
  if (kept.length === 0) return;
  const rows = kept.flatMap((t) => t.entries.map((e) => ({ allocationId: t.allocationId, ...e })));
  const col = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f);
  await sql`
    with t as (
      insert into ledger_transactions (workspace_id, kind, allocation_id, agreement_id, transfer_id)
      select ${workspaceId}, ${kind}, x.allocation_id, null, null from unnest(${kept.map((t) => t.allocationId)}::bigint[]) with ordinality as x(allocation_id, n)
      order by x.n
      returning id, allocation_id
    )
    insert into ledger_entries (transaction_id, workspace_id, account, agreement_id, recipient_id, currency, amount)
    select t.id, ${workspaceId}, y.account, y.agreement_id, y.recipient_id, y.currency, y.amount
    from unnest(${col((r) => r.allocationId)}::bigint[], ${col((r) => r.account)}::text[], ${col((r) => r.agreementId)}::int[], ${col((r) => r.recipientId)}::int[],
                ${col((r) => r.currency)}::text[], ${col((r) => r.amount.toString())}::bigint[]) with ordinality as y(allocation_id, account, agreement_id, recipient_id, currency, amount, n)
    join t on t.allocation_id = y.allocation_id
    order by y.n`.execute(tx);
}

export interface AllocationForRefund {
  id: number;
  currency: string;
  basis: Basis;
  proceeds: bigint;
  refunded: bigint;
  parts: Array<{ position: number; party: PartyKind; agreement_id: number | null; amount: bigint; reversed: bigint }>;
}

export async function lockAllocationOfItem(tx: Tx, workspaceId: number, orderItemId: number): Promise<AllocationForRefund | null> {
  const head = await sql<{ id: number; currency: string; basis: Basis; proceeds: string; refunded: string }>`
    select id, currency, basis, proceeds::text, refunded::text from partner_allocations
    where workspace_id = ${workspaceId} and order_item_id = ${orderItemId} for update`.execute(tx);
  const a = head.rows[0];
  if (!a) return null;
  const parts = await sql<{ position: number; party: PartyKind; agreement_id: number | null; amount: string; reversed: string }>`
    select position, party, agreement_id, amount::text, reversed::text from partner_allocation_parts
    where workspace_id = ${workspaceId} and allocation_id = ${a.id} order by position`.execute(tx);
  return {
    id: a.id,
    currency: a.currency.trim(),
    basis: a.basis,
    proceeds: BigInt(a.proceeds),
    refunded: BigInt(a.refunded),
    parts: parts.rows.map((p) => ({ ...p, amount: BigInt(p.amount), reversed: BigInt(p.reversed) })),
  };
}

/** `lockAllocationOfItem` for several items in one statement each for the allocations (locked in id order) and their parts: item id → allocation. */
export async function lockAllocationsOfItems(tx: Tx, workspaceId: number, orderItemIds: number[]): Promise<Map<number, AllocationForRefund>> {
  const out = new Map<number, AllocationForRefund>();
  if (orderItemIds.length === 0) return out;
  const heads = await sql<{ id: number; order_item_id: number; currency: string; basis: Basis; proceeds: string; refunded: string }>`
    select id, order_item_id, currency, basis, proceeds::text, refunded::text from partner_allocations
    where workspace_id = ${workspaceId} and order_item_id = any(${orderItemIds}::int[]) order by id for update`.execute(tx);
  if (heads.rows.length === 0) return out;
  const parts = await sql<{ allocation_id: number; position: number; party: PartyKind; agreement_id: number | null; amount: string; reversed: string }>`
    select allocation_id, position, party, agreement_id, amount::text, reversed::text from partner_allocation_parts
    where workspace_id = ${workspaceId} and allocation_id = any(${heads.rows.map((h) => h.id)}::bigint[]) order by allocation_id, position`.execute(tx);
  for (const a of heads.rows) {
    out.set(a.order_item_id, {
      id: a.id,
      currency: a.currency.trim(),
      basis: a.basis,
      proceeds: BigInt(a.proceeds),
      refunded: BigInt(a.refunded),
      parts: parts.rows.filter((p) => p.allocation_id === a.id).map(({ allocation_id: _, ...p }) => ({ ...p, amount: BigInt(p.amount), reversed: BigInt(p.reversed) })),
    });
  }
  return out;
}

/** `recordReversal` for several allocations: two statements for all of them. */
export async function recordReversals(tx: Tx, workspaceId: number, reversals: Array<{ allocationId: number; refunded: bigint; reversedByPosition: bigint[] }>): Promise<void> {
  if (reversals.length === 0) return;
  await sql`
    update partner_allocations a set refunded = x.refunded
    from unnest(${reversals.map((r) => r.allocationId)}::bigint[], ${reversals.map((r) => r.refunded.toString())}::bigint[]) as x(id, refunded)
    where a.workspace_id = ${workspaceId} and a.id = x.id`.execute(tx);
  const parts = reversals.flatMap((r) => r.reversedByPosition.map((reversed, position) => ({ allocationId: r.allocationId, position, reversed })));
  await sql`
    update partner_allocation_parts p set reversed = x.reversed
    from unnest(${parts.map((p) => p.allocationId)}::bigint[], ${parts.map((p) => p.position)}::int[], ${parts.map((p) => p.reversed.toString())}::bigint[]) as x(allocation_id, position, reversed)
    where p.workspace_id = ${workspaceId} and p.allocation_id = x.allocation_id and p.position = x.position`.execute(tx);
}

/** `lockAgreement` for several agreements in one statement, in id order: id → its recipient and whether it is live. */
export async function lockAgreements(tx: Tx, workspaceId: number, agreementIds: number[]): Promise<Map<number, { recipient_id: number | null; live: boolean }>> {
  if (agreementIds.length === 0) return new Map();
  const result = await sql<{ id: number; recipient_id: number | null; live: boolean }>`
    select a.id, a.recipient_id, ${liveExpression} as live from partner_agreements a
    where a.workspace_id = ${workspaceId} and a.id = any(${[...new Set(agreementIds)].sort((x, y) => x - y)}::int[]) order by a.id for update`.execute(tx);
  return new Map(result.rows.map((r) => [r.id, { recipient_id: r.recipient_id, live: r.live }]));
}

export async function recordReversal(tx: Tx, workspaceId: number, allocationId: number, refunded: bigint, reversedByPosition: bigint[]): Promise<void> {
  await sql`update partner_allocations set refunded = ${refunded.toString()}::bigint where workspace_id = ${workspaceId} and id = ${allocationId}`.execute(tx);
  await sql`
    update partner_allocation_parts p set reversed = x.reversed
    from unnest(${reversedByPosition.map((_, i) => i)}::int[], ${reversedByPosition.map((r) => r.toString())}::bigint[]) as x(position, reversed)
    where p.workspace_id = ${workspaceId} and p.allocation_id = ${allocationId} and p.position = x.position`.execute(tx);
}

/** Transactions whose entries do not sum to zero per currency (the invariant check tests run after every test). */
export async function unbalancedTransactions(db: Executor): Promise<Array<{ transaction_id: number; currency: string; total: string }>> {
  const result = await sql<{ transaction_id: number; currency: string; total: string }>`
    select transaction_id, currency, sum(amount)::text as total from ledger_entries group by transaction_id, currency having sum(amount) <> 0`.execute(db);
  return result.rows;
}

/**
 * Sales collected elsewhere, after `afterId`, of products that a collaborator sharing in reseller
 * sales covers, and without an allocation yet.
 */
export async function unallocatedExternalItems(db: Executor, workspaceId: number, afterId: number, limit: number) {
  const result = await sql<{ id: number; product_id: number; currency: string; sale_price_cents: string; refunded_cents: string; purchased_at: Date }>`
    select i.id, i.product_id, i.currency, i.sale_price_cents::text, i.refunded_cents::text, i.purchased_at
    from order_items i
    where i.workspace_id = ${workspaceId} and i.id > ${afterId} and i.channel in ('import', 'external_store') and i.sale_price_cents > 0
      and i.product_id in (
        select tp.product_id from partner_agreements a
        join partner_terms t on t.agreement_id = a.id and t.version = a.accepted_terms_version and t.include_reseller_sales
        join partner_term_products tp on tp.agreement_id = a.id and tp.version = t.version
        where a.workspace_id = ${workspaceId} and a.kind = 'collaborator' and a.status in ('accepted', 'active', 'paused'))
      and not exists (select 1 from partner_allocations x where x.workspace_id = i.workspace_id and x.order_item_id = i.id)
    order by i.id limit ${limit}`.execute(db);
  return result.rows;
}
