import { Type } from '@sinclair/typebox';
import type Stripe from 'stripe';
import type { EventAction, SaleLine, VerifiedEvent } from './provider-events.js';
import { PayloadUnreadable, reader, SignatureRejected, timeOf } from './payload.js';

// Stripe: events verified with the official library's `webhooks.constructEvent` over the raw body
// (`Stripe-Signature`, 5 minutes' tolerance). A completed Checkout Session is a sale; Stripe does
// not put its line items in the event, so they are listed with the connection's restricted API key
// through the same library, or the seller names one Patchbay product in the session's metadata.

// The library is about 260 modules: it loads with the first Stripe event, not with the server (docs/performance.md,
// "Start-up"); Node keeps it loaded after that.
const stripeLibrary = async (): Promise<typeof Stripe> => (await import('stripe')).default;

/** Where the library reaches Stripe's API (tests: a local server answering as Stripe). */
export interface StripeApiOptions {
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
}

export async function verifyStripe(raw: Buffer, headers: Record<string, string | string[] | undefined>, secret: string): Promise<VerifiedEvent> {
  const header = headers['stripe-signature'];
  const Stripe = await stripeLibrary();
  try {
    return readStripeEvent(Stripe.webhooks.constructEvent(raw, typeof header === 'string' ? header : '', secret));
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new SignatureRejected(error.message);
    throw error;
  }
}

const readEnvelope = reader(Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }), type: Type.String({ minLength: 1, maxLength: 200 }) }), 'Stripe event');

/** A Stripe event's id and type (an event verified now, or one kept for re-processing). */
export function readStripeEvent(body: unknown): VerifiedEvent {
  const envelope = readEnvelope(body);
  return { id: envelope.id, type: envelope.type, body };
}

const Str = Type.String({ maxLength: 1000 });
const Amount = Type.Integer({ minimum: 0 });
const Metadata = Type.Record(Type.String(), Type.String());

const readSession = reader(
  Type.Object({
    created: Type.Integer(),
    data: Type.Object({
      object: Type.Object({
        id: Str,
        mode: Str,
        payment_status: Str,
        currency: Type.Union([Str, Type.Null()]),
        amount_subtotal: Type.Union([Amount, Type.Null()]),
        amount_total: Type.Union([Amount, Type.Null()]),
        total_details: Type.Optional(Type.Union([Type.Object({ amount_discount: Amount }), Type.Null()])),
        payment_intent: Type.Optional(Type.Union([Str, Type.Null()])),
        client_reference_id: Type.Optional(Type.Union([Str, Type.Null()])),
        metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
        customer_email: Type.Optional(Type.Union([Str, Type.Null()])),
        customer_details: Type.Optional(Type.Union([Type.Object({ email: Type.Optional(Type.Union([Str, Type.Null()])), name: Type.Optional(Type.Union([Str, Type.Null()])) }), Type.Null()])),
      }),
    }),
  }),
  'checkout session',
);

const readCharge = reader(
  Type.Object({ created: Type.Integer(), data: Type.Object({ object: Type.Object({ payment_intent: Type.Union([Str, Type.Null()]), amount_refunded: Amount }) }) }),
  'charge',
);

const readRefund = reader(
  Type.Object({ created: Type.Integer(), data: Type.Object({ object: Type.Object({ id: Str, amount: Amount, status: Type.Union([Str, Type.Null()]), payment_intent: Type.Union([Str, Type.Null()]) }) }) }),
  'refund',
);

const readLineItems = reader(
  Type.Object({
    has_more: Type.Boolean(),
    data: Type.Array(
      Type.Object({
        id: Str,
        description: Type.Optional(Type.Union([Str, Type.Null()])),
        quantity: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        amount_subtotal: Amount,
        amount_discount: Amount,
        amount_total: Amount,
        price: Type.Union([Type.Object({ id: Str, product: Type.Union([Str, Type.Object({ id: Str })]) }), Type.Null()]),
      }),
    ),
  }),
  'line items',
);

/** The Patchbay product a session names in its metadata (`patchbay_product_id`), if any. */
function namedProduct(metadata: Record<string, string> | null | undefined): number | null {
  const value = metadata?.patchbay_product_id?.trim();
  if (value === undefined || value === '') return null;
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) throw new PayloadUnreadable(`metadata.patchbay_product_id is not a product id: ${value.slice(0, 40)}`);
  return Number(value);
}

async function listLineItems(sessionId: string, apiKey: string, api: StripeApiOptions): Promise<SaleLine[]> {
  const Stripe = await stripeLibrary();
  const stripe = new Stripe(apiKey, { ...api, maxNetworkRetries: 1, timeout: 10_000, telemetry: false });
  let page: unknown;
  try {
    page = await stripe.checkout.sessions.listLineItems(sessionId, { limit: 100 });
  } catch (error) {
    // The event stays failed and can be re-processed once Stripe answers (or the key is fixed).
    const message = error instanceof Stripe.errors.StripeError ? `${error.type}: ${error.message}` : (error as Error).message;
    throw new PayloadUnreadable(`listing the session's line items through Stripe's API failed (${message.slice(0, 300)})`);
  }
  const list = readLineItems(page);
  if (list.has_more) throw new PayloadUnreadable('the session has more than 100 line items');
  return list.data.map((item) => {
    const product = item.price ? (typeof item.price.product === 'string' ? item.price.product : item.price.product.id) : null;
    return {
      key: item.id,
      providerProductId: product,
      providerPriceId: item.price?.id ?? null,
      patchbayProductId: null,
      label: item.description ?? null,
      quantity: item.quantity ?? 1,
      subtotalCents: item.amount_subtotal,
      discountCents: item.amount_discount,
      paidCents: item.amount_total,
    };
  });
}

export async function interpretStripe(event: VerifiedEvent, connection: { apiKey: string | null; api: StripeApiOptions }): Promise<EventAction> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const body = readSession(event.body);
      const session = body.data.object;
      if (session.mode !== 'payment') return { kind: 'ignore', reason: `a ${session.mode}-mode session: only one-time payments are booked` };
      // Delayed payment methods complete the session unpaid; async_payment_succeeded books them once paid.
      if (session.payment_status === 'unpaid') return { kind: 'ignore', reason: 'the session is not paid yet; checkout.session.async_payment_succeeded books it once it is' };
      const email = session.customer_details?.email ?? session.customer_email ?? null;
      if (!email) return { kind: 'fail', reason: 'the session has no customer e-mail (customer_details.email)' };
      if (!session.currency || session.amount_subtotal === null || session.amount_total === null) return { kind: 'fail', reason: 'the session has no currency or amounts' };
      const product = namedProduct(session.metadata);
      let lines: SaleLine[];
      if (product !== null) {
        lines = [{ key: `product:${product}`, providerProductId: null, providerPriceId: null, patchbayProductId: product, label: null, quantity: 1, subtotalCents: session.amount_subtotal, discountCents: session.total_details?.amount_discount ?? 0, paidCents: session.amount_total }];
      } else if (connection.apiKey) {
        lines = await listLineItems(session.id, connection.apiKey, connection.api);
      } else {
        return { kind: 'fail', reason: 'Stripe does not send line items: give the connection a restricted API key (Checkout Sessions: read) or name the product in metadata.patchbay_product_id' };
      }
      return {
        kind: 'sale',
        sale: {
          orderId: session.id,
          paymentRef: session.payment_intent ?? null,
          currency: session.currency,
          customer: { email, name: session.customer_details?.name ?? null },
          referral: session.client_reference_id ?? session.metadata?.pb_ref ?? null,
          purchasedAt: timeOf(body.created),
          lines,
        },
      };
    }
    case 'charge.refunded': {
      const body = readCharge(event.body);
      const charge = body.data.object;
      if (!charge.payment_intent) return { kind: 'ignore', reason: 'a charge without a payment intent is not a Checkout sale' };
      return { kind: 'refund', refund: { order: { paymentRef: charge.payment_intent }, report: { kind: 'total', totalCents: charge.amount_refunded }, refundedAt: timeOf(body.created) } };
    }
    case 'refund.created':
    case 'refund.updated': {
      const body = readRefund(event.body);
      const refund = body.data.object;
      if (refund.status !== 'succeeded') return { kind: 'ignore', reason: `the refund is ${refund.status ?? 'without a status'}; it counts once it has succeeded (refund.updated)` };
      if (!refund.payment_intent) return { kind: 'ignore', reason: 'a refund without a payment intent is not of a Checkout sale' };
      return { kind: 'refund', refund: { order: { paymentRef: refund.payment_intent }, report: { kind: 'refund', refundKey: refund.id, amountCents: refund.amount }, refundedAt: timeOf(body.created) } };
    }
    default:
      return { kind: 'ignore', reason: `${event.type} is not an event Patchbay books` };
  }
}
