import { type ExpressionBuilder, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { CustomerScope } from '../../platform/auth/scope.js';
import type { DB } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';

// The buyer's own orders, as the customer portal shows them. Section 3.2 of the contract takes
// effect here: an order hidden with `customer-portal-order/hide` is neither listed nor found by
// id. Every query starts from the buyer's workspace and account.

function visibleOrders(db: Executor, customer: CustomerScope) {
  return db
    .selectFrom('orders as o')
    .where('o.workspace_id', '=', customer.workspaceId)
    .where('o.customer_id', '=', customer.accountId)
    .where('o.customer_portal_hidden', '=', false);
}

const ORDER_COLUMNS = ['o.id', 'o.purchased_at', 'o.status', 'o.refund_status', 'o.channel', 'o.currency', 'o.total_cents'] as const;

/** The order's items (the buyer's: the order was found with the buyer's scope), as a JSON array in the order's row. */
const itemsOf = (eb: ExpressionBuilder<DB & { o: DB['orders'] }, 'o'>) =>
  jsonArrayFrom(
    eb
      .selectFrom('order_items as i')
      .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 'i.workspace_id').onRef('p.id', '=', 'i.product_id'))
      .whereRef('i.workspace_id', '=', 'o.workspace_id')
      .whereRef('i.order_id', '=', 'o.id')
      .whereRef('i.customer_id', '=', 'o.customer_id')
      .select(['i.id', 'i.product_id', 'p.name as product', 'i.sale_price_cents', 'i.currency', 'i.refunded_cents', 'i.refund_status'])
      .orderBy('i.id'),
  ).as('items');

/**
 * One page of orders with their items and the number of visible orders, in one statement: the
 * portal's list costs one round trip besides the session check, whatever the workspace's size.
 */
export async function orderPage(db: Executor, customer: CustomerScope, page: { limit: number; offset: number }) {
  return visibleOrders(db, customer)
    .select([...ORDER_COLUMNS, sql<number>`count(*) over ()`.as('total'), itemsOf])
    .orderBy('o.purchased_at', 'desc')
    .orderBy('o.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Only for a page past the end, which returns no row to carry the total. */
export async function countOrders(db: Executor, customer: CustomerScope): Promise<number> {
  const row = await visibleOrders(db, customer).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export async function findOrder(db: Executor, customer: CustomerScope, orderId: number) {
  return visibleOrders(db, customer).where('o.id', '=', orderId).select([...ORDER_COLUMNS, itemsOf]).executeTakeFirst();
}

export type OrderRecord = NonNullable<Awaited<ReturnType<typeof findOrder>>>;
