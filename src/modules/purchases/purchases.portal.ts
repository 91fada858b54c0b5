import type { CustomerScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/errors.js';
import { pageWindow, type PageQuery } from '../../platform/paging/paged-list.js';
import * as repo from './purchases.portal.repo.js';

/** An order as its buyer sees it in the customer portal. */
export interface BuyerOrder {
  order_id: number;
  purchased_at: string;
  status: string;
  refund_status: string;
  invoice_available: boolean;
  currency: string;
  total_cents: number;
  items: Array<{
    order_item_id: number;
    product_id: number;
    product: string;
    amount_cents: number;
    currency: string;
    refunded_cents: number;
    refund_status: string;
  }>;
}

function toBuyerOrder(order: repo.OrderRecord): BuyerOrder {
  return {
    order_id: order.id,
    purchased_at: new Date(order.purchased_at).toISOString(),
    status: order.status,
    refund_status: order.refund_status,
    // As in the developer's purchase rows: paid managed-checkout orders have an invoice.
    invoice_available: order.channel === 'managed_checkout' && order.status === 'paid',
    currency: order.currency.trim(),
    total_cents: order.total_cents,
    items: order.items.map((i) => ({
      order_item_id: i.id,
      product_id: i.product_id,
      product: i.product,
      amount_cents: i.sale_price_cents,
      currency: i.currency.trim(),
      refunded_cents: i.refunded_cents,
      refund_status: i.refund_status,
    })),
  };
}

/** The buyer's orders in this workspace, newest first; hidden orders are not there. */
export async function listBuyerOrders(db: Db, customer: CustomerScope, query: PageQuery) {
  const { page, pageSize, offset } = pageWindow(query);
  const orders = await repo.orderPage(db, customer, { limit: pageSize, offset });
  // count(*) over () rides on the page's rows; a page past the end has none to carry it.
  const total = orders.length > 0 ? Number(orders[0]!.total) : offset > 0 ? await repo.countOrders(db, customer) : 0;
  return { rows: orders.map(toBuyerOrder), total, page, pageSize };
}

/** One of the buyer's orders; another buyer's, another workspace's or a hidden one is not found. */
export async function getBuyerOrder(db: Db, customer: CustomerScope, orderId: number): Promise<BuyerOrder> {
  const order = await repo.findOrder(db, customer, orderId);
  if (!order) throw notFound('Order');
  return toBuyerOrder(order);
}
