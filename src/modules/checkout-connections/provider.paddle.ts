import { Type } from '@sinclair/typebox';
import type { Paddle } from '@paddle/paddle-node-sdk';
import type { EventAction, SaleLine, VerifiedEvent } from './provider-events.js';
import { digits, reader, SignatureRejected, timeOf } from './payload.js';

// Paddle Billing: events verified with the official SDK's `webhooks.unmarshal` (`Paddle-Signature:
// ts=…;h1=…`, an HMAC-SHA256 of "<ts>:<raw body>"; the SDK refuses a signature older than 5
// seconds). `transaction.completed` is a sale; an approved refund adjustment is a refund of the
// items it names. A transaction names its customer by id only: `customer.created` and
// `customer.updated` bring the e-mail and name, and a sale that arrives first waits for them.

// The SDK's webhook helper needs the runtime the Paddle client sets up; no API key is used. The SDK is about 970
// modules: it loads with the first Paddle event, not with the server (docs/performance.md, "Start-up").
let client: Promise<Paddle> | undefined;
const paddleClient = () =>
  (client ??= import('@paddle/paddle-node-sdk').then(({ LogLevel, Paddle }) => new Paddle('webhook-verification-only', { logLevel: LogLevel.error })));

export async function verifyPaddle(raw: Buffer, headers: Record<string, string | string[] | undefined>, secret: string): Promise<VerifiedEvent> {
  const header = typeof headers['paddle-signature'] === 'string' ? headers['paddle-signature'] : '';
  const body = raw.toString('utf8');
  const paddle = await paddleClient();
  try {
    await paddle.webhooks.unmarshal(body, secret, header);
  } catch (error) {
    // unmarshal also fails when the SDK cannot model a verified payload; only a bad signature refuses the request.
    const valid = await paddle.webhooks.isSignatureValid(body, secret, header).catch(() => false);
    if (!valid) throw new SignatureRejected('Paddle-Signature does not match the body, or is missing, malformed or older than 5 seconds');
    void error;
  }
  return readPaddleEvent(JSON.parse(body));
}

/** A Paddle event's id and type (an event verified now, or one kept for re-processing). */
export function readPaddleEvent(body: unknown): VerifiedEvent {
  const envelope = readEnvelope(body);
  return { id: envelope.event_id, type: envelope.event_type, body: envelope };
}

const Str = Type.String({ maxLength: 1000 });
const Amount = Type.String({ maxLength: 20 });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const readEnvelope = reader(Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 200 }), event_type: Type.String({ minLength: 1, maxLength: 200 }), occurred_at: Str, data: Type.Unknown() }), 'Paddle event');

const readTransaction = reader(
  Type.Object({
    id: Str,
    status: Str,
    customer_id: Nullable(Str),
    subscription_id: Type.Optional(Nullable(Str)),
    currency_code: Str,
    custom_data: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    billed_at: Type.Optional(Nullable(Str)),
    items: Type.Array(Type.Object({ price: Type.Object({ id: Str, product_id: Str }), quantity: Type.Integer({ minimum: 0 }) })),
    details: Type.Object({
      line_items: Type.Array(
        Type.Object({
          id: Str,
          price_id: Str,
          quantity: Type.Integer({ minimum: 0 }),
          totals: Type.Object({ subtotal: Amount, discount: Amount, total: Amount }),
          product: Type.Optional(Type.Union([Type.Object({ id: Str, name: Type.Optional(Str) }), Type.Null()])),
        }),
      ),
    }),
  }),
  'transaction',
);

const readAdjustment = reader(
  Type.Object({
    id: Str,
    action: Str,
    status: Str,
    transaction_id: Str,
    items: Type.Array(Type.Object({ item_id: Str, type: Str, amount: Amount, totals: Type.Optional(Type.Union([Type.Object({ total: Amount }), Type.Null()])) })),
    updated_at: Type.Optional(Str),
  }),
  'adjustment',
);

const readCustomer = reader(Type.Object({ id: Str, email: Type.String({ minLength: 3, maxLength: 254 }), name: Type.Optional(Nullable(Str)) }), 'customer');

function sale(envelope: { occurred_at: string; data: unknown }): EventAction {
  const txn = readTransaction(envelope.data);
  // A subscription's transactions (its first and every renewal) would each become another licence: not booked yet.
  if (txn.subscription_id) return { kind: 'ignore', reason: `a transaction of subscription ${txn.subscription_id}: subscriptions are not booked as licences yet` };
  if (!txn.customer_id) return { kind: 'fail', reason: 'the transaction names no customer' };
  const lines: SaleLine[] = txn.details.line_items.map((line) => {
    const product = line.product?.id ?? txn.items.find((i) => i.price.id === line.price_id)?.price.product_id ?? null;
    return {
      key: line.id,
      providerProductId: product,
      providerPriceId: line.price_id,
      patchbayProductId: null,
      label: line.product?.name ?? null,
      quantity: line.quantity,
      subtotalCents: digits(line.totals.subtotal, 'totals.subtotal'),
      discountCents: digits(line.totals.discount, 'totals.discount'),
      paidCents: digits(line.totals.total, 'totals.total'),
    };
  });
  const ref = txn.custom_data?.pb_ref;
  return {
    kind: 'sale',
    sale: {
      orderId: txn.id,
      paymentRef: null,
      currency: txn.currency_code,
      customer: { providerCustomerId: txn.customer_id },
      referral: typeof ref === 'string' ? ref : null,
      purchasedAt: timeOf(txn.billed_at ?? envelope.occurred_at),
      lines,
    },
  };
}

function refund(envelope: { occurred_at: string; data: unknown }): EventAction {
  const adjustment = readAdjustment(envelope.data);
  if (adjustment.action !== 'refund') return { kind: 'ignore', reason: `a ${adjustment.action} adjustment is not a refund` };
  // Refunds are created pending approval; adjustment.updated reports the approval.
  if (adjustment.status !== 'approved') return { kind: 'ignore', reason: `the refund is ${adjustment.status}; it counts once approved (adjustment.updated)` };
  return {
    kind: 'refund',
    refund: {
      order: { orderId: adjustment.transaction_id },
      report: {
        kind: 'items',
        refundKey: adjustment.id,
        items: adjustment.items.map((item) => ({ itemKey: item.item_id, amountCents: digits(item.totals?.total ?? item.amount, 'adjustment item total'), full: item.type === 'full' })),
      },
      refundedAt: timeOf(adjustment.updated_at ?? envelope.occurred_at),
    },
  };
}

export function interpretPaddle(event: VerifiedEvent): EventAction {
  const envelope = event.body as { occurred_at: string; data: unknown };
  switch (event.type) {
    case 'transaction.completed':
      return sale(envelope);
    case 'adjustment.created':
    case 'adjustment.updated':
      return refund(envelope);
    case 'customer.created':
    case 'customer.updated': {
      const customer = readCustomer(envelope.data);
      return { kind: 'customer', customer: { providerCustomerId: customer.id, email: customer.email, name: customer.name ?? null } };
    }
    default:
      return { kind: 'ignore', reason: `${event.type} is not an event Patchbay books` };
  }
}

