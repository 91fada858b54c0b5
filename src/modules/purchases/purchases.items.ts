import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { emitWebhookEvents } from '../webhooks/index.js';
import * as orders from './purchases.orders.repo.js';

/**
 * Inserts order items (with their entitlements) and records a `purchase.recorded` webhook event
 * for each one inserted, in the caller's transaction: every way a purchase arrives (checkout,
 * import, manual grant, fixtures) goes through here, so none is announced twice or forgotten.
 */
export async function insertItemsAnnounced(tx: Tx, scope: Scope, rows: orders.NewItem[]): Promise<orders.InsertedItem[]> {
  const inserted = await orders.insertItems(tx, scope, rows);
  const input = new Map(rows.map((r) => [`${r.orderId}:${r.productId}`, r]));
  await emitWebhookEvents(
    tx,
    scope.workspaceId,
    'purchase.recorded',
    inserted.map((item) => {
      const r = input.get(`${item.order_id}:${item.product_id}`)!;
      return {
        order_item_id: item.id,
        order_id: item.order_id,
        product_id: item.product_id,
        customer_id: item.customer_ref,
        channel: r.channel,
        record_type: r.recordType,
        currency: r.currency,
        price_cents: r.priceCents,
        sale_price_cents: r.salePriceCents,
        serial_id: item.serial_id,
        purchased_at: r.purchasedAt.toISOString(),
      };
    }),
  );
  return inserted;
}
