import type { Scope } from '../../platform/auth/scope.js';
import type { PurchaseChannel, PurchaseRecordType, PurchaseStatus } from '../../platform/db/schema.js';
import type { Tx } from '../../platform/db/transaction.js';
import * as orders from './purchases.orders.repo.js';
import { insertItemsAnnounced } from './purchases.items.js';

// Items added to an order recorded elsewhere, as they were (the operator fixtures load purchases through it).

export interface RecordedItem {
  productId: number;
  priceCents: number;
  salePriceCents: number;
  refundedCents: number;
  /** When the refund was reported (default: now). */
  refundedAt?: Date | null;
  recordType?: PurchaseRecordType | undefined;
  serialId: number | null;
}

/**
 * Adds items (and their entitlements) to an order recorded elsewhere: managed
 * checkout sales arriving from the checkout, and operator fixtures. Refund
 * amounts decide each item's refund status.
 */
export async function recordOrderItems(
  tx: Tx,
  scope: Scope,
  order: { orderId: number; customerId: number; channel: PurchaseChannel; provider: string; resellerId: number | null; status: PurchaseStatus; currency: string; purchasedAt: Date; externalReference: string | null },
  items: RecordedItem[],
): Promise<number[]> {
  const customerRef = await orders.customerRefOf(tx, scope, order.customerId);
  const created = await insertItemsAnnounced(
    tx,
    scope,
    items.map((item) => {
      const recordType = item.recordType ?? (item.salePriceCents > 0 ? 'sale' : 'free');
      return {
        orderId: order.orderId,
        productId: item.productId,
        customerId: order.customerId,
        customerRef,
        channel: order.channel,
        provider: order.provider,
        resellerId: order.resellerId,
        recordType,
        status: order.status,
        currency: order.currency,
        priceCents: item.priceCents,
        salePriceCents: item.salePriceCents,
        externalReference: order.externalReference,
        serialId: item.serialId,
        purchasedAt: order.purchasedAt,
        entitlement: {
          source: order.channel === 'import' ? 'import' : order.channel === 'manual_grant' ? 'grant' : 'purchase',
          kind: recordType === 'subscription' ? 'subscription' : 'perpetual',
          endsAt: null,
          manualGrantId: null,
        },
      };
    }),
  );
  await orders.setRefunds(tx, scope, created.map((c, i) => ({ itemId: c.id, refundedCents: items[i]!.refundedCents, refundedAt: items[i]!.refundedAt ?? null })));
  return created.map((c) => c.id);
}
