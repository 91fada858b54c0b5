import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';

// The dashboard's own reads: sales per window, the KPI counts, and the newest events of each
// source. Every query starts from the caller's workspace and one product the caller can see.

/** Orders, units and sums per currency over each window of `windows` days ending today (UTC); sums as decimal text (bigint). */
export async function salesByWindow(db: Executor, scope: Scope, productId: number, windows: readonly number[]) {
  const longest = Math.max(...windows);
  const result = await sql<{ currency: string; window: number; orders: number; units: number; gross: string; refunds: string }>`
    select d.currency, w.days as window, coalesce(sum(d.orders), 0)::int as orders, coalesce(sum(d.units), 0)::int as units,
           coalesce(sum(d.gross_cents), 0)::text as gross, coalesce(sum(d.refunds_cents), 0)::text as refunds
    from product_sales_daily d
    join unnest(${[...windows]}::int[]) as w(days) on d.day > (now() at time zone 'utc')::date - w.days
    where d.workspace_id = ${scope.workspaceId} and d.product_id = ${productId}
      and d.day > (now() at time zone 'utc')::date - ${longest}::int
    group by d.currency, w.days`.execute(db);
  return result.rows;
}

/**
 * Active customers holding the product, and its orders of all time: both from maintained counters (migrations 0027
 * and 0030), a few index reads, never a count over the product's customers.
 */
export async function kpiCounts(db: Executor, scope: Scope, productId: number): Promise<{ customers: number; orders: number }> {
  const row = await sql<{ customers: number; orders: number }>`
    select
      (select coalesce(sum(active_customers), 0) from product_customer_counts where workspace_id = ${scope.workspaceId} and product_id = ${productId})::int as customers,
      (select coalesce(sum(orders), 0) from product_sales_daily where workspace_id = ${scope.workspaceId} and product_id = ${productId})::int as orders`.execute(db);
  return { customers: row.rows[0]?.customers ?? 0, orders: row.rows[0]?.orders ?? 0 };
}

/** The newest `limit` events of each source: sales, refunds, serial actions and activations, catalogue changes. */
export async function recentEvents(db: Executor, scope: Scope, productId: number, limit: number) {
  const w = scope.workspaceId;
  const [sales, refunds, serials, events] = await Promise.all([
    db
      .selectFrom('order_items')
      .where('workspace_id', '=', w)
      .where('product_id', '=', productId)
      .orderBy('purchased_at', 'desc')
      .limit(limit)
      .select(['id', 'order_id', 'channel', 'record_type', 'currency', 'sale_price_cents', sql<Date>`purchased_at`.as('at')])
      .execute(),
    db
      .selectFrom('order_items')
      .where('workspace_id', '=', w)
      .where('product_id', '=', productId)
      .where('refunded_at', 'is not', null)
      .orderBy('refunded_at', 'desc')
      .limit(limit)
      .select(['id', 'order_id', 'currency', 'refunded_cents', 'refund_status', sql<Date>`refunded_at`.as('at')])
      .execute(),
    db
      .selectFrom('serial_events')
      .where('workspace_id', '=', w)
      .where('product_id', '=', productId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .select(['serial_id', 'action', 'actor_type', 'after_status', sql<Date>`created_at`.as('at')])
      .execute(),
    db
      .selectFrom('product_events')
      .where('workspace_id', '=', w)
      .where('product_id', '=', productId)
      .orderBy('occurred_at', 'desc')
      .limit(limit)
      .select(['kind', 'data', sql<Date>`occurred_at`.as('at')])
      .execute(),
  ]);
  return { sales, refunds, serials, events };
}
