import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { buyerToken, get } from './portal-helpers.js';

const ctx = useTestApp();

async function store() {
  const ws = await seedWorkspace(ctx(), {
    customers: [{ key: 'me' }, { key: 'other' }],
    orders: [
      { key: 'old', customer: 'me', channel: 'managed_checkout', purchasedAt: '2026-01-02T10:00:00.000Z', currency: 'eur', items: [{ product: 'p1', priceCents: 4900, salePriceCents: 3900, serial: 's1' }] },
      {
        key: 'new',
        customer: 'me',
        channel: 'import',
        purchasedAt: '2026-03-04T10:00:00.000Z',
        items: [
          { product: 'p2', salePriceCents: 2000, refundedCents: 2000 },
          { product: 'p3', salePriceCents: 1000 },
        ],
      },
      { key: 'theirs', customer: 'other', items: [{ product: 'p1', salePriceCents: 100 }] },
    ],
    serials: [{ key: 's1', product: 'p1', customer: 'me', order: 'old' }],
  });
  return { ws, me: await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`) };
}

describe('customer portal orders', () => {
  it('lists the buyer’s orders newest first, with items, amounts, refund state and invoice availability', async () => {
    const { ws, me } = await store();
    const res = await get(ctx(), me, '/orders');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 2, page: 1, pageSize: 50 });
    expect(body.rows.map((o: { order_id: number }) => o.order_id)).toEqual([ws.ids.orders.new, ws.ids.orders.old]);
    expect(body.rows[0]).toMatchObject({
      purchased_at: '2026-03-04T10:00:00.000Z',
      status: 'paid',
      refund_status: 'partial',
      invoice_available: false,
      items: [
        { product_id: ws.ids.products.p2, product: `Product p2 ${ws.suffix}`, amount_cents: 2000, currency: 'usd', refunded_cents: 2000, refund_status: 'full' },
        { product_id: ws.ids.products.p3, amount_cents: 1000, refunded_cents: 0, refund_status: 'none' },
      ],
    });
    expect(body.rows[1]).toMatchObject({ invoice_available: true, currency: 'eur', items: [{ order_item_id: expect.any(Number), amount_cents: 3900, currency: 'eur' }] });

    const second = (await get(ctx(), me, '/orders?page=2&limit=1')).json();
    expect(second).toMatchObject({ total: 2, page: 2, pageSize: 1, rows: [{ order_id: ws.ids.orders.old }] });
    expect((await get(ctx(), me, '/orders?limit=0')).statusCode).toBe(400);
    expect((await get(ctx(), me, '/orders?status=paid')).statusCode).toBe(400);
  });

  it('reads one order, and answers 404 for another buyer’s or another workspace’s', async () => {
    const { ws, me } = await store();
    const one = await get(ctx(), me, `/orders/${ws.ids.orders.old}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ order_id: ws.ids.orders.old, items: [{ product_id: ws.ids.products.p1 }] });
    expect((await get(ctx(), me, `/orders/${ws.ids.orders.theirs}`)).statusCode).toBe(404);
    const elsewhere = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p1' }] }] });
    expect((await get(ctx(), me, `/orders/${elsewhere.ids.orders.o}`)).statusCode).toBe(404);
    expect((await get(ctx(), me, '/orders/0')).statusCode).toBe(400);
    expect((await get(ctx(), me, '/orders/abc')).statusCode).toBe(400);
  });

  it('hides an order hidden with customer-portal-order/hide from the list and by id, and show brings it back (section 3.2)', async () => {
    const { ws, me } = await store();
    const hide = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.s1}/customer-portal-order/hide`, headers: bearer(ws.owner), payload: {} });
    expect(hide.statusCode, hide.body).toBe(200);
    const hidden = (await get(ctx(), me, '/orders')).json();
    expect(hidden.total).toBe(1);
    expect(hidden.rows.map((o: { order_id: number }) => o.order_id)).toEqual([ws.ids.orders.new]);
    expect((await get(ctx(), me, `/orders/${ws.ids.orders.old}`)).statusCode).toBe(404);
    // Hiding changes nothing else: the serial and its seats are still the buyer's.
    const licenses = (await get(ctx(), me, '/licenses')).json();
    expect(licenses.rows.map((l: { serial_id: number }) => l.serial_id)).toEqual([ws.ids.serials.s1]);

    await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.s1}/customer-portal-order/show`, headers: bearer(ws.owner), payload: {} });
    expect((await get(ctx(), me, '/orders')).json().total).toBe(2);
    expect((await get(ctx(), me, `/orders/${ws.ids.orders.old}`)).statusCode).toBe(200);
  });
});
