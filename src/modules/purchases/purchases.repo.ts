// Reads of the purchase list and its export: one order item per row, the caller's scope in every query.
import { type Expression, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import { canSeeProduct, type Scope } from '../../platform/auth/scope.js';
import type { DB, OrderItemsTable } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';
import type { Anchors } from '../../platform/paging/page-anchors.js';
import { isoTimestamp } from '../../platform/csv/copy-out.js';
import { majorUnitsSql } from '../../platform/money/money.js';
import { isShallowPage, type JsonPage, type ListTotals, pageJsonWithTotal, pageLiteral } from '../../platform/paging/page-statement.js';
import type { PurchaseFilter } from './purchases.filters.js';

/** An order item as the list, the export and answers read it, with its order's and customer's fields. */
export type PurchaseRecord = Pick<
  Selectable<OrderItemsTable>,
  | 'id'
  | 'order_id'
  | 'product_id'
  | 'channel'
  | 'provider'
  | 'reseller_id'
  | 'record_type'
  | 'status'
  | 'refund_status'
  | 'currency'
  | 'price_cents'
  | 'sale_price_cents'
  | 'refunded_cents'
  | 'external_reference'
  | 'serial_id'
> & {
  product_name: string;
  /** The buyer's account (joins inside services only). */
  customer_id: number;
  /** The buyer's relationship with this workspace: the `customer_id` answers show. */
  customer_ref: number | null;
  email: string;
  first_name: string | null;
  last_name: string | null;
  reseller_name: string | null;
  order_reference: string;
  serial_code: string | null;
  customer_portal_hidden: boolean;
  purchased_at: Date;
};

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
 * The unfiltered list's total and version come from the maintained counters. A filtered list counts its matches,
 * unless the caller knows the total at the list's current version (`known`): the version is read in the same
 * statement and the count (a subquery in the other branch of the CASE) runs only when it moved. The version is
 * `order_items_version` (every insert, delete and update of a filtered column of an item: migrations 0027, 0028); a
 * search's matches also depend on customers' names, so its version adds `customers_version` (every statement that
 * writes relationships). Both only grow, so an equal sum means neither moved. Order references never change once
 * written, and an order only matches through its items, whose insert moves the version.
 */
function listTotals(db: Executor, scope: Scope, filter: PurchaseFilter, known?: ListTotals): Expression<ListTotals> {
  if (isUnfiltered(scope, filter)) {
    return db
      .selectFrom('workspace_stats')
      .where('workspace_id', '=', scope.workspaceId)
      .select([sql<number>`order_items`.as('total'), sql<number>`order_items_version`.as('version')]);
  }
  const count = applyFilter(visible(db, scope), scope, filter).select(sql<number>`count(*)::int`.as('n'));
  const counters = filter.search ? sql`order_items_version + customers_version` : sql`order_items_version`;
  const version = sql<number>`coalesce((select (${counters})::bigint from workspace_stats where workspace_id = ${scope.workspaceId}), 0)`;
  if (!known) return sql<ListTotals>`(select ${count} as total, ${version} as version)`;
  return sql<ListTotals>`(
    select case when v.version = ${known.version}::bigint then ${known.total}::int else ${count} end as total, v.version
    from (select ${version} as version) v)`;
}

/** Whether the page row `r` is refundable: the SQL twin of `refundable` in purchases.service.ts. */
const refundableSql = sql`(r.channel = 'managed_checkout' and r.status = 'paid' and r.refund_status <> 'full' and r.sale_price_cents > 0)`;

/**
 * One purchase as the API answers it (PurchaseRow, fields in its order), from a page row `r`: the SQL twin of
 * `toPurchaseRow` in purchases.service.ts (test/purchases/list.test.ts holds both to the same answer).
 */
function rowJson(mayRefund: boolean) {
  const canRefund = mayRefund ? refundableSql : sql`false`;
  return sql`json_build_object(
    'order_id', r.order_id, 'order_item_id', r.id, 'product_id', r.product_id, 'product', r.product_name,
    'customer_id', r.customer_ref, 'email', r.email, 'first_name', r.first_name, 'last_name', r.last_name, 'status', r.status,
    'invoice_available', (r.channel = 'managed_checkout' and r.status = 'paid'), 'channel', r.channel, 'provider', r.provider,
    'reseller_id', r.reseller_id, 'reseller', r.reseller_name, 'record_type', r.record_type, 'refund_status', r.refund_status,
    'currency', rtrim(r.currency), 'price_cents', r.price_cents, 'sale_price_cents', r.sale_price_cents, 'refunded_cents', r.refunded_cents,
    'price', ${sql.raw(majorUnitsSql('r.price_cents', 'r.currency'))}, 'sale_price', ${sql.raw(majorUnitsSql('r.sale_price_cents', 'r.currency'))},
    'order_reference', r.order_reference, 'external_reference', r.external_reference, 'serial_id', r.serial_id, 'serial_code', r.serial_code,
    'customer_portal_hidden', r.customer_portal_hidden, 'can_refund', ${canRefund},
    'purchased_at', ${sql.raw(isoTimestamp('r.purchased_at'))})`;
}

/**
 * One page, newest purchase first, and its exact total in one statement, the rows as the API's JSON (PurchaseRow)
 * and the page's `canRefund` as its summary. The page's ids come from the indexes alone (deferred join).
 * `atOrBefore` starts the page at a known position (deep-page anchors). `mayRefund`: the caller holds purchases.refund.
 */
export async function listPage(
  db: Executor,
  scope: Scope,
  filter: PurchaseFilter,
  page: { limit: number; offset: number; atOrBefore?: ListAnchor },
  mayRefund: boolean,
  known?: ListTotals,
): Promise<JsonPage> {
  const start = <O>(query: ItemQuery<O>): ItemQuery<O> => {
    if (!page.atOrBefore) return query;
    const { at, id } = page.atOrBefore;
    return query.where(sql<boolean>`(i.purchased_at, i.id) <= (${at}::timestamptz, ${id}::int)`);
  };
  // A shallow page reads its rows directly, its LIMIT and OFFSET as literals (one plan per page size and offset,
  // kept by the prepared statement); a deeper one finds its ids from the indexes first (a deferred join). So does a
  // search: its matches come from a bitmap over two indexes, in no order, and the direct read joins every match's
  // customer and product before it sorts (`smith` at 1,000,000 items: p95 1,341 ms direct, 227 ms deferred).
  const rows = isShallowPage(page) && !filter.search
    ? start(applyFilter(selectRecord(db, scope) as unknown as ItemQuery<PurchaseRecord>, scope, filter))
        .orderBy('i.purchased_at', 'desc')
        .orderBy('i.id', 'desc')
        .limit(pageLiteral(page.limit))
        .offset(pageLiteral(page.offset))
    : selectRecord(db, scope).where(
        'i.id',
        'in',
        start(applyFilter(visible(db, scope), scope, filter))
          .select('i.id')
          .orderBy('i.purchased_at', 'desc')
          .orderBy('i.id', 'desc')
          .limit(page.limit)
          .offset(page.offset),
      );
  const canRefund = mayRefund ? sql`coalesce(bool_or(${refundableSql}), false)` : sql`false`;
  return pageJsonWithTotal(db, listTotals(db, scope, filter, known), rows, rowJson(mayRefund), sql`r.purchased_at desc, r.id desc`, canRefund);
}

/**
 * The list position of every `every`-th item of the workspace, newest first (position i·every starts at
 * anchors[i]), and the list version they belong to, from one snapshot.
 */
export async function pageAnchors(db: Executor, scope: Scope, every: number): Promise<Anchors<ListAnchor>> {
  const result = await sql<{ version: number | null; anchors: ListAnchor[] }>`
    select (select order_items_version from workspace_stats where workspace_id = ${scope.workspaceId}) as version,
      coalesce((
        select json_agg(json_build_object('at', at, 'id', id) order by purchased_at desc, id desc) from (
          select purchased_at::text as at, purchased_at, id, row_number() over (order by purchased_at desc, id desc) as rn
          from order_items where workspace_id = ${scope.workspaceId}
        ) ranked
        where (rn - 1) % ${every} = 0), '[]'::json) as anchors`.execute(db);
  const row = result.rows[0]!;
  return { version: Number(row.version ?? 0), anchors: row.anchors };
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
