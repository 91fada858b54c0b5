import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, type SeededWorkspace, type TestContext, unique, useTestApp } from '../helpers/app.js';
import { accounting, CHECKOUT_SECRET, collaboration, postCheckoutEvent, sell, wallet } from '../payouts/partner-money.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, checkout: { webhookSecrets: [CHECKOUT_SECRET] } });
const PROGRAMS = '/api/developer/partners/programs';

const now = () => Math.floor(Date.now() / 1000);

const refund = (c: TestContext, ws: SeededWorkspace, orderId: string, product: string, cents: number) =>
  postCheckoutEvent(c, { id: `evt_${unique()}`, type: 'refund.created', created: now(), data: { workspace_id: ws.workspaceId, order_id: orderId, product_id: ws.ids.products[product], amount_cents: cents } });

async function payoutRun(c: TestContext) {
  const result = await c.app.transfers.run(false);
  await c.app.jobs.idle();
  return result;
}

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('POST /api/developer/partners/programs/preview', () => {
  it('computes the managed split itself and shows funded shares and the payout plan, writing nothing', async () => {
    const { ws, co } = await collaboration(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: `${PROGRAMS}/preview`,
      headers: bearer(ws.owner),
      payload: { product_id: ws.ids.products.p1, subtotal_cents: 10000, discount_cents: 1000, currency: 'USD', platform_fee_cents: 900, processing_fee_cents: 0, cumulative_refund_product_cents: 4500 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ mode: 'preview', payable: false, basis: 'managed', currency: 'usd' });
    // proceeds 9000, platform 900, collaborator 50 % of 8100 = 4050, developer 4050; half refunded reverses half of each.
    expect(body.allocation).toMatchObject({ proceeds_cents: 9000, platform_fee_cents: 900, distributable_cents: 8100, funded_partner_cents: 4050, unfunded_estimate_cents: 0 });
    expect(body.allocation.parts.map((p: { party: string; amount_cents: number; reversed_cents: number }) => [p.party, p.amount_cents, p.reversed_cents])).toEqual([
      ['platform', 900, 450],
      ['collaborator', 4050, 2025],
      ['developer', 4050, 2025],
    ]);
    expect(body.payoutPlan).toEqual([{ agreement_id: co, party: 'collaborator', amount_cents: 2025, funded: true, when: 'payable after capture' }]);
    const written = await sql<{ n: number }>`select count(*)::int as n from partner_allocations where workspace_id = ${ws.workspaceId}`.execute(ctx().database.db);
    expect(written.rows[0]!.n).toBe(0);
  });

  it('refuses a managed platform fee or processing fee other than the policy’s, naming the field and the expected value', async () => {
    const { ws } = await collaboration(ctx());
    const base = { product_id: ws.ids.products.p1, subtotal_cents: 10000, discount_cents: 0, currency: 'usd' };
    const fee = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/preview`, headers: bearer(ws.owner), payload: { ...base, platform_fee_cents: 300 } });
    expect(fee.statusCode).toBe(400);
    expect(fee.json()).toMatchObject({ code: 'VALIDATION_FAILED', expected_platform_fee_cents: 1000 });
    expect(fee.json().errors[0].path).toBe('body/platform_fee_cents');
    const processing = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/preview`, headers: bearer(ws.owner), payload: { ...base, processing_fee_cents: 290 } });
    expect(processing.statusCode).toBe(400);
    expect(processing.json().errors[0].path).toBe('body/processing_fee_cents');
  });

  it('takes an external basis’s fees as given and marks the partner share an unfunded estimate', async () => {
    const ws = await seedWorkspace(ctx(), {
      programs: [{ key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `x-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 1000 }], includeResellerSales: true, status: 'active' }],
    });
    const res = await ctx().app.inject({
      method: 'POST',
      url: `${PROGRAMS}/preview`,
      headers: bearer(ws.owner),
      payload: { product_id: ws.ids.products.p1, subtotal_cents: 10000, discount_cents: 0, platform_fee_cents: 3000, processing_fee_cents: 290, currency: 'eur', collection_provider: 'reseller' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ basis: 'external', allocation: { distributable_cents: 6710, funded_partner_cents: 0, unfunded_estimate_cents: 671 } });
    expect(res.json().payoutPlan[0]).toMatchObject({ funded: false, when: 'never: an unfunded external estimate' });
  });

  it('answers bad input with 400 naming the field, and another workspace’s agreement or product with 404', async () => {
    const { ws } = await collaboration(ctx());
    const other = await seedWorkspace(ctx(), { programs: [{ key: 'aff', kind: 'affiliate', name: 'A', recipientEmail: `a-${unique()}@partner.test`, rateBps: 1000, status: 'active' }] });
    const base = { product_id: ws.ids.products.p1, subtotal_cents: 1000, discount_cents: 0, currency: 'usd' };
    const cases: Array<[object, number, string?]> = [
      [{ ...base, subtotal_cents: -1 }, 400, 'subtotal_cents'],
      [{ ...base, discount_cents: 1001 }, 400, 'discount_cents'],
      [{ ...base, currency: 'dollars' }, 400, 'currency'],
      [{ ...base, cumulative_refund_product_cents: 1001 }, 400, 'cumulative_refund_product_cents'],
      [{ ...base, affiliate_agreement_id: other.ids.programs.aff }, 404],
      [{ ...base, product_id: other.ids.products.p1 }, 404],
    ];
    for (const [payload, status, field] of cases) {
      const res = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/preview`, headers: bearer(ws.owner), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      if (field) expect(JSON.stringify(res.json().errors)).toContain(field);
    }
  });
});

describe('sale → consent → payout run → paid', () => {
  it('pays a live partner’s payable balance to a ready destination once the provider confirms', async () => {
    const { ws, session, co, email } = await collaboration(ctx(), { consents: ['recipient'] });
    await sell(ctx(), ws, 'p1', 10000);
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ allocated_cents: 4500, pending_cents: 4500, payable_cents: 0 });
    // Pending: nothing is transferred before live consent.
    expect((await wallet(ctx(), session)).statusCode).toBe(200);
    expect((await payoutRun(ctx())).submitted).toBe(0);

    const consent = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/${co}/live-consent`, headers: bearer(ws.owner), payload: { accept: true, terms_version: 1, policy_version: 'patchbay-managed-live-v1' } });
    expect(consent.statusCode).toBe(200);
    await ctx().app.jobs.idle();
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ pending_cents: 0, payable_cents: 4500 });

    const run = await payoutRun(ctx());
    expect(run.submitted).toBeGreaterThanOrEqual(1);
    const { body, partner } = await accounting(ctx(), ws, co);
    expect(partner).toMatchObject({ payable_cents: 0, in_transfer_cents: 0, paid_cents: 4500 });
    expect(body.transfers[0]).toMatchObject({ agreement_id: co, amount_cents: 4500, status: 'paid', provider: 'wallet' });
    expect(body.destinations[0]).toMatchObject({ provider: 'wallet', ready: true });
    // Masked: the developer never sees the partner's full payout address.
    expect(JSON.stringify(body.destinations)).not.toContain(email.split('@')[0]!);

    // The recipient sees the same, and only their own.
    const mine = await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs/accounting', headers: bearer(session) });
    expect(mine.statusCode).toBe(200);
    expect(mine.json().balance_details).toEqual([expect.objectContaining({ agreement_id: co, paid_cents: 4500 })]);
    expect(mine.json().transfers).toHaveLength(1);
  });

  it('returns a failed transfer to payable', async () => {
    const { ws, session, co } = await collaboration(ctx(), { email: `co-${unique()}+fail@partner.test` });
    await sell(ctx(), ws, 'p1', 10000);
    expect((await wallet(ctx(), session)).statusCode).toBe(200);
    await payoutRun(ctx());
    const { body, partner } = await accounting(ctx(), ws, co);
    expect(body.transfers[0]).toMatchObject({ status: 'failed' });
    expect(partner).toMatchObject({ payable_cents: 4500, in_transfer_cents: 0, paid_cents: 0 });
  });

  it('waits for the security hold of a changed destination', async () => {
    const { ws, session, co } = await collaboration(ctx());
    await sell(ctx(), ws, 'p1', 10000);
    const card = await ctx().app.inject({ method: 'POST', url: '/api/partner-portal/programs/payouts/card-provider', headers: bearer(session), payload: { livemode: false } });
    expect(card.statusCode, card.body).toBe(200);
    // Complete the sandbox onboarding by visiting its page, then change to the wallet: a hold starts.
    const url = new URL(card.json().url);
    const page = await ctx().app.inject({ method: 'POST', url: url.pathname });
    expect(page.statusCode, page.body).toBeLessThan(400);
    const changed = await wallet(ctx(), session);
    expect(changed.statusCode).toBe(200);
    expect(changed.json().hold_until).not.toBeNull();
    const run = await payoutRun(ctx());
    expect(run.skipped).toContainEqual({ agreement_id: co, currency: 'usd', reason: 'destination_on_hold' });
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ payable_cents: 4500, paid_cents: 0 });
  });
});

describe('patchbay payouts run', () => {
  it('runs the same payout run and prints it as JSON', async () => {
    const { COMMANDS } = await import('../../src/cli/commands.js');
    const { ws, session, co } = await collaboration(ctx());
    await sell(ctx(), ws, 'p1', 10000);
    expect((await wallet(ctx(), session)).statusCode).toBe(200);
    const printed: unknown[] = [];
    const command = COMMANDS.find((c) => c.name === 'payouts run')!;
    await command.run(
      { config: { publicBaseUrl: 'http://patchbay.test', payouts: { minimumMinorUnits: 1000 } } as never, jwt: {} as never, db: async () => ctx().database.db, print: (v) => printed.push(v) },
      {},
      [],
    );
    expect(printed[0]).toMatchObject({ livemode: false, submitted: expect.any(Number) });
    await ctx().app.jobs.idle();
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ paid_cents: 4500 });
  });
});

describe('refunds before and after a payout', () => {
  it('takes a refund before payout from the payable balance', async () => {
    const { ws, co } = await collaboration(ctx());
    const order = await sell(ctx(), ws, 'p1', 10000);
    await refund(ctx(), ws, order, 'p1', 10000);
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ allocated_cents: 4500, reversed_cents: 4500, payable_cents: 0, recovery_outstanding_cents: 0 });
  });

  it('leaves the partner owing after a refund of paid money, and nets it against the next sale before anything is payable', async () => {
    const { ws, session, co } = await collaboration(ctx());
    const order = await sell(ctx(), ws, 'p1', 10000);
    expect((await wallet(ctx(), session)).statusCode).toBe(200);
    await payoutRun(ctx());
    await refund(ctx(), ws, order, 'p1', 4000);
    // 4000 of 10000 refunded: the collaborator's 4500 gives back 1800, all of it owed (it was paid out).
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ paid_cents: 4500, payable_cents: 0, recovery_outstanding_cents: 1800 });
    await sell(ctx(), ws, 'p1', 2000); // collaborator share 900: all of it pays off the recovery
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ payable_cents: 0, recovery_outstanding_cents: 900 });
    await sell(ctx(), ws, 'p1', 4000); // share 1800: 900 more recovery, 900 payable
    expect((await accounting(ctx(), ws, co)).partner).toMatchObject({ payable_cents: 900, recovery_outstanding_cents: 0 });
  });
});

describe('sales collected elsewhere', () => {
  it('estimates a reseller-sharing collaborator’s share of imported sales as unfunded, never payable', async () => {
    const ws = await seedWorkspace(ctx(), {
      programs: [{ key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `x-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 1000 }], includeResellerSales: true, status: 'active', consents: ['developer', 'recipient'] }],
    });
    const co = ws.ids.programs.co!;
    const purchasedAt = new Date(Date.now() + 60_000).toISOString();
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/import',
      headers: bearer(ws.owner),
      payload: { purchases: [{ email: `b-${unique()}@customer.test`, productId: ws.ids.products.p1, salePrice: '50.00', purchasedAt, externalReference: `ext-${unique()}` }] },
    });
    expect(res.statusCode, res.body).toBe(201);
    await ctx().app.jobs.idle();
    const { body, partner } = await accounting(ctx(), ws, co);
    expect(body.unfunded_earnings).toEqual([expect.objectContaining({ agreement_id: co, estimated_cents: 500, funded: false, payable: false })]);
    expect(partner).toBeUndefined();
    expect(body.external).toEqual([{ currency: 'usd', estimated_partner_cents: 500, funded: false }]);
  });
});

describe('accounting access', () => {
  it('needs partners.view on all products (403), answers 401 without a token and 404 when partner programs are off', async () => {
    const { ws } = await collaboration(ctx(), { members: [{ key: 'none', permissions: ['products.view'], products: 'all' }, { key: 'scoped', permissions: ['partners.view'], products: ['p1'] }] });
    for (const url of [`${PROGRAMS}/accounting`]) {
      expect((await ctx().app.inject({ method: 'GET', url })).statusCode).toBe(401);
      expect((await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.none!) })).statusCode).toBe(403);
      expect((await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.scoped!) })).statusCode).toBe(403);
    }
    const off = await seedWorkspace(ctx(), { partnerProgramsEnabled: false });
    expect((await ctx().app.inject({ method: 'GET', url: `${PROGRAMS}/accounting`, headers: bearer(off.owner) })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs/accounting' })).statusCode).toBe(401);
  });

  it('shows one workspace nothing of another’s money', async () => {
    const a = await collaboration(ctx());
    const b = await collaboration(ctx());
    await sell(ctx(), a.ws, 'p1', 10000);
    const res = await accounting(ctx(), b.ws, b.co);
    expect(res.body.funded).toEqual([]);
    expect(res.body.allocations.total).toBe(0);
    const portal = await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs/accounting', headers: bearer(b.session) });
    expect(portal.json().balance_details).toEqual([]);
  });
});
