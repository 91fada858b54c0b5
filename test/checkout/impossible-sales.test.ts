import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { onPostgres, unique, useTestApp } from '../helpers/app.js';
import { balances, now, programs, refund, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// The webhook refuses sales that cannot have happened, and event ids that name two events.

const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] } });

const stored = async (id: string) =>
  (await sql<{ n: number }>`select count(*)::int as n from checkout_events where id = ${id}`.execute(ctx().database.db)).rows[0]!.n;

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('currency', () => {
  it('refuses a currency that is not a current ISO 4217 code with 400 CHECKOUT_CURRENCY_UNKNOWN and records nothing', async () => {
    const ws = await programs(ctx());
    for (const currency of ['xxx', 'XTS', 'abc', 'dem']) {
      const event = sale(ws, [{ product: 'p1', subtotal: 1000 }], { currency });
      const res = await signedEvent(ctx(), event);
      expect(res.statusCode, currency).toBe(400);
      expect(res.json()).toMatchObject({ code: 'CHECKOUT_CURRENCY_UNKNOWN', errors: [{ path: 'body/data/currency' }] });
      expect(await stored(event.id)).toBe(0);
    }
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
  });

  it('refuses a EUR sale of a USD-priced product with 422 CHECKOUT_CURRENCY_MISMATCH naming the item, and the corrected event is then recorded', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p2', subtotal: 500 }, { product: 'p1', subtotal: 1000 }], { currency: 'EUR' });
    const res = await signedEvent(ctx(), event);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('CHECKOUT_CURRENCY_MISMATCH');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body/data/items/0/product_id', 'body/data/items/1/product_id']);
    expect(await stored(event.id)).toBe(0);
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
    // Nothing was kept under the id, so the checkout may send the corrected event with it.
    const fixed = await signedEvent(ctx(), { ...event, data: { ...event.data, currency: 'USD' } });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect(fixed.json().outcome).toBe('recorded');
  });

  it('books a sale in the currency its product is priced in', async () => {
    const ws = await programs(ctx());
    await sql`update products set currency = 'eur' where workspace_id = ${ws.workspaceId} and id = ${ws.ids.products.p2!}`.execute(ctx().database.db);
    const res = await signedEvent(ctx(), sale(ws, [{ product: 'p2', subtotal: 1000 }], { currency: 'eur' }));
    expect(res.statusCode, res.body).toBe(200);
    const currencies = await sql<{ currency: string }>`select distinct currency from ledger_entries where workspace_id = ${ws.workspaceId}`.execute(ctx().database.db);
    expect(currencies.rows).toEqual([{ currency: 'eur' }]);
  });
});

describe('created', () => {
  it('refuses a sale dated 1970 or in the year 9999 with 400 CHECKOUT_EVENT_TIME_OUT_OF_RANGE and records nothing', async () => {
    const ws = await programs(ctx());
    for (const created of [0, 253402300799]) {
      const event = { ...sale(ws, [{ product: 'p1', subtotal: 1000 }]), created };
      const res = await signedEvent(ctx(), event);
      expect(res.statusCode, String(created)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'CHECKOUT_EVENT_TIME_OUT_OF_RANGE', errors: [{ path: 'body/created' }] });
      expect(await stored(event.id)).toBe(0);
    }
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
  });

  it('accepts from 30 days before to 5 minutes after the signature time, and not a second beyond', async () => {
    const t = now();
    const cases: Array<[string, number, number]> = [
      ['30 days before', t - 30 * 86_400, 200],
      ['30 days and a second before', t - 30 * 86_400 - 1, 400],
      ['5 minutes after', t + 300, 200],
      ['5 minutes and a second after', t + 301, 400],
    ];
    for (const [label, created, status] of cases) {
      // An event of a type this service ignores is bounded the same way and books nothing.
      const res = await signedEvent(ctx(), { id: `evt_${unique()}`, type: 'dispute.opened', created, data: {} }, { at: t });
      expect(res.statusCode, label).toBe(status);
    }
  });

  it('bounds refunds too', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    await signedEvent(ctx(), event);
    const res = await signedEvent(ctx(), { ...refund(ws, event.data.order_id, 'p1', 100), created: 0 });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('CHECKOUT_EVENT_TIME_OUT_OF_RANGE');
  });
});

describe('event ids', () => {
  it('answers a reused id with a different body 409 CHECKOUT_EVENT_ID_REUSED and changes nothing', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 5000 }]);
    expect((await signedEvent(ctx(), event)).json().outcome).toBe('recorded');
    const before = await balances(ctx(), ws.workspaceId);
    const other = sale(ws, [{ product: 'p1', subtotal: 7000 }]);
    const res = await signedEvent(ctx(), { ...other, id: event.id });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('CHECKOUT_EVENT_ID_REUSED');
    expect(await balances(ctx(), ws.workspaceId)).toEqual(before);
    // The first event stands: it is still answered as a replay.
    expect((await signedEvent(ctx(), event)).json().outcome).toBe('replayed');
  });

  it('answers the same event with other spacing and key order as replayed', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 5000 }]);
    await signedEvent(ctx(), event);
    const reversed = (o: object) => Object.fromEntries(Object.entries(o).reverse());
    const body = JSON.stringify({ ...reversed(event), data: reversed(event.data) }, null, 2);
    expect(body).not.toBe(JSON.stringify(event));
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/checkout/events',
      headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, body, now()) },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().outcome).toBe('replayed');
  });

  it('answers a replay before today’s rules: an event recorded once stays replayable', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p2', subtotal: 1000 }]);
    await signedEvent(ctx(), event);
    // The product is repriced in another currency after the sale; the redelivered sale is not refused for it.
    await sql`update products set currency = 'eur' where workspace_id = ${ws.workspaceId} and id = ${ws.ids.products.p2!}`.execute(ctx().database.db);
    const again = await signedEvent(ctx(), event);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().outcome).toBe('replayed');
  });

  it('answers any body under the id of an event recorded before digests were kept as replayed', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 5000 }]);
    await signedEvent(ctx(), event);
    await sql`update checkout_events set body_digest = null where id = ${event.id}`.execute(ctx().database.db);
    const res = await signedEvent(ctx(), { ...sale(ws, [{ product: 'p1', subtotal: 1 }]), id: event.id });
    expect(res.statusCode).toBe(200);
    expect(res.json().outcome).toBe('replayed');
  });
});

describe.runIf(onPostgres)('event ids in parallel (PostgreSQL)', () => {
  it('records one of two different events racing under one id and answers the other 409', async () => {
    const ws = await programs(ctx());
    const first = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const second = { ...sale(ws, [{ product: 'p1', subtotal: 2000 }]), id: first.id };
    const answers = await Promise.all([first, second, first, second].map((e) => signedEvent(ctx(), e)));
    const outcomes = answers.map((a) => (a.statusCode === 200 ? a.json().outcome : a.json().code)).sort();
    expect(outcomes).toEqual(['CHECKOUT_EVENT_ID_REUSED', 'CHECKOUT_EVENT_ID_REUSED', 'recorded', 'replayed']);
    expect([-1000n, -2000n]).toContain((await balances(ctx(), ws.workspaceId)).checkout_clearing);
  });
});
