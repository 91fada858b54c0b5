import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { PurchaseChannel, PurchaseRecordType, PurchaseStatus } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// Writes of orders, their items and the entitlements written with them: imports, grants,
// managed-checkout sales and their refunds.

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
  /** The customer's relationship id in the workspace (`customer_ref`), which the caller has from upsertCustomers. */
  customerRef: number | null;
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

export interface InsertedItem {
  id: number;
  order_id: number;
  product_id: number;
  /** The customer's account id (joins); `customer_ref` is the id the API shows. */
  customer_id: number;
  customer_ref: number | null;
  external_reference: string | null;
  entitlement_id: number;
  serial_id: number | null;
}

/** The customer's relationship id in the workspace (what the API calls the customer's id), or null without one. */
export async function customerRefOf(tx: Executor, scope: Scope, accountId: number): Promise<number | null> {
  const row = await tx
    .selectFrom('developer_customers')
    .where('workspace_id', '=', scope.workspaceId)
    .where('account_id', '=', accountId)
    .select('id')
    .executeTakeFirst();
  return row?.id ?? null;
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
): Promise<InsertedItem[]> {
  if (rows.length === 0) return [];
  const col = <T>(f: (r: NewItem) => T) => rows.map(f);
  const result = await sql<Omit<InsertedItem, 'customer_ref'>>`
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
    select items.id, items.order_id, items.product_id, items.customer_id, items.external_reference, items.serial_id, granted.id as entitlement_id
    from items join granted on granted.order_item_id = items.id
    order by items.id`.execute(tx);
  // The relationship ids come with the rows: looked up per item, a workspace the statistics have
  // not seen yet made the planner scan the workspace's customers once per item.
  const refOf = new Map(rows.map((r) => [r.customerId, r.customerRef]));
  return result.rows.map((row) => ({ ...row, customer_ref: refOf.get(row.customer_id) ?? null }));
}

/**
 * Records refunds (the cumulative amount refunded, reported at `refundedAt`; from the checkout, as
 * this service never refunds) and derives item and order refund status from them.
 */
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

/**
 * An order's total is the sum of its items' sale prices (imports can add items to an order later).
 * Each order sums its own items through their index: no join for the planner to choose, since a
 * workspace the statistics have not seen yet (a first large import) looks like one row, and a
 * nested loop over a grouped subquery then summed every order's items once per order (7.6 s
 * per 5,000 rows). An order without items keeps its total (the sum is null).
 */
export async function refreshOrderTotals(tx: Tx, scope: Scope, orderIds: number[]): Promise<void> {
  if (orderIds.length === 0) return;
  const itemsTotal = sql`(select sum(i.sale_price_cents) from order_items i where i.workspace_id = o.workspace_id and i.order_id = o.id)`;
  await sql`
    update orders o set total_cents = ${itemsTotal}
    where o.workspace_id = ${scope.workspaceId} and o.id = any(${orderIds}::int[]) and o.total_cents <> ${itemsTotal}`.execute(tx);
}

/** What a refund reads of the item it refunds (locked). */
export interface RefundableItem {
  id: number;
  sale_price_cents: number;
  refunded_cents: number;
  serial_id: number | null;
  external_reference: string | null;
}

/** A managed-checkout item by the checkout's order id and product, locked for a refund. */
export async function lockCheckoutItem(tx: Tx, scope: Scope, orderId: string, productId: number): Promise<RefundableItem | null> {
  const result = await sql<RefundableItem>`
    select i.id, i.sale_price_cents, i.refunded_cents, i.serial_id, i.external_reference from order_items i
    where i.workspace_id = ${scope.workspaceId} and i.channel = 'managed_checkout' and i.external_reference = ${orderId} and i.product_id = ${productId}
    order by i.id limit 1 for update`.execute(tx);
  return result.rows[0] ?? null;
}

/**
 * `lockCheckoutItem` for several (order id, product) keys in one statement: each key's item (the
 * first by id, as `lockCheckoutItem` takes), locked in id order so concurrent refunds of shared
 * items cannot deadlock. Keyed by `checkoutItemKey`; a key without an item is absent.
 */
export async function lockCheckoutItems(tx: Tx, scope: Scope, keys: ReadonlyArray<{ orderId: string; productId: number }>): Promise<Map<string, RefundableItem>> {
  if (keys.length === 0) return new Map();
  const result = await sql<RefundableItem & { product_id: number }>`
    select i.id, i.sale_price_cents, i.refunded_cents, i.serial_id, i.external_reference, i.product_id from order_items i
    where i.workspace_id = ${scope.workspaceId} and i.id = any(array(
      select (select j.id from order_items j
              where j.workspace_id = ${scope.workspaceId} and j.channel = 'managed_checkout' and j.external_reference = x.order_id and j.product_id = x.product_id
              order by j.id limit 1)
      from unnest(${keys.map((k) => k.orderId)}::text[], ${keys.map((k) => k.productId)}::int[]) as x(order_id, product_id)))
    order by i.id for update`.execute(tx);
  return new Map(result.rows.map(({ product_id, ...item }) => [checkoutItemKey(item.external_reference ?? '', product_id), item]));
}

export const checkoutItemKey = (orderId: string, productId: number) => `${orderId}\u001f${productId}`;

/** An item sold through a connected store (channel external_store), locked for a refund. */
export async function lockExternalStoreItem(tx: Tx, scope: Scope, itemId: number): Promise<RefundableItem | null> {
  const result = await sql<RefundableItem>`
    select i.id, i.sale_price_cents, i.refunded_cents, i.serial_id, i.external_reference from order_items i
    where i.workspace_id = ${scope.workspaceId} and i.channel = 'external_store' and i.id = ${itemId}
    for update`.execute(tx);
  return result.rows[0] ?? null;
}
