import { describe, expect, it } from 'vitest';
import { accountIdOf, seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, SERIALS, serialInDb } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const portal = (token: string, serialId: number, verb: 'hide' | 'show', body?: unknown) =>
  api.post(token, `${SERIALS}/${serialId}/customer-portal-order/${verb}`, body);

async function orderInDb(orderId: number) {
  return ctx()
    .database.db.selectFrom('orders')
    .where('id', '=', orderId)
    .select(['status', 'refund_status', 'total_cents', 'customer_id', 'currency', 'customer_portal_hidden'])
    .executeTakeFirstOrThrow();
}

/** A sold serial: a customer, their paid order and the serial linked to both. */
const soldSerial = (extra: Parameters<typeof seedWorkspace>[1] = {}) =>
  seedWorkspace(ctx(), {
    ...extra,
    customers: [{ key: 'c' }],
    orders: [{ key: 'o', customer: 'c', status: 'paid', totalCents: 4900 }],
    serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }, { key: 'loose', product: 'p1' }, { key: 'other', product: 'p2', customer: 'c', order: 'o' }],
  });

describe('POST /api/developer/serials/:serialId/customer-portal-order/hide|show', () => {
  it('hides and shows the serial’s order and answers the new visibility', async () => {
    const ws = await soldSerial();
    const id = ws.ids.serials.s!;
    const hidden = await portal(ws.owner, id, 'hide', { reason: 'test order' });
    expect(hidden.statusCode, hidden.body).toBe(200);
    expect(hidden.json()).toEqual({ serialId: id, serial: ws.serialCodes.s, orderId: ws.ids.orders.o, customerPortalHidden: true });
    expect((await orderInDb(ws.ids.orders.o!)).customer_portal_hidden).toBe(true);

    // Hiding twice is harmless.
    expect((await portal(ws.owner, id, 'hide')).json().customerPortalHidden).toBe(true);
    const shown = await portal(ws.owner, id, 'show');
    expect(shown.json()).toEqual({ serialId: id, serial: ws.serialCodes.s, orderId: ws.ids.orders.o, customerPortalHidden: false });
    expect((await orderInDb(ws.ids.orders.o!)).customer_portal_hidden).toBe(false);
  });

  it('changes visibility only: order payment, refund and ownership and the serial stay as they were', async () => {
    const ws = await soldSerial();
    const id = ws.ids.serials.s!;
    const orderBefore = await orderInDb(ws.ids.orders.o!);
    const serialBefore = await serialInDb(ctx, id);

    expect((await portal(ws.owner, id, 'hide')).statusCode).toBe(200);
    const orderAfter = await orderInDb(ws.ids.orders.o!);
    const serialAfter = await serialInDb(ctx, id);
    expect({ ...orderAfter, customer_portal_hidden: false }).toEqual(orderBefore);
    expect(orderAfter).toMatchObject({ status: 'paid', refund_status: 'none', total_cents: 4900, customer_id: await accountIdOf(ctx(), ws.ids.customers.c!) });
    expect(serialAfter).toMatchObject({
      customer_id: serialBefore.customer_id,
      status: serialBefore.status,
      order_id: serialBefore.order_id,
      active_activation_count: serialBefore.active_activation_count,
      redeemed_at: serialBefore.redeemed_at,
    });
    expect((await api.list(ws.owner, `?search=${ws.serialCodes.s}`)).rows[0]).toMatchObject({ status: 'redeemed', customer_id: ws.ids.customers.c });
  });

  it('works whatever the serial’s lifecycle state', async () => {
    const ws = await soldSerial();
    const id = ws.ids.serials.s!;
    await api.act(ws.owner, id, 'revoke');
    expect((await portal(ws.owner, id, 'hide')).json().customerPortalHidden).toBe(true);
    expect((await serialInDb(ctx, id)).status).toBe('revoked');
  });

  it.each(['hide', 'show'] as const)('answers 409 SERIAL_HAS_NO_ORDER to %s a serial without an order', async (verb) => {
    const ws = await soldSerial();
    expectProblem(await portal(ws.owner, ws.ids.serials.loose!, verb), 409, 'SERIAL_HAS_NO_ORDER');
  });

  it.each(['hide', 'show'] as const)('answers 404 to %s a serial of another workspace or an unassigned product, before the permission', async (verb) => {
    const ws = await soldSerial({ members: [MEMBERS.scoped, { key: 'scopedViewer', permissions: ['serials.view'], products: ['p1'] }] });
    const intruder = await seedWorkspace(ctx(), { members: [MEMBERS.viewer] });
    expectProblem(await portal(intruder.owner, ws.ids.serials.s!, verb), 404, 'NOT_FOUND');
    expectProblem(await portal(intruder.tokens.viewer!, ws.ids.serials.s!, verb), 404, 'NOT_FOUND');
    expectProblem(await portal(ws.tokens.scoped!, ws.ids.serials.other!, verb), 404, 'NOT_FOUND');
    expectProblem(await portal(ws.tokens.scopedViewer!, ws.ids.serials.other!, verb), 404, 'NOT_FOUND');
    expect((await orderInDb(ws.ids.orders.o!)).customer_portal_hidden).toBe(false);
    expect((await portal(ws.tokens.scoped!, ws.ids.serials.s!, verb)).statusCode).toBe(200);
  });

  it('answers 403 without serials.manage and leaves the order visible', async () => {
    const ws = await soldSerial({ members: [MEMBERS.viewer] });
    expectProblem(await portal(ws.tokens.viewer!, ws.ids.serials.s!, 'hide'), 403, 'FORBIDDEN');
    expect((await orderInDb(ws.ids.orders.o!)).customer_portal_hidden).toBe(false);
  });

  it('rejects bad input with 400', async () => {
    const ws = await soldSerial();
    expectProblem(await portal(ws.owner, ws.ids.serials.s!, 'hide', { reason: 'x'.repeat(501) }), 400, 'VALIDATION_FAILED');
    expectProblem(await portal(ws.owner, ws.ids.serials.s!, 'hide', [1]), 400, 'VALIDATION_FAILED');
    expectProblem(await api.post(ws.owner, `${SERIALS}/zero/customer-portal-order/hide`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.post(ws.owner, `${SERIALS}/${ws.ids.serials.s}/customer-portal-order/delete`), 404, 'ROUTE_NOT_FOUND');
    expect((await orderInDb(ws.ids.orders.o!)).customer_portal_hidden).toBe(false);
  });
});
