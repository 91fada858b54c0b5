import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import Stripe from 'stripe';
import { bearer, type SeededWorkspace, type TestContext, unique } from '../helpers/app.js';

// What the checkout connection tests share: connecting a store, signing events the way each
// provider does (Stripe's library's test helper, Paddle's scheme as its SDK verifies it, Lemon
// Squeezy's documented HMAC), payloads shaped like the providers' documented examples, and a local
// HTTP server answering as Stripe's API.

export type Provider = 'stripe' | 'paddle' | 'lemonsqueezy';

export const SECRETS: Record<Provider, string> = {
  stripe: 'whsec_test_5e7f0c2d9a4b41e3a8c6d7f0b1e2c3d4',
  paddle: 'pdl_ntfset_01hv8x2test_0123456789abcdefghijklmnopqrstuv',
  lemonsqueezy: 'ls-signing-secret-42',
};

export interface Connected {
  id: number;
  webhookUrl: string;
}

export async function connect(c: TestContext, ws: SeededWorkspace, provider: Provider, extra: { mapping?: Record<string, string>; apiKey?: string; secret?: string } = {}): Promise<Connected> {
  const res = await c.app.inject({
    method: 'POST',
    url: '/api/developer/checkout-connections',
    headers: bearer(ws.owner),
    payload: {
      provider,
      signingSecret: extra.secret ?? SECRETS[provider],
      productMapping: Object.entries(extra.mapping ?? {}).map(([providerProductId, product]) => ({ providerProductId, productId: ws.ids.products[product]! })),
      ...(extra.apiKey ? { apiKey: extra.apiKey } : {}),
    },
  });
  if (res.statusCode !== 201) throw new Error(`connect: ${res.statusCode} ${res.body}`);
  return res.json();
}

export const now = () => Math.floor(Date.now() / 1000);

/** Posts a body to a connection's webhook URL, signed for its provider (or with the headers given). */
export function deliver(c: TestContext, provider: Provider, connectionId: number, body: object | string, opts: { secret?: string; headers?: Record<string, string> } = {}) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const secret = opts.secret ?? SECRETS[provider];
  const signature =
    provider === 'stripe'
      ? { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) }
      : provider === 'paddle'
        ? { 'paddle-signature': paddleSignature(payload, secret) }
        : { 'x-signature': createHmac('sha256', secret).update(payload).digest('hex') };
  return c.app.inject({
    method: 'POST',
    url: `/api/checkout/${provider}/${connectionId}/events`,
    headers: { 'content-type': 'application/json', ...(opts.headers ?? signature) },
    payload,
  });
}

/** `Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`, as the SDK's verifier computes it. */
export const paddleSignature = (payload: string, secret: string, ts = now()) => `ts=${ts};h1=${createHmac('sha256', secret).update(`${ts}:${payload}`).digest('hex')}`;

// ---- Stripe (shapes from Stripe's API reference: the Event, Checkout Session, Charge and Refund objects)

export function stripeSession(extra: { id?: string; amount?: number; discount?: number; tax?: number; currency?: string; email?: string; metadata?: Record<string, string>; clientReferenceId?: string | null; paymentIntent?: string; paymentStatus?: string } = {}) {
  const amount = extra.amount ?? 4900;
  const discount = extra.discount ?? 0;
  const tax = extra.tax ?? 0;
  // A second ahead: the seeded agreements take effect when they are written, and a sale before that is not theirs.
  const created = now() + 1;
  return {
    id: `evt_${unique()}${unique()}`,
    object: 'event',
    api_version: '2025-09-30.clover',
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'checkout.session.completed',
    data: {
      object: {
        id: extra.id ?? `cs_test_${unique()}${unique()}`,
        object: 'checkout.session',
        amount_subtotal: amount,
        amount_total: amount - discount + tax,
        client_reference_id: extra.clientReferenceId ?? null,
        created,
        currency: extra.currency ?? 'usd',
        customer: null,
        customer_details: { address: { city: null, country: 'DE', line1: null, line2: null, postal_code: null, state: null }, email: extra.email ?? `jenny-${unique()}@example.com`, name: 'Jenny Rosen', phone: null, tax_exempt: 'none', tax_ids: [] },
        customer_email: null,
        expires_at: created + 86_400,
        livemode: false,
        metadata: extra.metadata ?? {},
        mode: 'payment',
        payment_intent: extra.paymentIntent ?? `pi_${unique()}${unique()}`,
        payment_status: extra.paymentStatus ?? 'paid',
        status: 'complete',
        success_url: 'https://store.example/thanks',
        total_details: { amount_discount: discount, amount_shipping: 0, amount_tax: tax },
        url: null,
      },
    },
  };
}

export function stripeChargeRefunded(paymentIntent: string, amount: number, amountRefunded: number) {
  return {
    id: `evt_${unique()}${unique()}`,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: now(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${unique()}`, idempotency_key: null },
    type: 'charge.refunded',
    data: {
      object: { id: `ch_${unique()}`, object: 'charge', amount, amount_captured: amount, amount_refunded: amountRefunded, captured: true, currency: 'usd', paid: true, payment_intent: paymentIntent, refunded: amountRefunded >= amount, status: 'succeeded' },
      previous_attributes: { amount_refunded: 0, refunded: false },
    },
  };
}

export function stripeRefundCreated(paymentIntent: string, amount: number, refundId = `re_${unique()}${unique()}`, status = 'succeeded') {
  return {
    id: `evt_${unique()}${unique()}`,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: now(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${unique()}`, idempotency_key: null },
    type: 'refund.created',
    data: { object: { id: refundId, object: 'refund', amount, charge: `ch_${unique()}`, created: now(), currency: 'usd', metadata: {}, payment_intent: paymentIntent, reason: 'requested_by_customer', status } },
  };
}

/** A local HTTP server answering as Stripe's API: a session's line items, and what it was asked. */
export async function stripeApiServer(lineItems: Map<string, object[]>): Promise<{ server: Server; port: number; requests: Array<{ url: string; authorization: string | undefined }> }> {
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const match = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items/.exec(req.url ?? '');
    const items = match ? lineItems.get(decodeURIComponent(match[1]!)) : undefined;
    res.setHeader('content-type', 'application/json');
    if (req.headers.authorization !== 'Bearer rk_test_lineitems_0123456789') {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }));
      return;
    }
    if (!items) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'No such checkout session' } }));
      return;
    }
    res.end(JSON.stringify({ object: 'list', data: items, has_more: false, url: `/v1/checkout/sessions/${match![1]}/line_items` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

export const STRIPE_API_KEY = 'rk_test_lineitems_0123456789';

export const stripeLineItem = (product: string, amount: number, extra: { discount?: number; quantity?: number; tax?: number } = {}) => ({
  id: `li_${unique()}`,
  object: 'item',
  amount_discount: extra.discount ?? 0,
  amount_subtotal: amount,
  amount_tax: extra.tax ?? 0,
  amount_total: amount - (extra.discount ?? 0) + (extra.tax ?? 0),
  currency: 'usd',
  description: `Plugin ${product}`,
  price: { id: `price_${unique()}`, object: 'price', active: true, currency: 'usd', product, type: 'one_time', unit_amount: amount },
  quantity: extra.quantity ?? 1,
});

// ---- Paddle (shapes from Paddle's webhook reference: transaction.completed, adjustment.created, customer.created)

export function paddleCustomer(customerId: string, email: string, type = 'customer.created') {
  return {
    event_id: `evt_${unique()}${unique()}`,
    event_type: type,
    occurred_at: new Date().toISOString(),
    notification_id: `ntf_${unique()}`,
    data: { id: customerId, name: 'Sam Miller', email, locale: 'en', status: 'active', created_at: new Date().toISOString(), updated_at: new Date().toISOString(), custom_data: null, import_meta: null, marketing_consent: false },
  };
}

export function paddleTransaction(customerId: string, lines: Array<{ product: string; subtotal: number; tax?: number; discount?: number }>, extra: { id?: string; customData?: Record<string, string> | null; currency?: string } = {}) {
  const items = lines.map((l) => ({ ...l, price: `pri_${unique()}`, item: `txnitm_${unique()}` }));
  const total = (l: (typeof items)[number]) => l.subtotal - (l.discount ?? 0) + (l.tax ?? 0);
  const at = new Date(Date.now() + 1000).toISOString();
  return {
    event_id: `evt_${unique()}${unique()}`,
    event_type: 'transaction.completed',
    occurred_at: at,
    notification_id: `ntf_${unique()}`,
    data: {
      id: extra.id ?? `txn_${unique()}${unique()}`,
      status: 'completed',
      origin: 'web',
      customer_id: customerId,
      address_id: `add_${unique()}`,
      business_id: null,
      custom_data: extra.customData ?? null,
      currency_code: extra.currency ?? 'USD',
      collection_mode: 'automatic',
      subscription_id: null,
      invoice_id: `inv_${unique()}`,
      invoice_number: '325-10566',
      discount_id: null,
      billing_details: null,
      billing_period: null,
      items: items.map((l) => ({ price: { id: l.price, product_id: l.product, name: 'Perpetual licence', type: 'standard', status: 'active', unit_price: { amount: String(l.subtotal), currency_code: 'USD' }, billing_cycle: null, trial_period: null, tax_mode: 'account_setting', custom_data: null }, quantity: 1, proration: null })),
      details: {
        totals: { subtotal: String(items.reduce((s, l) => s + l.subtotal, 0)), discount: String(items.reduce((s, l) => s + (l.discount ?? 0), 0)), tax: String(items.reduce((s, l) => s + (l.tax ?? 0), 0)), total: String(items.reduce((s, l) => s + total(l), 0)), credit: '0', balance: '0', grand_total: String(items.reduce((s, l) => s + total(l), 0)), fee: '0', earnings: '0', currency_code: 'USD' },
        line_items: items.map((l) => ({ id: l.item, price_id: l.price, quantity: 1, proration: null, tax_rate: '0.2', unit_totals: { subtotal: String(l.subtotal), discount: String(l.discount ?? 0), tax: String(l.tax ?? 0), total: String(total(l)) }, totals: { subtotal: String(l.subtotal), discount: String(l.discount ?? 0), tax: String(l.tax ?? 0), total: String(total(l)) }, product: { id: l.product, name: `Plugin ${l.product}`, type: 'standard', status: 'active' } })),
      },
      payments: [{ amount: String(items.reduce((s, l) => s + total(l), 0)), status: 'captured', created_at: at, error_code: null, captured_at: at, method_details: { type: 'card', card: { type: 'visa', last4: '3184', expiry_year: 2027, expiry_month: 1, cardholder_name: 'Sam Miller' } }, payment_method_id: `paymtd_${unique()}`, payment_attempt_id: unique(), stored_payment_method_id: unique() }],
      checkout: { url: 'https://store.example/checkout?_ptxn=txn' },
      created_at: at,
      updated_at: at,
      billed_at: at,
      revised_at: null,
    },
    /** The transaction items' ids, for refund adjustments. */
    itemIds: items.map((l) => l.item),
  };
}

export function paddleAdjustment(transactionId: string, items: Array<{ itemId: string; type: 'full' | 'partial'; total: number }>, extra: { status?: string; action?: string; type?: string; id?: string } = {}) {
  const at = new Date().toISOString();
  return {
    event_id: `evt_${unique()}${unique()}`,
    event_type: extra.type ?? 'adjustment.created',
    occurred_at: at,
    notification_id: `ntf_${unique()}`,
    data: {
      id: extra.id ?? `adj_${unique()}${unique()}`,
      action: extra.action ?? 'refund',
      reason: 'error',
      status: extra.status ?? 'approved',
      transaction_id: transactionId,
      subscription_id: null,
      customer_id: `ctm_${unique()}`,
      currency_code: 'USD',
      credit_applied_to_balance: null,
      items: items.map((i) => ({ id: `adjitm_${unique()}`, item_id: i.itemId, type: i.type, amount: String(i.total), proration: null, totals: { subtotal: String(i.total), tax: '0', total: String(i.total) } })),
      totals: { subtotal: String(items.reduce((s, i) => s + i.total, 0)), tax: '0', total: String(items.reduce((s, i) => s + i.total, 0)), fee: '0', earnings: '0', currency_code: 'USD' },
      created_at: at,
      updated_at: at,
    },
  };
}

/** What the SDK-built payload builders add for the tests; never sent. */
export const withoutHelpers = <T extends { itemIds?: unknown }>(event: T) => {
  const { itemIds: _itemIds, ...body } = event;
  return body;
};

// ---- Lemon Squeezy (shape from Lemon Squeezy's webhook reference: the Order object)

export function lemonOrder(orderId: string, productId: number, extra: { event?: string; subtotal?: number; tax?: number; discount?: number; refundedAmount?: number; status?: string; email?: string; customData?: Record<string, string>; currency?: string } = {}) {
  const subtotal = extra.subtotal ?? 999;
  const tax = extra.tax ?? 200;
  const discount = extra.discount ?? 0;
  const total = subtotal - discount + tax;
  const refunded = extra.refundedAmount ?? 0;
  const at = new Date(Date.now() + 1000).toISOString();
  return {
    meta: { event_name: extra.event ?? 'order_created', custom_data: extra.customData ?? null, test_mode: true, webhook_id: unique() },
    data: {
      type: 'orders',
      id: orderId,
      attributes: {
        store_id: 1,
        customer_id: 1,
        identifier: `${unique()}-d755-4d4b-80c4-a6c1dcbe1c10`,
        order_number: 1,
        user_name: 'Darlene Daugherty',
        user_email: extra.email ?? `darlene-${unique()}@example.com`,
        currency: extra.currency ?? 'USD',
        currency_rate: '1.0000',
        subtotal,
        setup_fee: 0,
        discount_total: discount,
        tax,
        total,
        subtotal_usd: subtotal,
        discount_total_usd: discount,
        tax_usd: tax,
        total_usd: total,
        tax_name: 'VAT',
        tax_rate: '20.00',
        tax_inclusive: false,
        status: extra.status ?? (refunded >= total ? 'refunded' : refunded > 0 ? 'partial_refund' : 'paid'),
        status_formatted: 'Paid',
        refunded: refunded > 0,
        refunded_at: refunded > 0 ? at : null,
        refunded_amount: refunded,
        first_order_item: { id: 1, order_id: Number(orderId), product_id: productId, variant_id: productId * 10, product_name: 'Test Limited License for 2 years', variant_name: 'Default', price: subtotal, quantity: 1, created_at: at, updated_at: at, test_mode: true },
        urls: { receipt: 'https://app.lemonsqueezy.com/my-orders/receipt' },
        created_at: at,
        updated_at: at,
        test_mode: true,
      },
    },
  };
}

// ---- what the tests read back

export async function events(c: TestContext, ws: SeededWorkspace, connectionId: number) {
  const res = await c.app.inject({ method: 'GET', url: `/api/developer/checkout-connections/${connectionId}/events`, headers: bearer(ws.owner) });
  return res.json().rows as Array<{ id: number; provider_event_id: string; type: string; outcome: string; reason: string | null; order_item_ids: number[] }>;
}

export async function purchases(c: TestContext, ws: SeededWorkspace) {
  return (await c.app.inject({ method: 'GET', url: '/api/developer/purchases', headers: bearer(ws.owner) })).json().rows as Array<Record<string, unknown>>;
}

/** The serial sold with an order item, and what the licensing runtime answers for it. */
export async function serialOf(c: TestContext, ws: SeededWorkspace, orderItemId: number, product = 'p1') {
  const item = await c.database.db.selectFrom('order_items').select(['serial_id', 'refund_status', 'refunded_cents', 'channel', 'provider']).where('id', '=', orderItemId).executeTakeFirstOrThrow();
  const serial = await c.database.db.selectFrom('serials').select(['id', 'code', 'status']).where('id', '=', item.serial_id!).executeTakeFirstOrThrow();
  const validate = async (machineId = 'studio-mac') =>
    (await c.app.inject({ method: 'POST', url: '/api/licensing/v1/validate', payload: { productAppId: ws.appIds[product], serial: serial.code, machineId } })).json() as { valid: boolean; code: string };
  const activate = async (machineId = 'studio-mac') => c.app.inject({ method: 'POST', url: '/api/licensing/v1/activate', payload: { productAppId: ws.appIds[product], serial: serial.code, machineId } });
  return { item, serial, validate, activate };
}

export async function entitlementStatus(c: TestContext, orderItemId: number) {
  return (await c.database.db.selectFrom('entitlements').select('status').where('order_item_id', '=', orderItemId).executeTakeFirstOrThrow()).status;
}

export async function balances(c: TestContext, workspaceId: number) {
  const rows = await sql<{ account: string; agreement_id: number | null; total: string }>`
    select account, agreement_id, sum(amount)::text as total from ledger_entries where workspace_id = ${workspaceId} group by account, agreement_id`.execute(c.database.db);
  return Object.fromEntries(rows.rows.map((r) => [r.agreement_id ? `${r.account}:${r.agreement_id}` : r.account, BigInt(r.total)]));
}
