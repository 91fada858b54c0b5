import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyMoves,
  creditMoves,
  cumulativeReversal,
  debitMoves,
  reversalStep,
  splitSale,
  SplitInputError,
  type PartnerBuckets,
  type SplitAgreement,
} from '../../src/modules/ledger/split.js';

const amounts = (s: ReturnType<typeof splitSale>) => Object.fromEntries(s.parts.map((p) => [p.agreementId ? `${p.party}:${p.agreementId}` : p.party, p.amount]));
const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

describe('split of a managed-checkout sale (labelled cases)', () => {
  const cases: Array<{ name: string; subtotal: bigint; discount: bigint; agreements: SplitAgreement[]; want: Record<string, bigint> }> = [
    { name: 'no partners: 10 % platform, the rest to the developer', subtotal: 10000n, discount: 0n, agreements: [], want: { platform: 1000n, developer: 9000n } },
    {
      name: 'affiliate 20 % of what remains after the platform share',
      subtotal: 10000n,
      discount: 0n,
      agreements: [{ agreementId: 7, kind: 'affiliate', rateBps: 2000 }],
      want: { platform: 1000n, 'affiliate:7': 1800n, developer: 7200n },
    },
    {
      name: 'discount comes off before every share',
      subtotal: 4999n,
      discount: 1000n,
      agreements: [{ agreementId: 1, kind: 'collaborator', rateBps: 3333 }],
      // proceeds 3999, platform ⌊399.9⌋ = 399, distributable 3600, collaborator ⌊1199.88⌋ = 1199
      want: { platform: 399n, 'collaborator:1': 1199n, developer: 2401n },
    },
    {
      name: 'the platform share rounds down; the developer takes the remainder',
      subtotal: 9n,
      discount: 0n,
      agreements: [{ agreementId: 2, kind: 'affiliate', rateBps: 5000 }],
      want: { platform: 0n, 'affiliate:2': 4n, developer: 5n },
    },
    {
      name: 'one cent: nobody but the developer gets a whole cent',
      subtotal: 1n,
      discount: 0n,
      agreements: [{ agreementId: 3, kind: 'affiliate', rateBps: 9999 }],
      want: { platform: 0n, 'affiliate:3': 0n, developer: 1n },
    },
    {
      name: 'rates above 100 % together are capped in order: the later collaborator gets what is left',
      subtotal: 1000n,
      discount: 0n,
      agreements: [
        { agreementId: 4, kind: 'affiliate', rateBps: 6000 },
        { agreementId: 5, kind: 'collaborator', rateBps: 6000 },
      ],
      want: { platform: 100n, 'affiliate:4': 540n, 'collaborator:5': 360n, developer: 0n },
    },
    { name: 'a free item splits nothing', subtotal: 500n, discount: 500n, agreements: [{ agreementId: 6, kind: 'affiliate', rateBps: 1000 }], want: { platform: 0n, 'affiliate:6': 0n, developer: 0n } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const split = splitSale({ subtotal: c.subtotal, discount: c.discount, basis: 'managed', agreements: c.agreements });
      expect(amounts(split)).toEqual(c.want);
      expect(sum(split.parts.map((p) => p.amount))).toBe(c.subtotal - c.discount);
    });
  }

  it('takes external fees as given and leaves them with the seller', () => {
    const split = splitSale({ subtotal: 10000n, discount: 0n, basis: 'external', platformFee: 3000n, processingFee: 290n, agreements: [{ agreementId: 9, kind: 'collaborator', rateBps: 1000 }] });
    expect(amounts(split)).toEqual({ platform: 3000n, processing: 290n, 'collaborator:9': 671n, developer: 6039n });
  });

  it('names the field of bad input', () => {
    expect(() => splitSale({ subtotal: 10n, discount: 11n, basis: 'managed', agreements: [] })).toThrow(SplitInputError);
    try {
      splitSale({ subtotal: 10n, discount: 0n, basis: 'external', platformFee: 8n, processingFee: 3n, agreements: [] });
    } catch (e) {
      expect((e as SplitInputError).field).toBe('platform_fee_cents');
    }
  });
});

describe('refund reversal (labelled cases)', () => {
  it('a full refund reverses every part exactly', () => {
    expect(cumulativeReversal([1000n, 1800n, 7200n], 10000n)).toEqual([1000n, 1800n, 7200n]);
  });
  it('half a refund reverses half of each part', () => {
    expect(cumulativeReversal([1000n, 1800n, 7200n], 5000n)).toEqual([500n, 900n, 3600n]);
  });
  it('a one-cent refund takes the cent from the largest part', () => {
    expect(cumulativeReversal([1000n, 1800n, 7200n], 1n)).toEqual([0n, 0n, 1n]);
  });
  it('never takes from a part that is zero, even when it is the residual', () => {
    // platform 1, collaborator 9, developer 0: the developer is never reversed
    for (let r = 0n; r <= 10n; r++) expect(cumulativeReversal([1n, 9n, 0n], r)[2]).toBe(0n);
  });
  it('two partial refunds end where one refund of their sum would', () => {
    const parts = [399n, 1199n, 2401n];
    const first = reversalStep(parts, 0n, 1234n);
    const second = reversalStep(parts, 1234n, 3999n);
    expect(first.map((a, i) => a + second[i]!)).toEqual(parts);
  });
});

const partsArb = fc.array(fc.bigInt({ min: 0n, max: 10n ** 12n }), { minLength: 1, maxLength: 8 }).filter((ps) => sum(ps) > 0n);

describe('properties', () => {
  const agreementsArb = fc.array(fc.record({ agreementId: fc.integer({ min: 1, max: 1000 }), kind: fc.constantFrom('affiliate' as const, 'collaborator' as const), rateBps: fc.integer({ min: 0, max: 10000 }) }), { maxLength: 6 });

  it('the parts of a sale sum to its proceeds and none is negative', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: 10n ** 12n }), agreementsArb, (a, b, agreements) => {
        const [subtotal, discount] = a >= b ? [a, b] : [b, a];
        const split = splitSale({ subtotal, discount, basis: 'managed', agreements });
        expect(sum(split.parts.map((p) => p.amount))).toBe(subtotal - discount);
        for (const p of split.parts) expect(p.amount >= 0n).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('reversals never exceed a part, sum to the refund and grow with it', () => {
    fc.assert(
      fc.property(partsArb, fc.bigInt({ min: 0n, max: 10n ** 12n }), (parts, x) => {
        const net = sum(parts);
        const r = x % (net + 1n);
        const taken = cumulativeReversal(parts, r);
        expect(sum(taken)).toBe(r);
        taken.forEach((t, i) => expect(t >= 0n && t <= parts[i]!).toBe(true));
        if (r < net) {
          const next = cumulativeReversal(parts, r + 1n);
          next.forEach((t, i) => expect(t >= taken[i]!).toBe(true));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('n partial refunds reverse what one refund of their sum does', () => {
    fc.assert(
      fc.property(partsArb, fc.array(fc.bigInt({ min: 0n, max: 10n ** 12n }), { minLength: 1, maxLength: 6 }), (parts, cuts) => {
        const net = sum(parts);
        const points = [...new Set(cuts.map((c) => c % (net + 1n)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        let before = 0n;
        const total = parts.map(() => 0n);
        for (const p of points) {
          reversalStep(parts, before, p).forEach((s, i) => {
            expect(s >= 0n).toBe(true);
            total[i] = total[i]! + s;
          });
          before = p;
        }
        expect(total).toEqual(cumulativeReversal(parts, before));
      }),
      { numRuns: 300 },
    );
  });

  it('matches the seat-by-seat D’Hondt allocation on small sales', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 40n }), { minLength: 1, maxLength: 5 }).filter((ps) => sum(ps) > 0n), (parts) => {
        const seats = parts.map(() => 0n);
        for (let r = 1n; r <= sum(parts); r++) {
          let best = -1;
          parts.forEach((p, i) => {
            if (seats[i]! < p && (best < 0 || p * (seats[best]! + 1n) > parts[best]! * (seats[i]! + 1n))) best = i;
          });
          seats[best] = seats[best]! + 1n;
          expect(cumulativeReversal(parts, r)).toEqual(seats);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a partner balance never goes negative: what a reversal cannot take becomes a recorded recovery, netted before anything is payable', () => {
    const step = fc.record({ credit: fc.boolean(), amount: fc.bigInt({ min: 0n, max: 10n ** 9n }), live: fc.boolean(), payout: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        let b: PartnerBuckets = { pending: 0n, payable: 0n, recovery: 0n };
        for (const s of steps) {
          if (s.payout) b = { ...b, payable: 0n };
          else if (s.credit) b = applyMoves(b, creditMoves(b, s.amount, s.live), 1n);
          else b = applyMoves(b, debitMoves(b, s.amount), -1n);
          expect(b.pending >= 0n && b.payable >= 0n && b.recovery >= 0n).toBe(true);
          // Something is payable only once nothing is owed.
          if (b.payable > 0n) expect(b.recovery).toBe(0n);
        }
      }),
      { numRuns: 300 },
    );
  });
});
