import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { balances, connect, deliver, entitlementStatus, events, lemonOrder, purchases, serialOf } from './helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

const orderId = () => String(Math.floor(Math.random() * 1_000_000_000) + 1);

async function store() {
  const ws = await seedWorkspace(ctx(), {
    programs: [{ key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `co-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 1000 }], includeResellerSales: true, status: 'active', consents: ['developer', 'recipient'] }],
  });
  const lsProduct = Math.floor(Math.random() * 1_000_000) + 1;
  const connection = await connect(ctx(), ws, 'lemonsqueezy', { mapping: { [String(lsProduct)]: 'p1' } });
  return { ws, connection, lsProduct };
}

describe('Lemon Squeezy', () => {
  it('books order_created: purchase (channel and provider), serial, buyer e-mail, the collaborator’s estimate', async () => {
    const { ws, connection, lsProduct } = await store();
    const order = lemonOrder(orderId(), lsProduct, { subtotal: 999, tax: 200 });
    const res = await deliver(ctx(), 'lemonsqueezy', connection.id, order);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: `order_created:${order.data.id}`, outcome: 'recorded' });
    expect((await purchases(ctx(), ws))[0]).toMatchObject({ channel: 'external_store', provider: 'lemonsqueezy', price_cents: 999, sale_price_cents: 999, currency: 'usd' });
    const { serial, validate, activate } = await serialOf(ctx(), ws, res.json().order_item_ids[0]);
    expect(serial.status).toBe('redeemed');
    await activate();
    expect((await validate()).valid).toBe(true);
    await ctx().app.jobs.idle();
    expect(transport.sent.some((m) => m.to === order.data.attributes.user_email)).toBe(true);
    expect((await balances(ctx(), ws.workspaceId))[`external_estimate:${ws.ids.programs.co}`]).toBe(99n);
    // A redelivery of the same order is a replay.
    expect((await deliver(ctx(), 'lemonsqueezy', connection.id, order)).json().outcome).toBe('replayed');
  });

  it('order_refunded: a partial refund changes no serial, the full refund revokes it and reverses the estimate', async () => {
    const { ws, connection, lsProduct } = await store();
    const id = orderId();
    const sale = await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(id, lsProduct, { subtotal: 1000, tax: 200 }));
    const [itemId] = sale.json().order_item_ids;
    const partial = await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(id, lsProduct, { event: 'order_refunded', subtotal: 1000, tax: 200, refundedAmount: 600 }));
    expect(partial.json()).toMatchObject({ id: `order_refunded:${id}:600`, outcome: 'recorded' });
    let s = await serialOf(ctx(), ws, itemId);
    expect(s.item).toMatchObject({ refund_status: 'partial', refunded_cents: 500 });
    expect(s.serial.status).toBe('redeemed');
    expect(await entitlementStatus(ctx(), itemId)).toBe('active');
    const full = await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(id, lsProduct, { event: 'order_refunded', subtotal: 1000, tax: 200, refundedAmount: 1200 }));
    expect(full.json().outcome).toBe('recorded');
    s = await serialOf(ctx(), ws, itemId);
    expect(s.item).toMatchObject({ refund_status: 'full', refunded_cents: 1000 });
    expect(s.serial.status).toBe('revoked');
    expect(await s.validate()).toMatchObject({ valid: false, code: 'REVOKED' });
    expect((await balances(ctx(), ws.workspaceId))[`external_estimate:${ws.ids.programs.co}`]).toBe(0n);
  });

  it('refuses a missing or wrong X-Signature with 400 and records nothing; a base64 digest is not the documented hex', async () => {
    const { ws, connection, lsProduct } = await store();
    const body = JSON.stringify(lemonOrder(orderId(), lsProduct));
    const wrong: Array<Record<string, string>> = [{}, { 'x-signature': 'abc' }, { 'x-signature': createHmac('sha256', 'another-secret').update(body).digest('hex') }, { 'x-signature': createHmac('sha256', 'ls-signing-secret-42').update(body).digest('base64') }];
    for (const headers of wrong) {
      const res = await deliver(ctx(), 'lemonsqueezy', connection.id, body, { headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(400);
      expect(res.json().code).toBe('CHECKOUT_CONNECTION_SIGNATURE_INVALID');
    }
    expect(await events(ctx(), ws, connection.id)).toEqual([]);
    expect(await purchases(ctx(), ws)).toEqual([]);
  });

  it('logs an order of an unmapped product as failed, and ignores unpaid orders', async () => {
    const { ws, connection } = await store();
    const unmapped = await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(orderId(), 4242));
    expect(unmapped.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('4242') });
    const pending = await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(orderId(), 4242, { status: 'pending' }));
    expect(pending.json().outcome).toBe('ignored');
    expect(await purchases(ctx(), ws)).toEqual([]);
  });
});
