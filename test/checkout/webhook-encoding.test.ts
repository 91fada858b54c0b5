import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { useTestApp } from '../helpers/app.js';
import { balances, now, programs, refund, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// The webhook reads the bytes it was sent: the signature covers them as they are, a body that is not
// UTF-8 is named as such, and lengths in the event data count characters as every request body does.

const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] } });

const stored = async (id: string) =>
  (await sql<{ n: number }>`select count(*)::int as n from checkout_events where id = ${id}`.execute(ctx().database.db)).rows[0]!.n;

const post = (payload: Buffer, header: string) =>
  ctx().app.inject({ method: 'POST', url: '/api/checkout/events', headers: { 'content-type': 'application/json', 'patchbay-signature': header }, payload });

/** The event's JSON with the customer's name replaced by `bytes` (a Latin-1 "é": not UTF-8), and where they start. */
function withBytesInName(event: ReturnType<typeof sale>, bytes: number[]) {
  const json = JSON.stringify({ ...event, data: { ...event.data, customer: { ...event.data.customer, name: 'NAME' } } });
  const [before, after] = json.split('NAME') as [string, string];
  const head = Buffer.from(before, 'utf8');
  return { body: Buffer.concat([head, Buffer.from(bytes), Buffer.from(after, 'utf8')]), offset: head.length };
}

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('body bytes', () => {
  it('refuses a correctly signed body that is not UTF-8 with 400 INVALID_UTF8 naming the field, not as a bad signature, and records nothing', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const { body, offset } = withBytesInName(event, [0x5a, 0x6f, 0xeb]);
    const res = await post(body, signCheckoutPayload(WEBHOOK_SECRET, body, now()));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_UTF8', offset: offset + 2, errors: [{ path: 'body/data/customer/name' }] });
    expect(await stored(event.id)).toBe(0);
    expect(await balances(ctx(), ws.workspaceId)).toEqual({});
  });

  it('checks the signature over the bytes as sent: one over a U+FFFD decoding of them, or none, is refused as WEBHOOK_SIGNATURE_INVALID', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const { body } = withBytesInName(event, [0xff]);
    for (const header of [signCheckoutPayload(WEBHOOK_SECRET, body.toString('utf8'), now()), '']) {
      const res = await post(body, header);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('WEBHOOK_SIGNATURE_INVALID');
    }
    expect(await stored(event.id)).toBe(0);
  });

  it('records a sale whose body carries characters beyond ASCII, signed over its UTF-8 bytes', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const body = Buffer.from(JSON.stringify({ ...event, data: { ...event.data, customer: { ...event.data.customer, name: 'Zoë Ångström 🎹' } } }), 'utf8');
    const res = await post(body, signCheckoutPayload(WEBHOOK_SECRET, body, now()));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().outcome).toBe('recorded');
  });
});

describe('lengths in event data', () => {
  it('counts characters, not UTF-16 units: an order id of 200 emoji is accepted (sale and refund), 201 is refused naming the field', async () => {
    const ws = await programs(ctx());
    const orderId = '🎹'.repeat(200);
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const recorded = await signedEvent(ctx(), { ...event, data: { ...event.data, order_id: orderId } });
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect(recorded.json().outcome).toBe('recorded');
    const refunded = await signedEvent(ctx(), refund(ws, orderId, 'p1', 400));
    expect(refunded.statusCode, refunded.body).toBe(200);

    const long = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const res = await signedEvent(ctx(), { ...long, data: { ...long.data, order_id: `${orderId}🎹` } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'body/data/order_id' }] });
    expect(await stored(long.id)).toBe(0);
  });

  it('names a missing field of the event data by its path', async () => {
    const ws = await programs(ctx());
    const event = sale(ws, [{ product: 'p1', subtotal: 1000 }]);
    const { customer: _customer, ...data } = event.data;
    const res = await signedEvent(ctx(), { ...event, data });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'body/data/customer' }] });
  });
});
