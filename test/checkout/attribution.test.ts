import { describe, expect, it } from 'vitest';
import { ATTRIBUTION_CLOCK_SKEW_SECONDS, ReferralContextSigner, withinAttributionWindow } from '../../src/modules/referrals/referral-context.js';
import { TEST_LICENSE_KEY, useTestApp } from '../helpers/app.js';
import { balances, now, programs, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// The checkout reports `created` in whole seconds; a visit is stamped in milliseconds on another
// machine's clock. Attribution compares both in seconds, with a clock-skew tolerance before the visit.

describe('withinAttributionWindow', () => {
  it('compares in whole seconds with a five-minute tolerance before the visit', () => {
    expect(ATTRIBUTION_CLOCK_SKEW_SECONDS).toBe(300);
    const visit = { visitedAt: new Date('2026-03-01T12:00:00.750Z') };
    const cases: Array<[string, string, number, boolean]> = [
      ['the same second as the click (the checkout drops the milliseconds)', '2026-03-01T12:00:00Z', 30, true],
      ['a second after the click', '2026-03-01T12:00:01Z', 30, true],
      ['within the clock-skew tolerance before the click', '2026-03-01T11:55:00Z', 30, true],
      ['a second beyond the tolerance before the click', '2026-03-01T11:54:59Z', 30, false],
      ['the last second of the window', '2026-03-31T12:00:00Z', 30, true],
      ['a second after the window', '2026-03-31T12:00:01Z', 30, false],
      ['a zero-day window, the same second', '2026-03-01T12:00:00Z', 0, true],
      ['a zero-day window, a second later', '2026-03-01T12:00:01Z', 0, false],
    ];
    for (const [label, saleAt, days, expected] of cases) expect(withinAttributionWindow(visit, new Date(saleAt), days), label).toBe(expected);
  });

  it('never counts an invalid time or a negative window', () => {
    expect(withinAttributionWindow({ visitedAt: new Date(Number.NaN) }, new Date(), 30)).toBe(false);
    expect(withinAttributionWindow({ visitedAt: new Date() }, new Date(Number.NaN), 30)).toBe(false);
    expect(withinAttributionWindow({ visitedAt: new Date() }, new Date(), -1)).toBe(false);
  });
});

const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] } });
const referrals = new ReferralContextSigner([TEST_LICENSE_KEY]);

describe('a captured sale with a referral (POST /api/checkout/events)', () => {
  // `created` is taken once the workspace is seeded, a little ahead, so that the sale falls after the
  // seeded agreement took effect however long seeding took on a loaded machine; the visit is placed
  // relative to it.
  const attributed = async (visitedAtMs: (created: number) => number) => {
    const ws = await programs(ctx());
    const created = now() + 2;
    const aff = ws.ids.programs.aff!;
    const pbRef = referrals.sign({ agreementId: aff, workspaceId: ws.workspaceId, visitedAt: new Date(visitedAtMs(created)) });
    const res = await signedEvent(ctx(), { ...sale(ws, [{ product: 'p2', subtotal: 1000 }], { referral: pbRef }), created });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().outcome).toBe('recorded');
    return (await balances(ctx(), ws.workspaceId))[`partner_payable:${aff}`];
  };

  it('attributes a sale whose created falls in the same second as the click', async () => {
    // Clicked 999 ms into the second the checkout reports as the sale time.
    expect(await attributed((second) => second * 1000 + 999)).toBe(180n);
  });

  it('attributes a sale reported up to five minutes before the visit (clock skew) and not more', async () => {
    expect(await attributed((created) => (created + 299) * 1000 + 500)).toBe(180n);
    expect(await attributed((created) => (created + 301) * 1000)).toBeUndefined();
  });
});
