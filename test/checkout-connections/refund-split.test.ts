import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itemRefundTarget, spreadOrderRefund } from '../../src/modules/checkout-connections/refund-split.js';

// The refund arithmetic of connected stores: an order-level refund spread over its items, and what
// a refund of what the buyer paid (tax included) means for an item's sale price (tax excluded).

describe('spreadOrderRefund', () => {
  const cases: Array<[string, number[], number, number[]]> = [
    ['nothing refunded', [6000, 4000], 0, [0, 0]],
    ['a quarter of an order, divisible', [6000, 4000], 2500, [1500, 1000]],
    ['the whole order', [6000, 4000], 10000, [6000, 4000]],
    ['more than the order (a report beyond it) is the whole order', [6000, 4000], 12000, [6000, 4000]],
    ['one cent over three equal items goes to the first', [100, 100, 100], 1, [1, 0, 0]],
    ['two cents over three equal items go to the first two', [100, 100, 100], 2, [1, 1, 0]],
    ['a remainder goes to the larger item', [999, 1], 500, [500, 0]],
    ['a free item in the order takes nothing', [0, 1200], 600, [0, 600]],
    ['one item', [1199], 600, [600]],
    ['an order of nothing', [0, 0], 10, [0, 0]],
  ];
  it.each(cases)('%s', (_label, paid, refunded, expected) => {
    expect(spreadOrderRefund(paid, refunded)).toEqual(expected);
  });

  const orders = fc.array(fc.integer({ min: 0, max: 2_000_000_000 / 20 }), { minLength: 1, maxLength: 20 });

  it('sums to the refunded total (at most the order) and never exceeds an item', () => {
    fc.assert(
      fc.property(orders, fc.nat(), (paid, raw) => {
        const total = paid.reduce((s, p) => s + p, 0);
        const refunded = total === 0 ? 0 : raw % (total + 2);
        const parts = spreadOrderRefund(paid, refunded);
        expect(parts.reduce((s, p) => s + p, 0)).toBe(Math.min(refunded, total));
        parts.forEach((p, i) => {
          expect(p).toBeGreaterThanOrEqual(0);
          expect(p).toBeLessThanOrEqual(paid[i]!);
        });
      }),
    );
  });

  it('never lowers an item’s part as the order’s refunded total grows', () => {
    fc.assert(
      fc.property(orders, fc.nat(), fc.nat(), (paid, a, b) => {
        const total = paid.reduce((s, p) => s + p, 0) + 1;
        const [low, high] = [a % total, b % total].sort((x, y) => x - y) as [number, number];
        const before = spreadOrderRefund(paid, low);
        const after = spreadOrderRefund(paid, high);
        after.forEach((p, i) => expect(p).toBeGreaterThanOrEqual(before[i]!));
      }),
    );
  });
});

describe('itemRefundTarget', () => {
  const item = { paidCents: 1200, salePriceCents: 1000 };
  const cases: Array<[string, number, boolean, number]> = [
    ['nothing refunded', 0, false, 0],
    ['half of what was paid is half of the sale price', 600, false, 500],
    ['all that was paid is the whole sale price', 1200, false, 1000],
    ['more than was paid is the whole sale price', 1500, false, 1000],
    ['a share is rounded down', 1, false, 0],
    ['a partial refund stays partial even when its share rounds to the whole', 1199, false, 999],
    ['a refund marked full is the whole sale price whatever the amount', 1, true, 1000],
  ];
  it.each(cases)('%s', (_label, refunded, full, expected) => {
    expect(itemRefundTarget(item, refunded, full)).toBe(expected);
  });

  it('a free item has nothing to refund', () => {
    expect(itemRefundTarget({ paidCents: 0, salePriceCents: 0 }, 0)).toBe(0);
    expect(itemRefundTarget({ paidCents: 0, salePriceCents: 0 }, 0, true)).toBe(0);
  });

  it('stays below the sale price for a partial refund and rises with the refund', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000_000_000 }), fc.integer({ min: 1, max: 2_000_000_000 }), fc.nat(), fc.nat(), (paid, sale, a, b) => {
        const [low, high] = [a % paid, b % paid].sort((x, y) => x - y) as [number, number];
        const lowTarget = itemRefundTarget({ paidCents: paid, salePriceCents: sale }, low);
        const highTarget = itemRefundTarget({ paidCents: paid, salePriceCents: sale }, high);
        expect(highTarget).toBeLessThan(sale);
        expect(highTarget).toBeGreaterThanOrEqual(lowTarget);
      }),
    );
  });
});
