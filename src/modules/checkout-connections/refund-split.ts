// Refund arithmetic for connected stores, in integer minor units (BigInt inside: products of two
// 32-bit amounts pass 2^53). Providers report refunds against what the buyer paid (taxes
// included); Patchbay records them against each item's sale price (taxes excluded), so a refund
// is carried over as the same share of the item, and a full refund as a full one.

/**
 * Spreads an order's refunded total over its items in proportion to what each cost: the D'Hondt
 * (highest averages) apportionment the ledger uses for reversals, ties to the earlier item. The
 * parts sum to the total exactly, never exceed an item, and never shrink as the total grows
 * (largest remainders can: the Alabama paradox), so an item's refund only ever rises as later
 * reports raise the order's total. A total at or above the order's refunds every item in full.
 */
export function spreadOrderRefund(paid: readonly number[], refundedTotal: number): number[] {
  const total = paid.reduce((s, p) => s + p, 0);
  if (refundedTotal >= total) return [...paid];
  if (refundedTotal <= 0 || total === 0) return paid.map(() => 0);
  const r = BigInt(refundedTotal);
  const t = BigInt(total);
  const weights = paid.map(BigInt);
  // Every item gets at least its lower quota, so fewer than paid.length units are placed one by one.
  const parts = weights.map((w) => (w * r) / t);
  let left = r - parts.reduce((s, p) => s + p, 0n);
  while (left > 0n) {
    let best = -1;
    for (let i = 0; i < weights.length; i++) {
      if (parts[i]! >= weights[i]!) continue;
      if (best < 0 || weights[i]! * (parts[best]! + 1n) > weights[best]! * (parts[i]! + 1n)) best = i;
    }
    parts[best]! += 1n;
    left -= 1n;
  }
  return parts.map(Number);
}

/**
 * The refunded part of an item's sale price for what the provider refunded of what the buyer paid
 * for it: a full refund (or `full`) is the whole sale price, a partial one its share rounded down,
 * so a partial refund never reaches a full one by rounding.
 */
export function itemRefundTarget(item: { paidCents: number; salePriceCents: number }, refundedCents: number, full = false): number {
  if (full || refundedCents >= item.paidCents) return item.salePriceCents;
  if (refundedCents <= 0 || item.paidCents <= 0) return 0;
  const share = (BigInt(item.salePriceCents) * BigInt(refundedCents)) / BigInt(item.paidCents);
  return Math.min(Number(share), Math.max(0, item.salePriceCents - 1));
}
