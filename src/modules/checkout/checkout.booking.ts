import type { FastifyBaseLogger } from 'fastify';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { allocateSale, reverseRefund } from '../ledger/index.js';
import { type CheckoutSale, recordCheckoutRefund, recordCheckoutSale, recordExternalRefund } from '../purchases/index.js';
import * as repo from './checkout.repo.js';

// How a sale becomes money and licences, whoever collected it: Patchbay's managed checkout or a
// seller's own store connected to Patchbay. One transaction books the purchase (customer, order,
// items, entitlements, serials, the buyer's e-mail) and its partner allocation, so a sale is never
// recorded without its split; a refund and its reversal share one transaction the same way.

/** Checks a `pb_ref` referral context; null when it is not one this service signed. */
export type ReferralVerifier = (value: string) => { agreementId: number; workspaceId: number; visitedAt: Date } | null;

export interface SaleToBook extends CheckoutSale {
  /** The `pb_ref` the buyer arrived with, as the checkout reports it (unchecked). */
  referral: string | null;
}

export interface BookingContext {
  verifyReferral: ReferralVerifier;
  log: FastifyBaseLogger;
  /** Runs once the order is known to be new, before anything is written (the managed checkout's currency rule). */
  beforeRecording?: () => Promise<void>;
}

export type BookedSale = { outcome: 'recorded' | 'replayed'; items: Array<{ orderItemId: number; productId: number }> };

/**
 * Books a sale once per order of its source, however many events name it: a second booking of the
 * same order answers `replayed` with the items the first one made. Money is allocated on the
 * managed basis for the managed checkout and as an external collection (unfunded partner estimates,
 * the seller's fees stay with the seller: the contract's section 4.8) for a connected store.
 */
export async function bookSale(tx: Tx, scope: Scope, sale: SaleToBook, context: BookingContext): Promise<BookedSale> {
  const source = sale.source ?? { channel: 'managed_checkout', provider: 'patchbay_checkout' };
  const order = { workspaceId: scope.workspaceId, channel: source.channel, provider: source.provider, orderId: sale.orderId };
  await repo.lockCheckoutOrder(tx, order);
  const already = await repo.checkoutOrderItems(tx, order);
  if (already.length > 0) {
    context.log.warn({ orderId: sale.orderId, provider: source.provider }, 'a sale for an order already recorded; nothing booked again');
    return { outcome: 'replayed', items: already };
  }
  // A referral context counts only when this service signed it, for this workspace.
  let referral: { agreementId: number; visitedAt: Date } | null = null;
  if (sale.referral) {
    const ctx = context.verifyReferral(sale.referral);
    if (ctx && ctx.workspaceId === scope.workspaceId) referral = { agreementId: ctx.agreementId, visitedAt: ctx.visitedAt };
    else context.log.warn({ orderId: sale.orderId, provider: source.provider }, 'a sale carries a referral context that does not verify; no attribution');
  }
  await context.beforeRecording?.();
  const items = await recordCheckoutSale(tx, scope, sale);
  const external = source.channel === 'external_store';
  for (const item of items) {
    await allocateSale(tx, scope.workspaceId, {
      orderItemId: item.itemId,
      productId: item.productId,
      currency: sale.currency,
      subtotal: BigInt(item.subtotalCents),
      discount: BigInt(item.discountCents),
      basis: external ? 'external' : 'managed',
      // An external collection's fees are the seller's and unknown here: the estimate is of the whole sale.
      ...(external ? { platformFee: 0n, processingFee: 0n } : {}),
      soldAt: sale.purchasedAt,
      referral,
    });
  }
  return { outcome: 'recorded', items: items.map((i) => ({ orderItemId: i.itemId, productId: i.productId })) };
}

/** A managed-checkout refund of one product of an order (this refund's amount), with its partner reversal. */
export async function bookCheckoutRefund(tx: Tx, scope: Scope, refund: { orderId: string; productId: number; amountCents: number; refundedAt: Date }): Promise<number> {
  const { itemId, refundedCents } = await recordCheckoutRefund(tx, scope, refund);
  await reverseRefund(tx, scope.workspaceId, itemId, BigInt(refundedCents));
  return itemId;
}

/**
 * A connected store's refund of an item, as the item's refunded total so far, with its partner
 * reversal. False when the total adds nothing to what is recorded (a repeated or late report).
 */
export async function bookExternalRefund(tx: Tx, scope: Scope, refund: { orderItemId: number; refundedCents: number; refundedAt: Date }): Promise<boolean> {
  const recorded = await recordExternalRefund(tx, scope, refund);
  if (!recorded) return false;
  await reverseRefund(tx, scope.workspaceId, recorded.itemId, BigInt(recorded.refundedCents));
  return true;
}
