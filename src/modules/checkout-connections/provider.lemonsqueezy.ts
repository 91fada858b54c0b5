import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { EventAction, VerifiedEvent } from './provider-events.js';
import { PayloadUnreadable, reader, SignatureRejected, timeOf } from './payload.js';

// Lemon Squeezy: no official verifier exists, so the check is the one its documentation gives:
// `X-Signature` is the hex HMAC-SHA256 of the raw body under the webhook's signing secret, compared
// in constant time. Its events carry no id and no timestamp: the event id is derived from what
// the event says (the order and, for refunds, the refunded total), and replays are caught by it.
// `order_created` is a sale (one product per order), `order_refunded` reports the order's refunded total.

export function verifyLemonSqueezy(raw: Buffer, headers: Record<string, string | string[] | undefined>, secret: string): VerifiedEvent {
  const header = headers['x-signature'];
  const given = Buffer.from(typeof header === 'string' ? header : '', 'utf8');
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new SignatureRejected('X-Signature is missing or does not match the body');
  return readLemonSqueezyEvent(JSON.parse(raw.toString('utf8')));
}

/**
 * A Lemon Squeezy event's type and derived id: `order_created:<order id>`, `order_refunded:<order
 * id>:<refunded total>` (each refund raises the total), and for other events the event name, the
 * object's id and its `updated_at`.
 */
export function readLemonSqueezyEvent(raw: unknown): VerifiedEvent {
  const body = readEvent(raw);
  const order = body.data.attributes;
  const id =
    body.meta.event_name === 'order_refunded'
      ? `order_refunded:${body.data.id}:${order.refunded_amount ?? order.total ?? 0}`
      : `${body.meta.event_name}:${body.data.id}${body.meta.event_name === 'order_created' ? '' : `:${order.updated_at ?? ''}`}`;
  return { id, type: body.meta.event_name, body };
}

const Str = Type.String({ maxLength: 1000 });
const Amount = Type.Integer({ minimum: 0 });

const readEvent = reader(
  Type.Object({
    meta: Type.Object({ event_name: Type.String({ minLength: 1, maxLength: 100 }), custom_data: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])) }),
    data: Type.Object({
      type: Str,
      id: Type.String({ minLength: 1, maxLength: 100 }),
      attributes: Type.Object({ updated_at: Type.Optional(Str), refunded_amount: Type.Optional(Type.Union([Amount, Type.Null()])), total: Type.Optional(Amount) }),
    }),
  }),
  'Lemon Squeezy event',
);

const readOrder = reader(
  Type.Object({
    status: Str,
    currency: Str,
    user_email: Type.String({ minLength: 3, maxLength: 254 }),
    user_name: Type.Optional(Type.Union([Str, Type.Null()])),
    subtotal: Amount,
    discount_total: Amount,
    total: Amount,
    refunded_amount: Type.Optional(Type.Union([Amount, Type.Null()])),
    refunded_at: Type.Optional(Type.Union([Str, Type.Null()])),
    created_at: Str,
    first_order_item: Type.Object({ product_id: Type.Integer({ minimum: 0 }), variant_id: Type.Integer({ minimum: 0 }), product_name: Type.Optional(Str), quantity: Type.Optional(Type.Integer({ minimum: 0 })) }),
  }),
  'order',
);

export function interpretLemonSqueezy(event: VerifiedEvent): EventAction {
  const body = event.body as { meta: { custom_data?: Record<string, unknown> | null }; data: { id: string; attributes: unknown } };
  switch (event.type) {
    case 'order_created': {
      const order = readOrder(body.data.attributes);
      if (order.status !== 'paid') return { kind: 'ignore', reason: `the order is ${order.status}; only paid orders are booked` };
      const ref = body.meta.custom_data?.pb_ref;
      const item = order.first_order_item;
      return {
        kind: 'sale',
        sale: {
          orderId: body.data.id,
          paymentRef: null,
          currency: order.currency,
          customer: { email: order.user_email, name: order.user_name ?? null },
          referral: typeof ref === 'string' ? ref : null,
          purchasedAt: timeOf(order.created_at),
          lines: [
            {
              key: String(item.product_id),
              providerProductId: String(item.product_id),
              providerPriceId: String(item.variant_id),
              patchbayProductId: null,
              label: item.product_name ?? null,
              quantity: item.quantity ?? 1,
              subtotalCents: order.subtotal,
              discountCents: order.discount_total,
              paidCents: order.total,
            },
          ],
        },
      };
    }
    case 'order_refunded': {
      const order = readOrder(body.data.attributes);
      // Before refunded_amount was reported, a refunded order was refunded in full.
      const total = order.refunded_amount ?? (order.status === 'refunded' ? order.total : null);
      if (total === null) throw new PayloadUnreadable('the order reports no refunded_amount');
      return { kind: 'refund', refund: { order: { orderId: body.data.id }, report: { kind: 'total', totalCents: total }, refundedAt: timeOf(order.refunded_at) } };
    }
    default:
      return { kind: 'ignore', reason: `${event.type} is not an event Patchbay books` };
  }
}
