import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { ReferralContextSigner } from '../../src/modules/referrals/referral-context.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { balances, now, programs, refund, sale, signedEvent, WEBHOOK_SECRET } from '../checkout/checkout-helpers.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, checkout: { webhookSecrets: [WEBHOOK_SECRET] } });
const referrals = new ReferralContextSigner([TEST_LICENSE_KEY]);
const POLICY = 'patchbay-managed-live-v1';

afterEach(async () => {
  // The ledger invariant after every test: each transaction sums to zero per currency.
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('POST /api/checkout/events', () => {
  it('records a sale as a purchase and books its split: platform 10 %, affiliate, collaborator, developer residual', async () => {
    const ws = await programs(ctx());
    const aff = ws.ids.programs.aff!;
    const co = ws.ids.programs.co!;
    const pbRef = referrals.sign({ agreementId: aff, workspaceId: ws.workspaceId, visitedAt: new Date(Date.now() - 3_600_000) });
    const event = sale(ws, [{ product: 'p1', subtotal: 10000 }], { referral: pbRef });
    const res = await signedEvent(ctx(), event);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ received: true, outcome: 'recorded' });
    // proceeds 10000; platform 1000; affiliate 20 % of 9000 = 1800; collaborator 30 % of 9000 = 2700; developer 4500
    expect(await balances(ctx(), ws.workspaceId)).toEqual({
      checkout_clearing: -10000n,
      platform_share: 1000n,
      developer_earnings: 4500n,
      [`partner_payable:${aff}`]: 1800n,
      [`partner_payable:${co}`]: 2700n,
    });
    const purchases = await ctx().app.inject({ method: 'GET', url: '/api/developer/purchases', headers: bearer(ws.owner) });
    expect(purchases.json().rows[0]).toMatchObject({ channel: 'managed_checkout', sale_price_cents: 10000 });
    await ctx().app.jobs.idle();
    expect(transport.sent.some((m) => m.to === event.data.customer.email)).toBe(true);
  });

  it('answers a replay with the same id as replayed and changes nothing', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 5000 }]);
    expect((await signedEvent(ctx(), event)).json().outcome).toBe('recorded');
    const before = await balances(ctx(), ws.workspaceId);
    const again = await signedEvent(ctx(), event);
    expect(again.statusCode).toBe(200);
    expect(again.json().outcome).toBe('replayed');
    expect(await balances(ctx(), ws.workspaceId)).toEqual(before);
  });

  it('refuses a missing, malformed, wrong or stale signature with 400 WEBHOOK_SIGNATURE_INVALID and records nothing', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 5000 }]);
    const body = JSON.stringify(event);
    const cases = [
      { header: '' },
      { header: 't=abc,v1=zz' },
      { secret: 'whsec_someone_else_0123456789abcdef0123' },
      { at: now() - 301 },
      { header: signCheckoutPayload(WEBHOOK_SECRET, body.replace('5000', '5001'), now()) },
    ];
    for (const c of cases) {
      const res = await signedEvent(ctx(), event, c);
      expect(res.statusCode, JSON.stringify(c)).toBe(400);
      expect(res.json().code).toBe('WEBHOOK_SIGNATURE_INVALID');
    }
    const recorded = await sql<{ n: number }>`select count(*)::int as n from checkout_events where id = ${event.id}`.execute(ctx().database.db);
    expect(recorded.rows[0]!.n).toBe(0);
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
  });

  it('accepts any of several v1 signatures during a secret rotation', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p2', subtotal: 100 }]);
    const body = JSON.stringify(event);
    const t = now();
    const old = signCheckoutPayload('whsec_old_secret_0123456789abcdef01234567', body, t).split(',')[1];
    const header = `${signCheckoutPayload(WEBHOOK_SECRET, body, t)},${old}`;
    expect((await signedEvent(ctx(), event, { header })).statusCode).toBe(200);
  });

  it('acknowledges unknown event types and records nothing else', async () => {
    const res = await signedEvent(ctx(), { id: `evt_${unique()}`, type: 'payout.updated', created: now(), data: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json().outcome).toBe('ignored');
  });

  it('refuses bad sale data with 400 naming the field, and another workspace’s product with 404', async () => {
    const ws = await programs(ctx());
    const other = await seedWorkspace(ctx());
    const bad = sale(ws, [{ product: 'p1', subtotal: 100, discount: 200 }]);
    const res = await signedEvent(ctx(), bad);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('body/data/items/0/discount_cents');
    const noCurrency = sale(ws, [{ product: 'p1', subtotal: 100 }]);
    (noCurrency.data as { currency: string }).currency = 'dollars';
    expect((await signedEvent(ctx(), noCurrency)).statusCode).toBe(400);
    const foreign = sale(ws, [{ product: 'p1', subtotal: 100 }]);
    foreign.data.items[0]!.product_id = other.ids.products.p1!;
    expect((await signedEvent(ctx(), foreign)).statusCode).toBe(404);
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
  });

  it('ignores a referral context that does not verify, or names another workspace, and attributes nothing', async () => {
    const ws = await programs(ctx());
    const other = await programs(ctx());
    const forged = referrals.sign({ agreementId: ws.ids.programs.aff!, workspaceId: other.workspaceId, visitedAt: new Date() });
    await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 1000 }], { referral: forged }));
    await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 1000 }], { referral: 'not-a-context' }));
    const b = await balances(ctx(), ws.workspaceId);
    expect(b[`partner_payable:${ws.ids.programs.aff}`]).toBeUndefined();
    expect(b.developer_earnings).toBe(1800n);
  });

  it('attributes a sale only inside the attribution window of the visit', async () => {
    const ws = await programs(ctx());
    const aff = ws.ids.programs.aff!;
    const old = referrals.sign({ agreementId: aff, workspaceId: ws.workspaceId, visitedAt: new Date(Date.now() - 31 * 86_400_000) });
    await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 1000 }], { referral: old }));
    expect((await balances(ctx(), ws.workspaceId))[`partner_payable:${aff}`]).toBeUndefined();
    const recent = referrals.sign({ agreementId: aff, workspaceId: ws.workspaceId, visitedAt: new Date(Date.now() - 29 * 86_400_000) });
    await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 1000 }], { referral: recent }));
    expect((await balances(ctx(), ws.workspaceId))[`partner_payable:${aff}`]).toBe(180n);
  });
});

describe('refunds', () => {
  it('reverses the saved shares cumulatively: two partial refunds end where one full refund would', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 9999 }]);
    await signedEvent(ctx(), event);
    const first = await signedEvent(ctx(), refund(ws, event.data.order_id, 'p1', 3333));
    expect(first.statusCode, first.body).toBe(200);
    await signedEvent(ctx(), refund(ws, event.data.order_id, 'p1', 6666));
    const b = await balances(ctx(), ws.workspaceId);
    for (const [account, total] of Object.entries(b)) expect(total, account).toBe(0n);
    const row = await sql<{ refund_status: string }>`select refund_status from order_items where workspace_id = ${ws.workspaceId}`.execute(ctx().database.db);
    expect(row.rows[0]!.refund_status).toBe('full');
  });

  it('refuses refunds beyond what was paid with 409 and changes nothing', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    await signedEvent(ctx(), event);
    const before = await balances(ctx(), ws.workspaceId);
    const res = await signedEvent(ctx(), refund(ws, event.data.order_id, 'p1', 1001));
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('REFUND_EXCEEDS_PAYMENT');
    expect(await balances(ctx(), ws.workspaceId)).toEqual(before);
    expect((await signedEvent(ctx(), refund(ws, 'ord_unknown', 'p1', 1))).statusCode).toBe(404);
  });
});

describe('pending until live', () => {
  it('accrues shares as pending without both consents and releases them as payable once consent completes', async () => {
    const ws = await programs(ctx(), ['recipient']);
    const co = ws.ids.programs.co!;
    await signedEvent(ctx(), sale(ws, [{ product: 'p1', subtotal: 10000 }]));
    expect((await balances(ctx(), ws.workspaceId))[`partner_pending:${co}`]).toBe(2700n);
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/api/developer/partners/programs/${co}/live-consent`,
      headers: bearer(ws.owner),
      payload: { accept: true, terms_version: 1, policy_version: POLICY },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().live_terms_consented).toBe(true);
    await ctx().app.jobs.idle();
    const b = await balances(ctx(), ws.workspaceId);
    expect(b[`partner_pending:${co}`]).toBe(0n);
    expect(b[`partner_payable:${co}`]).toBe(2700n);
  });
});

describe('the ledger is guarded by the database', () => {
  it('refuses to commit a transaction whose entries do not sum to zero', async () => {
    const ws = await seedWorkspace(ctx());
    await expect(
      inTransaction(ctx().database.db, async (tx) => {
        const t = await sql<{ id: number }>`insert into ledger_transactions (workspace_id, kind) values (${ws.workspaceId}, 'sale') returning id`.execute(tx);
        await sql`insert into ledger_entries (transaction_id, workspace_id, account, currency, amount) values (${t.rows[0]!.id}, ${ws.workspaceId}, 'platform_share', 'usd', 5)`.execute(tx);
      }),
    ).rejects.toThrow(/does not balance/);
  });

  it('rejects UPDATE and DELETE of entries and transactions', async () => {
    const ws = await programs(ctx());
    await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 100 }]));
    const db = ctx().database.db;
    await expect(sql`update ledger_entries set amount = amount + 1 where workspace_id = ${ws.workspaceId}`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from ledger_entries where workspace_id = ${ws.workspaceId}`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from ledger_transactions where workspace_id = ${ws.workspaceId}`.execute(db)).rejects.toThrow(/append-only/);
  });
});

describe.runIf(onPostgres)('in parallel (PostgreSQL)', () => {
  it('records an event delivered five times at once exactly once', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 10000 }]);
    const answers = await Promise.all(Array.from({ length: 5 }, () => signedEvent(ctx(), event)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.filter((a) => a.json().outcome === 'recorded')).toHaveLength(1);
    expect((await balances(ctx(), ws.workspaceId)).checkout_clearing).toBe(-10000n);
  });

  it('keeps every balance exact under parallel sales and refunds of one collaborator', async () => {
    const ws = await programs(ctx());
    const co = ws.ids.programs.co!;
    const sales = Array.from({ length: 20 }, () => sale(ws, [{ product: 'p1', subtotal: 1000 }]));
    expect((await Promise.all(sales.map((e) => signedEvent(ctx(), e)))).every((r) => r.statusCode === 200)).toBe(true);
    const refunds = sales.slice(0, 10).map((e) => refund(ws, e.data.order_id, 'p1', 1000));
    expect((await Promise.all(refunds.map((e) => signedEvent(ctx(), e)))).every((r) => r.statusCode === 200)).toBe(true);
    // 10 sales remain: collaborator 30 % of 900 each.
    expect((await balances(ctx(), ws.workspaceId))[`partner_payable:${co}`]).toBe(2700n);
  });
});

describe('without a webhook secret', () => {
  it('has no checkout route (404)', async () => {
    const c = await buildTestApp();
    try {
      const res = await signedEvent(c, { id: 'evt_x', type: 'sale.captured', created: now(), data: {} });
      expect(res.statusCode).toBe(404);
    } finally {
      await c.app.close();
      await c.database.close();
    }
  });
});
