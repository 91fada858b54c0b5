import { type SelectQueryBuilder, sql } from 'kysely';
import { canSeeProduct, type Scope } from '../../platform/auth/scope.js';
import type { DB, PurchaseChannel, PurchaseRecordType, PurchaseStatus, RefundStatus } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import type { PurchaseFilter } from './purchases.filters.js';

export interface PurchaseRecord {
  id: number;
  order_id: number;
  product_id: number;
  product_name: string;
  /** The buyer's account (joins inside services only). */
  customer_id: number;
  /** The buyer's relationship with this workspace: the `customer_id` answers show. */
  customer_ref: number | null;
  email: string;
  first_name: string | null;
  last_name: string | null;
  channel: PurchaseChannel;
  provider: string;
  reseller_id: number | null;
  reseller_name: string | null;
  record_type: PurchaseRecordType;
  status: PurchaseStatus;
  refund_status: RefundStatus;
  currency: string;
  price_cents: number;
  sale_price_cents: number;
  refunded_cents: number;
  order_reference: string;
  external_reference: string | null;
  serial_id: number | null;
  serial_code: string | null;
  customer_portal_hidden: boolean;
  purchased_at: Date;
}

type ItemQuery<O> = SelectQueryBuilder<DB & { i: DB['order_items'] }, 'i', O>;

const escapeLike = (term: string) => term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/** Every purchase query starts here: the workspace predicate plus the caller's product scope. */
function visible(db: Executor, scope: Scope) {
  let query = db.selectFrom('order_items as i').where('i.workspace_id', '=', scope.workspaceId);
  if (scope.products !== 'all') query = query.where('i.product_id', '=', sql<number>`any(${[...scope.products]}::int[])`);
  return query;
}

function applyFilter<O>(query: ItemQuery<O>, scope: Scope, filter: PurchaseFilter): ItemQuery<O> {
  let q = query;
  if (filter.productIds !== undefined) {
    // Products outside the scope match nothing: filters narrow, never widen.
    const ids = filter.productIds.filter((id) => canSeeProduct(scope, id));
    if (ids.length === 0) return q.where(sql<boolean>`false`);
    q = ids.length === 1 ? q.where('i.product_id', '=', ids[0]!) : q.where('i.product_id', '=', sql<number>`any(${ids}::int[])`);
  }
  if (filter.channels) q = q.where('i.channel', 'in', filter.channels);
  if (filter.providers) q = q.where('i.provider', 'in', filter.providers);
  if (filter.refundStatuses) q = q.where('i.refund_status', 'in', filter.refundStatuses);
  if (filter.recordTypes) q = q.where('i.record_type', 'in', filter.recordTypes);
  if (filter.resellerId === 'none') q = q.where('i.reseller_id', 'is', null);
  else if (filter.resellerId !== undefined) q = q.where('i.reseller_id', '=', filter.resellerId);
  if (filter.from) q = q.where('i.purchased_at', '>=', filter.from);
  if (filter.to) q = q.where('i.purchased_at', '<', filter.to);
  if (filter.search) {
    const like = `%${escapeLike(filter.search)}%`;
    const prefix = `${escapeLike(filter.search)}%`;
    // The customers' trigram index names the matching customers and the reference indexes the
    // matching orders, each collected once; the item indexes on customer_id and order_id are then
    // OR'd into one bitmap. (Collecting item ids through a UNION instead cost a parallel plan and
    // a second lookup of every match: 15-30 ms for a term with 8 matches, 0.5 ms this way.)
    q = q.where(
      sql<boolean>`(i.customer_id = any(array(
          select dc.account_id from developer_customers dc where dc.workspace_id = ${scope.workspaceId} and dc.search_text like ${like}))
        or i.order_id = any(array(
          select o.id from orders o where o.workspace_id = ${scope.workspaceId}
            and (lower(o.reference) like ${prefix} or lower(o.external_reference) like ${prefix}))))`,
    );
  }
  return q;
}

export const isUnfiltered = (scope: Scope, f: PurchaseFilter) =>
  scope.products === 'all' &&
  !f.search &&
  f.productIds === undefined &&
  !f.channels &&
  !f.providers &&
  f.resellerId === undefined &&
  !f.refundStatuses &&
  !f.recordTypes &&
  !f.from &&
  !f.to;

/**
 * Only the order and the customer relationship are joined; names from products, resellers
 * and serials, and the account's address, are scalar subqueries. With eight relations to
 * order, planning a page cost 4-7 ms against 1 ms to run it; with four it plans in 0.6 ms.
 * The rows are the same: an item's product and account always exist (foreign keys).
 */
function selectRecord(db: Executor, scope: Scope) {
  return visible(db, scope)
    .innerJoin('orders as o', (j) => j.onRef('o.workspace_id', '=', 'i.workspace_id').onRef('o.id', '=', 'i.order_id'))
    .leftJoin('developer_customers as dc', (j) => j.onRef('dc.workspace_id', '=', 'i.workspace_id').onRef('dc.account_id', '=', 'i.customer_id'))
    .select((eb) => [
      'i.id',
      'i.order_id',
      'i.product_id',
      eb
        .selectFrom('products as p')
        .select('p.name')
        .whereRef('p.workspace_id', '=', 'i.workspace_id')
        .whereRef('p.id', '=', 'i.product_id')
        .as('product_name'),
      'i.customer_id',
      'dc.id as customer_ref',
      // The account's address only for an item without a customer relationship.
      sql<string>`coalesce(dc.email, (select a.email from accounts a where a.id = i.customer_id))`.as('email'),
      'dc.first_name',
      'dc.last_name',
      'i.channel',
      'i.provider',
      'i.reseller_id',
      eb.selectFrom('resellers as r').select('r.name').whereRef('r.id', '=', 'i.reseller_id').as('reseller_name'),
      'i.record_type',
      'i.status',
      'i.refund_status',
      'i.currency',
      'i.price_cents',
      'i.sale_price_cents',
      'i.refunded_cents',
      'o.reference as order_reference',
      'i.external_reference',
      'i.serial_id',
      eb
        .selectFrom('serials as s')
        .select('s.code')
        .whereRef('s.workspace_id', '=', 'i.workspace_id')
        .whereRef('s.id', '=', 'i.serial_id')
        .as('serial_code'),
      'o.customer_portal_hidden',
      sql<Date>`i.purchased_at`.as('purchased_at'),
    ]);
}

/** A position in the list order: the item's purchase time (as stored, to the microsecond) and id. */
export interface ListAnchor {
  at: string;
  id: number;
}

/**
 * One page, newest purchase first; the page's ids come from the indexes alone (deferred join).
 * `atOrBefore` starts the page at a known position (deep-page anchors).
 */
export async function listPurchases(
  db: Executor,
  scope: Scope,
  filter: PurchaseFilter,
  page: { limit: number; offset: number; atOrBefore?: ListAnchor },
): Promise<PurchaseRecord[]> {
  let ids = applyFilter(visible(db, scope), scope, filter);
  if (page.atOrBefore) {
    const { at, id } = page.atOrBefore;
    ids = ids.where(sql<boolean>`(i.purchased_at, i.id) <= (${at}::timestamptz, ${id}::int)`);
  }
  const pageIds = ids
    .select('i.id')
    .orderBy('i.purchased_at', 'desc')
    .orderBy('i.id', 'desc')
    .limit(page.limit)
    .offset(page.offset);
  return selectRecord(db, scope)
    .where('i.id', 'in', pageIds)
    .orderBy('i.purchased_at', 'desc')
    .orderBy('i.id', 'desc')
    .execute() as Promise<PurchaseRecord[]>;
}

/** Item count and list version of the workspace, maintained by triggers in the statements that add and remove items. */
export async function purchaseStats(db: Executor, scope: Scope): Promise<{ items: number; version: number }> {
  const row = await db
    .selectFrom('workspace_stats')
    .where('workspace_id', '=', scope.workspaceId)
    .select(['order_items', 'order_items_version'])
    .executeTakeFirst();
  return { items: row?.order_items ?? 0, version: row?.order_items_version ?? 0 };
}

/** The list position of every `every`-th item of the workspace, newest first: position i·every starts at anchors[i]. */
export async function pageAnchors(db: Executor, scope: Scope, every: number): Promise<ListAnchor[]> {
  const result = await sql<ListAnchor>`
    select at, id from (
      select purchased_at::text as at, purchased_at, id, row_number() over (order by purchased_at desc, id desc) as rn
      from order_items where workspace_id = ${scope.workspaceId}
    ) ranked
    where (rn - 1) % ${every} = 0
    order by purchased_at desc, id desc`.execute(db);
  return result.rows;
}

export async function countPurchases(db: Executor, scope: Scope, filter: PurchaseFilter): Promise<number> {
  if (isUnfiltered(scope, filter)) return (await purchaseStats(db, scope)).items;
  const row = await applyFilter(visible(db, scope), scope, filter).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

/** Keyset batches, newest first, so an export holds at most one batch at a time. */
export async function* purchaseBatches(db: Executor, scope: Scope, filter: PurchaseFilter, batchSize: number): AsyncGenerator<PurchaseRecord[]> {
  // The cursor keeps the stored timestamp as text: a JS Date drops microseconds,
  // and rows between the truncated and the real value would be skipped.
  let after: { at: string; id: number } | null = null;
  for (;;) {
    const base = selectRecord(db, scope).select(sql<string>`i.purchased_at::text`.as('cursor_at'));
    let query = applyFilter(base as unknown as ItemQuery<PurchaseRecord & { cursor_at: string }>, scope, filter);
    if (after) {
      const { at, id } = after;
      query = query.where(sql<boolean>`(i.purchased_at, i.id) < (${at}::timestamptz, ${id}::int)`);
    }
    const batch = (await query.orderBy('i.purchased_at', 'desc').orderBy('i.id', 'desc').limit(batchSize).execute()) as Array<
      PurchaseRecord & { cursor_at: string }
    >;
    if (batch.length === 0) return;
    yield batch;
    if (batch.length < batchSize) return;
    const last = batch[batch.length - 1]!;
    after = { at: last.cursor_at, id: last.id };
  }
}

export async function findPurchases(db: Executor, scope: Scope, itemIds: number[]): Promise<PurchaseRecord[]> {
  if (itemIds.length === 0) return [];
  return selectRecord(db, scope).where('i.id', '=', sql<number>`any(${itemIds}::int[])`).orderBy('i.id').execute() as Promise<PurchaseRecord[]>;
}

/** Resellers related to the workspace; a product-scoped caller sees those with sales of its products. */
/** Distinct providers of visible purchases, read as a skip scan over the provider index (a few probes, not a table scan). */
export async function visibleProviders(db: Executor, scope: Scope): Promise<string[]> {
  const products = scope.products === 'all' ? null : [...scope.products];
  const productClause = products ? sql`and product_id = any(${products}::int[])` : sql``;
  const result = await sql<{ provider: string }>`
    with recursive p(provider) as (
      (select provider from order_items where workspace_id = ${scope.workspaceId} ${productClause} order by provider limit 1)
      union all
      select (select provider from order_items where workspace_id = ${scope.workspaceId} ${productClause} and provider > p.provider order by provider limit 1)
      from p where p.provider is not null
    )
    select provider from p where provider is not null`.execute(db);
  return result.rows.map((r) => r.provider);
}

// ---- writes (imports and grants) ----

export interface NewOrder {
  customerId: number;
  reference: string;
  externalReference: string | null;
  channel: PurchaseChannel;
  provider: string;
  status: PurchaseStatus;
  totalCents: number;
  currency: string;
  resellerId: number | null;
  purchasedAt: Date;
}

/**
 * Creates orders; imported orders that already exist (same customer and
 * external reference) are returned instead of duplicated. DO UPDATE (a no-op
 * write) rather than DO NOTHING so the existing row is returned, also when a
 * concurrent import created it a moment ago.
 */
export async function upsertOrders(tx: Tx, scope: Scope, rows: NewOrder[]): Promise<Array<{ id: number; customer_id: number; external_reference: string | null; reference: string }>> {
  if (rows.length === 0) return [];
  const col = <T>(f: (r: NewOrder) => T) => rows.map(f);
  const imported = rows[0]!.channel === 'import';
  const conflict = imported
    ? sql`on conflict (workspace_id, customer_id, external_reference) where channel = 'import' do update set external_reference = excluded.external_reference`
    : sql``;
  const result = await sql<{ id: number; customer_id: number; external_reference: string | null; reference: string }>`
    insert into orders (workspace_id, customer_id, reference, external_reference, channel, provider, status, refund_status, total_cents, currency, reseller_id, purchased_at)
    select ${scope.workspaceId}, t.customer_id, t.reference, t.external_reference, t.channel, t.provider, t.status, 'none', t.total_cents, t.currency, t.reseller_id, t.purchased_at
    from unnest(${col((r) => r.customerId)}::int[], ${col((r) => r.reference)}::text[], ${col((r) => r.externalReference)}::text[],
                ${col((r) => r.channel)}::text[], ${col((r) => r.provider)}::text[], ${col((r) => r.status)}::text[],
                ${col((r) => r.totalCents)}::bigint[], ${col((r) => r.currency)}::text[], ${col((r) => r.resellerId)}::int[],
                ${col((r) => r.purchasedAt)}::timestamptz[])
      as t(customer_id, reference, external_reference, channel, provider, status, total_cents, currency, reseller_id, purchased_at)
    ${conflict}
    returning id, customer_id, external_reference, reference`.execute(tx);
  return result.rows;
}

export interface NewItem {
  orderId: number;
  productId: number;
  customerId: number;
  channel: PurchaseChannel;
  provider: string;
  resellerId: number | null;
  recordType: PurchaseRecordType;
  status: PurchaseStatus;
  currency: string;
  priceCents: number;
  salePriceCents: number;
  externalReference: string | null;
  serialId: number | null;
  purchasedAt: Date;
  /** The entitlement written with the item. */
  entitlement: { source: 'purchase' | 'grant' | 'import'; kind: 'perpetual' | 'subscription'; endsAt: Date | null; manualGrantId: number | null };
}

/**
 * Inserts items and their entitlements in one statement. Imported items that
 * already exist (natural key: external reference + product + customer) are
 * skipped; only the inserted ones are returned.
 */
export async function insertItems(
  tx: Tx,
  scope: Scope,
  rows: NewItem[],
): Promise<Array<{ id: number; product_id: number; customer_id: number; external_reference: string | null; entitlement_id: number; serial_id: number | null }>> {
  if (rows.length === 0) return [];
  const col = <T>(f: (r: NewItem) => T) => rows.map(f);
  const result = await sql<{ id: number; product_id: number; customer_id: number; external_reference: string | null; entitlement_id: number; serial_id: number | null }>`
    with items as (
      insert into order_items (workspace_id, order_id, product_id, customer_id, channel, provider, reseller_id, record_type, status, currency,
                               price_cents, sale_price_cents, external_reference, serial_id, purchased_at)
      select ${scope.workspaceId}, t.order_id, t.product_id, t.customer_id, t.channel, t.provider, t.reseller_id, t.record_type, t.status, t.currency,
             t.price_cents, t.sale_price_cents, t.external_reference, t.serial_id, t.purchased_at
      from unnest(${col((r) => r.orderId)}::int[], ${col((r) => r.productId)}::int[], ${col((r) => r.customerId)}::int[],
                  ${col((r) => r.channel)}::text[], ${col((r) => r.provider)}::text[], ${col((r) => r.resellerId)}::int[],
                  ${col((r) => r.recordType)}::text[], ${col((r) => r.status)}::text[], ${col((r) => r.currency)}::text[],
                  ${col((r) => r.priceCents)}::bigint[], ${col((r) => r.salePriceCents)}::bigint[], ${col((r) => r.externalReference)}::text[],
                  ${col((r) => r.serialId)}::int[], ${col((r) => r.purchasedAt)}::timestamptz[])
        as t(order_id, product_id, customer_id, channel, provider, reseller_id, record_type, status, currency, price_cents, sale_price_cents,
             external_reference, serial_id, purchased_at)
      on conflict do nothing
      returning id, order_id, product_id, customer_id, external_reference, serial_id, purchased_at
    ), terms as (
      select * from unnest(${col((r) => r.orderId)}::int[], ${col((r) => r.productId)}::int[], ${col((r) => r.entitlement.source)}::text[],
                           ${col((r) => r.entitlement.kind)}::text[], ${col((r) => r.entitlement.endsAt)}::timestamptz[],
                           ${col((r) => r.entitlement.manualGrantId)}::int[])
        as e(order_id, product_id, source, kind, ends_at, manual_grant_id)
    ), granted as (
      insert into entitlements (workspace_id, customer_id, product_id, source, kind, order_item_id, manual_grant_id, serial_id, starts_at, ends_at)
      select ${scope.workspaceId}, items.customer_id, items.product_id, e.source, e.kind, items.id, e.manual_grant_id, items.serial_id, items.purchased_at, e.ends_at
      from items join terms e on e.order_id = items.order_id and e.product_id = items.product_id
      returning id, order_item_id
    )
    select items.id, items.product_id, items.customer_id, items.external_reference, items.serial_id, granted.id as entitlement_id
    from items join granted on granted.order_item_id = items.id
    order by items.id`.execute(tx);
  return result.rows;
}

/** Active entitlements of one customer to these products. */
export async function activeEntitlements(tx: Executor, scope: Scope, customerId: number, productIds: number[]) {
  return tx
    .selectFrom('entitlements')
    .where('workspace_id', '=', scope.workspaceId)
    .where('customer_id', '=', customerId)
    .where('product_id', '=', sql<number>`any(${productIds}::int[])`)
    .where('status', '=', 'active')
    .select(['id', 'product_id', 'kind', 'ends_at'])
    .execute();
}

export async function findEntitlements(db: Executor, scope: Scope, ids: number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('entitlements')
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', sql<number>`any(${ids}::int[])`)
    .select([
      'id',
      // The relationship id, as everywhere in answers.
      sql<number>`(select dc.id from developer_customers dc where dc.workspace_id = entitlements.workspace_id and dc.account_id = entitlements.customer_id)`.as(
        'customer_id',
      ),
      'product_id',
      'source',
      'kind',
      'status',
      'order_item_id',
      'serial_id',
      'starts_at',
      'ends_at',
    ])
    .orderBy('id')
    .execute();
}

// ---- manual grants ----

/** Serialises grants that share a grantRequestId (transaction-scoped, released at commit). */
export async function lockGrantRequest(tx: Tx, scope: Scope, grantRequestId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`grant:${scope.workspaceId}:${grantRequestId}`}, 0))`.execute(tx);
}

export async function findGrantRequest(tx: Executor, scope: Scope, grantRequestId: string) {
  return tx
    .selectFrom('manual_grants')
    .where('workspace_id', '=', scope.workspaceId)
    .where('grant_request_id', '=', grantRequestId)
    .select(['id', 'request_hash', 'response'])
    .executeTakeFirst();
}

export async function insertGrant(
  tx: Tx,
  scope: Scope,
  input: { grantRequestId: string | null; requestHash: string; grantType: 'perpetual' | 'subscription' | 'existing_serial'; customerId: number; reason: string; note: string | null },
): Promise<number> {
  const row = await tx
    .insertInto('manual_grants')
    .values({
      workspace_id: scope.workspaceId,
      grant_request_id: input.grantRequestId,
      request_hash: input.requestHash,
      grant_type: input.grantType,
      actor_account_id: scope.accountId || null,
      customer_id: input.customerId,
      reason: input.reason,
      note: input.note,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function saveGrantResponse(tx: Tx, scope: Scope, grantId: number, response: unknown): Promise<void> {
  await tx
    .updateTable('manual_grants')
    .set({ response: JSON.stringify(response) })
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', grantId)
    .execute();
}

/**
 * Sets refunded amounts (from the checkout; this service never refunds) and
 * derives item and order refund status from them.
 */
/** Records refunds (the cumulative amount refunded, reported at `refundedAt`). */
export async function setRefunds(tx: Tx, scope: Scope, rows: Array<{ itemId: number; refundedCents: number; refundedAt?: Date | null }>): Promise<void> {
  const refunded = rows.filter((r) => r.refundedCents > 0);
  if (refunded.length === 0) return;
  const changed = await sql<{ order_id: number }>`
    update order_items i set refunded_cents = t.refunded_cents, refunded_at = coalesce(t.refunded_at, now()),
      refund_status = case when t.refunded_cents >= i.sale_price_cents then 'full' else 'partial' end
    from unnest(${refunded.map((r) => r.itemId)}::int[], ${refunded.map((r) => r.refundedCents)}::bigint[], ${refunded.map((r) => r.refundedAt ?? null)}::timestamptz[])
      as t(item_id, refunded_cents, refunded_at)
    where i.workspace_id = ${scope.workspaceId} and i.id = t.item_id
    returning i.order_id`.execute(tx);
  // A fully refunded item no longer entitles the customer to the product.
  await sql`
    update entitlements e set status = 'revoked'
    from order_items i
    where i.workspace_id = ${scope.workspaceId} and i.id = any(${refunded.map((r) => r.itemId)}::int[]) and i.refund_status = 'full'
      and e.workspace_id = i.workspace_id and e.order_item_id = i.id`.execute(tx);
  // An order is fully refunded when every item is.
  await sql`
    update orders o set refund_status = case
        when exists (select 1 from order_items x where x.workspace_id = o.workspace_id and x.order_id = o.id and x.refund_status <> 'full') then 'partial'
        else 'full' end
    where o.workspace_id = ${scope.workspaceId} and o.id = any(${[...new Set(changed.rows.map((r) => r.order_id))]}::int[])`.execute(tx);
}

export const importItemKey = (externalReference: string, productId: number, customerId: number) => `${externalReference}\u001f${productId}\u001f${customerId}`;

/** Natural keys (see importItemKey) of imported items that already exist. */
export async function existingImportItems(
  tx: Executor,
  scope: Scope,
  keys: Array<{ externalReference: string; productId: number; customerId: number }>,
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const result = await sql<{ external_reference: string; product_id: number; customer_id: number }>`
    select i.external_reference, i.product_id, i.customer_id
    from unnest(${keys.map((k) => k.externalReference)}::text[], ${keys.map((k) => k.productId)}::int[], ${keys.map((k) => k.customerId)}::int[])
      as t(external_reference, product_id, customer_id)
    join order_items i on i.workspace_id = ${scope.workspaceId} and i.channel = 'import'
      and i.external_reference = t.external_reference and i.product_id = t.product_id and i.customer_id = t.customer_id`.execute(tx);
  return new Set(result.rows.map((r) => importItemKey(r.external_reference, r.product_id, r.customer_id)));
}

/** An order's total is the sum of its items' sale prices (imports can add items to an order later). */
export async function refreshOrderTotals(tx: Tx, scope: Scope, orderIds: number[]): Promise<void> {
  if (orderIds.length === 0) return;
  await sql`
    update orders o set total_cents = t.total
    from (select order_id, sum(sale_price_cents) as total from order_items
          where workspace_id = ${scope.workspaceId} and order_id = any(${orderIds}::int[]) group by order_id) t
    where o.workspace_id = ${scope.workspaceId} and o.id = any(${orderIds}::int[]) and o.id = t.order_id and o.total_cents <> t.total`.execute(tx);
}

/** A managed-checkout item by the checkout's order id and product, locked for a refund. */
export async function lockCheckoutItem(tx: Tx, scope: Scope, orderId: string, productId: number) {
  const result = await sql<{ id: number; sale_price_cents: number; refunded_cents: number }>`
    select i.id, i.sale_price_cents, i.refunded_cents from order_items i
    where i.workspace_id = ${scope.workspaceId} and i.channel = 'managed_checkout' and i.external_reference = ${orderId} and i.product_id = ${productId}
    order by i.id limit 1 for update`.execute(tx);
  return result.rows[0] ?? null;
}
