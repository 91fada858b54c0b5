import type { FastifyBaseLogger } from 'fastify';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { allocateSales, reverseRefund, reverseRefunds } from '../ledger/index.js';
import { type CheckoutSale, recordCheckoutRefund, recordCheckoutRefunds, recordCheckoutSales, recordExternalRefund, type RefundableItem } from '../purchases/index.js';
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
  return (await bookSales(tx, scope, [sale], context))[0]!;
}

/**
 * `bookSale` for several sales of one workspace and one source in one transaction, with the
 * statements of one sale: the orders are locked together (in key order, so concurrent bookings
 * cannot deadlock), then the new ones are recorded and allocated together. Answers each sale's
 * booking by position; a sale of an order booked before, or earlier in the same call, is `replayed`.
 */
export async function bookSales(tx: Tx, scope: Scope, sales: SaleToBook[], context: BookingContext): Promise<BookedSale[]> {
  if (sales.length === 0) return [];
  const source = sales[0]!.source ?? { channel: 'managed_checkout', provider: 'patchbay_checkout' };
  if (sales.some((s) => (s.source?.channel ?? 'managed_checkout') !== source.channel || (s.source?.provider ?? 'patchbay_checkout') !== source.provider)) {
    throw new Error('bookSales books the sales of one source at a time');
  }
  const orderOf = (sale: SaleToBook) => ({ workspaceId: scope.workspaceId, channel: source.channel, provider: source.provider, orderId: sale.orderId });
  await repo.lockCheckoutOrders(tx, sales.map(orderOf));
  const already = await repo.checkoutOrdersItems(tx, sales.map(orderOf));
  const fresh: SaleToBook[] = [];
  const firstOf = new Map<string, number>();
  sales.forEach((sale, i) => {
    if (already.has(sale.orderId)) {
      context.log.warn({ orderId: sale.orderId, provider: source.provider }, 'a sale for an order already recorded; nothing booked again');
    } else if (!firstOf.has(sale.orderId)) {
      firstOf.set(sale.orderId, i);
      fresh.push(sale);
    }
  });
  // A referral context counts only when this service signed it, for this workspace.
  const referralOf = new Map<SaleToBook, { agreementId: number; visitedAt: Date } | null>();
  for (const sale of fresh) {
    let referral: { agreementId: number; visitedAt: Date } | null = null;
    if (sale.referral) {
      const ctx = context.verifyReferral(sale.referral);
      if (ctx && ctx.workspaceId === scope.workspaceId) referral = { agreementId: ctx.agreementId, visitedAt: ctx.visitedAt };
      else context.log.warn({ orderId: sale.orderId, provider: source.provider }, 'a sale carries a referral context that does not verify; no attribution');
    }
    referralOf.set(sale, referral);
  }
  if (fresh.length > 0) await context.beforeRecording?.();
  const recorded = await recordCheckoutSales(tx, scope, fresh);
  const external = source.channel === 'external_store';
  await allocateSales(
    tx,
    scope.workspaceId,
    fresh.flatMap((sale, i) =>
      recorded[i]!.map((item) => ({
        orderItemId: item.itemId,
        productId: item.productId,
        currency: sale.currency,
        subtotal: BigInt(item.subtotalCents),
        discount: BigInt(item.discountCents),
        basis: external ? ('external' as const) : ('managed' as const),
        // An external collection's fees are the seller's and unknown here: the estimate is of the whole sale.
        ...(external ? { platformFee: 0n, processingFee: 0n } : {}),
        soldAt: sale.purchasedAt,
        referral: referralOf.get(sale)!,
      })),
    ),
  );
  const itemsOfFresh = new Map(fresh.map((sale, i) => [sale.orderId, recorded[i]!.map((item) => ({ orderItemId: item.itemId, productId: item.productId }))]));
  return sales.map((sale, i): BookedSale => {
    const before = already.get(sale.orderId);
    if (before) return { outcome: 'replayed', items: before };
    const items = itemsOfFresh.get(sale.orderId)!;
    if (firstOf.get(sale.orderId) !== i) context.log.warn({ orderId: sale.orderId, provider: source.provider }, 'a sale for an order already recorded; nothing booked again');
    return { outcome: firstOf.get(sale.orderId) === i ? 'recorded' : 'replayed', items };
  });
}

/** A managed-checkout refund of one product of an order (this refund's amount), with its partner reversal. */
export async function bookCheckoutRefund(tx: Tx, scope: Scope, refund: { orderId: string; productId: number; amountCents: number; refundedAt: Date }): Promise<number> {
  const { itemId, refundedCents } = await recordCheckoutRefund(tx, scope, refund);
  await reverseRefund(tx, scope.workspaceId, itemId, BigInt(refundedCents));
  return itemId;
}

/**
 * `bookCheckoutRefund` for several refunds of one workspace whose items the caller locked and
 * checked (each item once, each refund within what was paid), with the statements of one refund
 * and its reversal. Answers each refund's item by position.
 */
export async function bookCheckoutRefunds(tx: Tx, scope: Scope, refunds: ReadonlyArray<{ item: RefundableItem; amountCents: number; refundedAt: Date }>): Promise<number[]> {
  const recorded = await recordCheckoutRefunds(tx, scope, refunds);
  await reverseRefunds(tx, scope.workspaceId, recorded.map((r) => ({ orderItemId: r.itemId, refundedTotal: BigInt(r.refundedCents) })));
  return recorded.map((r) => r.itemId);
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
