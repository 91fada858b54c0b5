import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { bearer, type SeededWorkspace, type TestContext, unique, useTestApp } from '../helpers/app.js';
import { CHECKOUT_SECRET, collaboration, postCheckoutEvent, sell } from '../payouts/partner-money.js';

// The partner portal's allocation and reversal rows (issue 21): the partner's own part of each
// split, paged on the server, never another party's share or the buyer.

const ctx = useTestApp({ checkout: { webhookSecrets: [CHECKOUT_SECRET] } });
const ENTRIES = '/api/partner-portal/programs/accounting/entries';
const now = () => Math.floor(Date.now() / 1000);

const refund = (c: TestContext, ws: SeededWorkspace, orderId: string, product: string, cents: number) =>
  postCheckoutEvent(c, { id: `evt_${unique()}`, type: 'refund.created', created: now(), data: { workspace_id: ws.workspaceId, order_id: orderId, product_id: ws.ids.products[product], amount_cents: cents } });

const entries = (c: TestContext, session: string | null, query = '') => c.app.inject({ method: 'GET', url: `${ENTRIES}${query}`, headers: session ? bearer(session) : {} });

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('GET /api/partner-portal/programs/accounting/entries', () => {
  it('lists the partner’s own share of each sale, newest first, with what a refund reversed', async () => {
    const c = ctx();
    const { ws, session, co } = await collaboration(c);
    const first = await sell(c, ws, 'p1', 10000);
    await sell(c, ws, 'p1', 2000);
    await refund(c, ws, first, 'p1', 5000);
    await c.app.jobs.idle();

    const res = await entries(c, session);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 2, page: 1, pageSize: 50 });
    expect(body.rows[0]).toMatchObject({ agreement_id: co, party: 'collaborator', program_name: 'Co', currency: 'usd', basis: 'managed', funded: true, proceeds_cents: 2000, rate_bps: 5000, amount_cents: 900, reversed_cents: 0, net_cents: 900 });
    expect(body.rows[1]).toMatchObject({ agreement_id: co, proceeds_cents: 10000, refunded_cents: 5000, amount_cents: 4500, reversed_cents: 2250, net_cents: 2250 });
    expect(typeof body.rows[0].product_name).toBe('string');
    expect(typeof body.rows[0].workspace_name).toBe('string');
    // Nothing of another party or the buyer.
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/customer\.test|parts|developer|platform_fee|order/);

    const reversals = await entries(c, session, '?reversals=true');
    expect(reversals.json()).toMatchObject({ total: 1, rows: [{ proceeds_cents: 10000, reversed_cents: 2250 }] });

    const paged = await entries(c, session, '?page=2&pageSize=1');
    expect(paged.json()).toMatchObject({ total: 2, page: 2, pageSize: 1, rows: [{ proceeds_cents: 10000 }] });
    expect((await entries(c, session, `?agreement_id=${co}`)).json().total).toBe(2);
    expect((await entries(c, session, '?currency=USD')).json().total).toBe(2);
    expect((await entries(c, session, '?currency=eur&reversals=true')).json()).toMatchObject({ total: 0, rows: [] });
  });

  it('shows one partner nothing of another’s rows', async () => {
    const c = ctx();
    const a = await collaboration(c);
    const b = await collaboration(c);
    await sell(c, a.ws, 'p1', 10000);
    await c.app.jobs.idle();
    expect((await entries(c, b.session)).json()).toMatchObject({ total: 0, rows: [] });
    expect((await entries(c, a.session)).json().total).toBe(1);
  });

  it('answers 401 without a recipient session (a developer’s token is not one)', async () => {
    const c = ctx();
    const { ws } = await collaboration(c);
    expect((await entries(c, null)).statusCode).toBe(401);
    expect((await entries(c, ws.owner)).statusCode).toBe(401);
  });

  it('answers 404 for another recipient’s agreement or an unknown one', async () => {
    const c = ctx();
    const a = await collaboration(c);
    const b = await collaboration(c);
    const res = await entries(c, a.session, `?agreement_id=${b.co}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
    expect((await entries(c, a.session, '?agreement_id=2000000000')).statusCode).toBe(404);
  });

  it('refuses bad paging and unknown parameters with 400 VALIDATION_FAILED', async () => {
    const c = ctx();
    const { session } = await collaboration(c);
    for (const query of ['?page=0', '?page=x', '?pageSize=0', '?pageSize=201', '?agreement_id=0', '?reversals=maybe', '?currency=us', '?currency=us1', '?limit=5']) {
      const res = await entries(c, session, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });
});
