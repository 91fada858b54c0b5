import type { Server } from 'node:http';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { ReferralContextSigner } from '../../src/modules/referrals/referral-context.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, TEST_LICENSE_KEY, type TestContext, unique } from '../helpers/app.js';
import {
  balances,
  connect,
  deliver,
  entitlementStatus,
  events,
  purchases,
  SECRETS,
  serialOf,
  STRIPE_API_KEY,
  stripeApiServer,
  stripeChargeRefunded,
  stripeLineItem,
  stripeRefundCreated,
  stripeSession,
} from './helpers.js';

const transport = new MemoryTransport();
const lineItems = new Map<string, object[]>();
let api: { server: Server; port: number; requests: Array<{ url: string; authorization: string | undefined }> };
let c: TestContext;
const referrals = new ReferralContextSigner([TEST_LICENSE_KEY]);

beforeAll(async () => {
  api = await stripeApiServer(lineItems);
  c = await buildTestApp({ mail: { transport }, checkoutConnections: { stripeApi: { host: '127.0.0.1', port: api.port, protocol: 'http' } } });
});
afterAll(async () => {
  await c?.app.close();
  await c?.database.close();
  await new Promise((resolve) => api?.server.close(resolve));
});
afterEach(async () => {
  // The ledger invariant after every test: each transaction sums to zero per currency.
  expect(await unbalancedTransactions(c.database.db)).toEqual([]);
});

/** A workspace whose collaborator (30 % of p1) shares in external sales, with a Stripe connection. */
async function store(options: { apiKey?: boolean } = {}) {
  const ws = await seedWorkspace(c, {
    programs: [
      { key: 'aff', kind: 'affiliate', name: 'Aff', recipientEmail: `aff-${unique()}@partner.test`, rateBps: 2000, includeResellerSales: true, status: 'active', consents: ['developer', 'recipient'] },
      { key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `co-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 3000 }], includeResellerSales: true, status: 'active', consents: ['developer', 'recipient'] },
    ],
  });
  const prod1 = `prod_${unique()}`;
  const prod2 = `prod_${unique()}`;
  const connection = await connect(c, ws, 'stripe', { mapping: { [prod1]: 'p1', [prod2]: 'p2' }, ...(options.apiKey === false ? {} : { apiKey: STRIPE_API_KEY }) });
  return { ws, connection, prod1, prod2 };
}

/** A paid session whose line items the local Stripe API lists. */
function paidSession(items: object[], extra: Parameters<typeof stripeSession>[0] = {}) {
  const total = items.reduce((s: number, i) => s + (i as { amount_subtotal: number }).amount_subtotal, 0);
  const discount = items.reduce((s: number, i) => s + (i as { amount_discount: number }).amount_discount, 0);
  const tax = items.reduce((s: number, i) => s + (i as { amount_tax: number }).amount_tax, 0);
  const event = stripeSession({ amount: total, discount, tax, ...extra });
  lineItems.set(event.data.object.id, items);
  return event;
}

describe('Stripe: checkout.session.completed', () => {
  it('books a sale listed through Stripe’s API: customer, purchase (channel and provider), serial, buyer e-mail, an external allocation', async () => {
    const { ws, connection, prod1 } = await store();
    const pbRef = referrals.sign({ agreementId: ws.ids.programs.aff!, workspaceId: ws.workspaceId, visitedAt: new Date(Date.now() - 60_000) });
    const event = paidSession([stripeLineItem(prod1, 10000)], { clientReferenceId: pbRef });
    const res = await deliver(c, 'stripe', connection.id, event);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ received: true, id: event.id, outcome: 'recorded', reason: null });
    const [itemId] = res.json().order_item_ids;
    // The library asked the local "Stripe" with the connection's key.
    expect(api.requests.at(-1)).toMatchObject({ url: expect.stringContaining(`/v1/checkout/sessions/${event.data.object.id}/line_items`), authorization: `Bearer ${STRIPE_API_KEY}` });

    const [row] = await purchases(c, ws);
    expect(row).toMatchObject({ channel: 'external_store', provider: 'stripe', sale_price_cents: 10000, product_id: ws.ids.products.p1 });
    const customers = (await c.app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) })).json().rows;
    expect(customers.map((r: { email: string }) => r.email)).toContain(event.data.object.customer_details.email);
    const { serial, activate, validate } = await serialOf(c, ws, itemId);
    expect(serial.status).toBe('redeemed');
    expect((await activate()).statusCode).toBe(201);
    expect((await validate()).valid).toBe(true);
    await c.app.jobs.idle();
    expect(transport.sent.some((m) => m.to === event.data.object.customer_details.email)).toBe(true);
    // External collection (section 4.8): partner shares are unfunded estimates, nothing is payable.
    const b = await balances(c, ws.workspaceId);
    expect(b[`external_estimate:${ws.ids.programs.aff}`]).toBe(2000n);
    expect(b[`external_estimate:${ws.ids.programs.co}`]).toBe(3000n);
    expect(b[`partner_payable:${ws.ids.programs.aff}`]).toBeUndefined();
    expect(b.checkout_clearing).toBeUndefined();
  });

  it('books the product named in the session’s metadata without an API key', async () => {
    const { ws, connection } = await store({ apiKey: false });
    const event = stripeSession({ amount: 2500, discount: 500, tax: 400, metadata: { patchbay_product_id: String(ws.ids.products.p2) } });
    const res = await deliver(c, 'stripe', connection.id, event);
    expect(res.json().outcome).toBe('recorded');
    const [row] = await purchases(c, ws);
    expect(row).toMatchObject({ product_id: ws.ids.products.p2, price_cents: 2500, sale_price_cents: 2000, currency: 'usd' });
  });

  it('logs a sale without an API key or metadata as failed with the reason, and books nothing', async () => {
    const { ws, connection } = await store({ apiKey: false });
    const res = await deliver(c, 'stripe', connection.id, stripeSession());
    expect(res.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('restricted API key') });
    expect(await purchases(c, ws)).toEqual([]);
  });

  it('logs an unmapped item as failed and books it once the mapping is fixed and the event re-processed', async () => {
    const { ws, connection } = await store();
    const unmapped = `prod_${unique()}`;
    const event = paidSession([stripeLineItem(unmapped, 3000)]);
    const res = await deliver(c, 'stripe', connection.id, event);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining(unmapped) });
    expect(await purchases(c, ws)).toEqual([]);
    expect(await balances(c, ws.workspaceId)).toEqual({});
    const [logged] = await events(c, ws, connection.id);
    expect(logged).toMatchObject({ provider_event_id: event.id, type: 'checkout.session.completed', outcome: 'failed' });
    // The body is kept sealed while it may be re-processed: not readable in the table.
    const stored = await c.database.db.selectFrom('checkout_connection_events').select('payload_sealed').where('id', '=', logged!.id).executeTakeFirstOrThrow();
    expect(stored.payload_sealed).toMatch(/^v1\./);
    expect(stored.payload_sealed).not.toContain('jenny');

    const mapping = [{ providerProductId: unmapped, productId: ws.ids.products.p3 }];
    expect((await c.app.inject({ method: 'PATCH', url: `/api/developer/checkout-connections/${connection.id}`, headers: bearer(ws.owner), payload: { productMapping: mapping } })).statusCode).toBe(200);
    const again = await c.app.inject({ method: 'POST', url: `/api/developer/checkout-connections/${connection.id}/events/${logged!.id}/reprocess`, headers: bearer(ws.owner) });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id: logged!.id, outcome: 'recorded', reason: null, attempts: 2 });
    expect((await purchases(c, ws))[0]).toMatchObject({ product_id: ws.ids.products.p3 });
    const cleared = await c.database.db.selectFrom('checkout_connection_events').select('payload_sealed').where('id', '=', logged!.id).executeTakeFirstOrThrow();
    expect(cleared.payload_sealed).toBeNull();
    // Re-processing a booked event is refused; the provider's replay answers replayed.
    const twice = await c.app.inject({ method: 'POST', url: `/api/developer/checkout-connections/${connection.id}/events/${logged!.id}/reprocess`, headers: bearer(ws.owner) });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe('CHECKOUT_CONNECTION_EVENT_NOT_FAILED');
    expect((await deliver(c, 'stripe', connection.id, event)).json().outcome).toBe('replayed');
  });

  it('answers a replay as replayed and changes nothing; the same id with another body is 409 CHECKOUT_CONNECTION_EVENT_ID_REUSED', async () => {
    const { ws, connection, prod1 } = await store();
    const event = paidSession([stripeLineItem(prod1, 5000)]);
    expect((await deliver(c, 'stripe', connection.id, event)).json().outcome).toBe('recorded');
    const before = await balances(c, ws.workspaceId);
    const calls = api.requests.length;
    const again = await deliver(c, 'stripe', connection.id, event);
    expect(again.json()).toMatchObject({ outcome: 'replayed', order_item_ids: (await purchases(c, ws)).map((p) => p.order_item_id) });
    expect(api.requests.length).toBe(calls);
    const changed = structuredClone(event);
    changed.data.object.amount_total = 1;
    const reused = await deliver(c, 'stripe', connection.id, changed);
    expect(reused.statusCode).toBe(409);
    expect(reused.json().code).toBe('CHECKOUT_CONNECTION_EVENT_ID_REUSED');
    expect(await balances(c, ws.workspaceId)).toEqual(before);
    expect(await purchases(c, ws)).toHaveLength(1);
    // Another event naming the same session (async_payment_succeeded after completed) books nothing twice.
    const late = { ...structuredClone(event), id: `evt_${unique()}`, type: 'checkout.session.async_payment_succeeded' };
    expect((await deliver(c, 'stripe', connection.id, late)).json()).toMatchObject({ outcome: 'replayed', reason: expect.stringContaining('already recorded') });
    expect(await purchases(c, ws)).toHaveLength(1);
  });

  it('refuses a missing, wrong or stale signature with 400 and records nothing; another connection’s secret does not sign for this one', async () => {
    const { ws, connection, prod1 } = await store();
    const other = await seedWorkspace(c);
    const otherConnection = await connect(c, other, 'stripe', { secret: 'whsec_other_workspace_0123456789abcdef' });
    const sibling = await connect(c, ws, 'stripe', { secret: 'whsec_sibling_connection_0123456789abcd' });
    const event = paidSession([stripeLineItem(prod1, 5000)]);
    const payload = JSON.stringify(event);
    const Stripe = (await import('stripe')).default;
    const cases: Array<Record<string, string>> = [
      {},
      { 'stripe-signature': 't=1,v1=00' },
      { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRETS.stripe, timestamp: Math.floor(Date.now() / 1000) - 301 }) },
      { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_other_workspace_0123456789abcdef' }) },
      { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_sibling_connection_0123456789abcd' }) },
    ];
    for (const headers of cases) {
      const res = await deliver(c, 'stripe', connection.id, payload, { headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(400);
      expect(res.json().code).toBe('CHECKOUT_CONNECTION_SIGNATURE_INVALID');
    }
    // This connection's secret signs for neither the other workspace's connection nor its sibling.
    for (const id of [otherConnection.id, sibling.id]) expect((await deliver(c, 'stripe', id, payload)).statusCode).toBe(400);
    // The URL names the provider: a Stripe connection under another provider's path is not found.
    expect((await deliver(c, 'paddle', connection.id, payload)).statusCode).toBe(404);
    expect((await deliver(c, 'stripe', 2_000_000_000, payload)).statusCode).toBe(404);
    for (const [w, id] of [[ws, connection.id], [ws, sibling.id], [other, otherConnection.id]] as const) expect(await events(c, w, id)).toEqual([]);
    expect(await purchases(c, ws)).toEqual([]);
  });

  it('answers a disabled connection 409 and records nothing, then books the provider’s retry once enabled', async () => {
    const { ws, connection, prod1 } = await store();
    await c.app.inject({ method: 'PATCH', url: `/api/developer/checkout-connections/${connection.id}`, headers: bearer(ws.owner), payload: { enabled: false } });
    const event = paidSession([stripeLineItem(prod1, 700)]);
    const res = await deliver(c, 'stripe', connection.id, event);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('CHECKOUT_CONNECTION_DISABLED');
    expect(await events(c, ws, connection.id)).toEqual([]);
    await c.app.inject({ method: 'PATCH', url: `/api/developer/checkout-connections/${connection.id}`, headers: bearer(ws.owner), payload: { enabled: true } });
    expect((await deliver(c, 'stripe', connection.id, event)).json().outcome).toBe('recorded');
  });

  it('ignores unpaid sessions and other event types with the reason', async () => {
    const { ws, connection } = await store();
    expect((await deliver(c, 'stripe', connection.id, stripeSession({ paymentStatus: 'unpaid' }))).json()).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('async_payment_succeeded') });
    const other = { ...stripeSession(), type: 'customer.created' };
    expect((await deliver(c, 'stripe', connection.id, other)).json()).toMatchObject({ outcome: 'ignored' });
    expect(await purchases(c, ws)).toEqual([]);
  });

  it('refuses a correctly signed body that is not an event with 400 CHECKOUT_CONNECTION_EVENT_UNREADABLE', async () => {
    const { connection } = await store();
    for (const body of ['not json', JSON.stringify({ hello: 'world' })]) {
      const res = await deliver(c, 'stripe', connection.id, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('CHECKOUT_CONNECTION_EVENT_UNREADABLE');
    }
  });

  it('fails a sale whose metadata names another workspace’s product, naming no record of it', async () => {
    const { ws, connection } = await store({ apiKey: false });
    const other = await seedWorkspace(c);
    const res = await deliver(c, 'stripe', connection.id, stripeSession({ metadata: { patchbay_product_id: String(other.ids.products.p1) } }));
    expect(res.json()).toMatchObject({ outcome: 'failed' });
    expect(await purchases(c, ws)).toEqual([]);
    expect(await purchases(c, other)).toEqual([]);
  });
});

describe('Stripe: refunds', () => {
  it('a full refund ends the entitlement, revokes the serial (its activations stop validating, audited with reason refund) and reverses the partner shares', async () => {
    const { ws, connection, prod1 } = await store();
    const event = paidSession([stripeLineItem(prod1, 10000)]);
    const [itemId] = (await deliver(c, 'stripe', connection.id, event)).json().order_item_ids;
    const sold = await serialOf(c, ws, itemId);
    await sold.activate();
    expect((await sold.validate()).valid).toBe(true);
    const refund = await deliver(c, 'stripe', connection.id, stripeChargeRefunded(event.data.object.payment_intent, 10000, 10000));
    expect(refund.json()).toMatchObject({ outcome: 'recorded', order_item_ids: [itemId] });
    expect(await entitlementStatus(c, itemId)).toBe('revoked');
    const after = await serialOf(c, ws, itemId);
    expect(after.item).toMatchObject({ refund_status: 'full', refunded_cents: 10000 });
    expect(after.serial.status).toBe('revoked');
    expect(await after.validate()).toMatchObject({ valid: false, code: 'REVOKED' });
    const audit = await c.database.db.selectFrom('serial_events').select(['action', 'actor_type', 'reason', 'before_status', 'after_status']).where('serial_id', '=', after.serial.id).where('action', '=', 'revoke').execute();
    expect(audit).toEqual([{ action: 'revoke', actor_type: 'system', reason: 'refund', before_status: 'redeemed', after_status: 'revoked' }]);
    const b = await balances(c, ws.workspaceId);
    expect(b[`external_estimate:${ws.ids.programs.co}`]).toBe(0n);
    // refund.created for the same refund, after the fact, counts nothing again.
    const dup = await deliver(c, 'stripe', connection.id, stripeRefundCreated(event.data.object.payment_intent, 10000));
    expect(dup.json()).toMatchObject({ outcome: 'replayed', reason: 'this refund was already counted' });
  });

  it('a partial refund changes no serial; refund.created and charge.refunded for the same refunds count once', async () => {
    const { ws, connection, prod1, prod2 } = await store();
    const event = paidSession([stripeLineItem(prod1, 6000), stripeLineItem(prod2, 4000)]);
    const items: number[] = (await deliver(c, 'stripe', connection.id, event)).json().order_item_ids;
    const pi = event.data.object.payment_intent;
    // 25 % of the order, as refund.created (by its id) and again as charge.refunded (the running total).
    const first = await deliver(c, 'stripe', connection.id, stripeRefundCreated(pi, 2500, 're_first'));
    expect(first.json().outcome).toBe('recorded');
    expect((await deliver(c, 'stripe', connection.id, stripeChargeRefunded(pi, 10000, 2500))).json().outcome).toBe('replayed');
    for (const id of items) {
      const s = await serialOf(c, ws, id, id === items[0] ? 'p1' : 'p2');
      expect(s.item.refund_status).toBe('partial');
      expect(s.serial.status).toBe('redeemed');
      expect(await entitlementStatus(c, id)).toBe('active');
    }
    expect((await serialOf(c, ws, items[0]!)).item.refunded_cents).toBe(1500);
    expect((await serialOf(c, ws, items[1]!, 'p2')).item.refunded_cents).toBe(1000);
    // The rest, reported as the running total: now every item is fully refunded and its serial revoked.
    expect((await deliver(c, 'stripe', connection.id, stripeChargeRefunded(pi, 10000, 10000))).json().outcome).toBe('recorded');
    expect((await serialOf(c, ws, items[0]!)).serial.status).toBe('revoked');
    expect((await serialOf(c, ws, items[1]!, 'p2')).serial.status).toBe('revoked');
  });

  it('keeps the serial active on a full refund when the workspace keeps serials on refund', async () => {
    const { ws, connection, prod1 } = await store();
    const setting = await c.app.inject({ method: 'PATCH', url: '/api/developer/workspace', headers: bearer(ws.owner), payload: { keep_serials_on_refund: true } });
    expect(setting.json()).toMatchObject({ keep_serials_on_refund: true });
    const event = paidSession([stripeLineItem(prod1, 1000)]);
    const [itemId] = (await deliver(c, 'stripe', connection.id, event)).json().order_item_ids;
    await deliver(c, 'stripe', connection.id, stripeChargeRefunded(event.data.object.payment_intent, 1000, 1000));
    const after = await serialOf(c, ws, itemId);
    expect(after.item.refund_status).toBe('full');
    expect(await entitlementStatus(c, itemId)).toBe('revoked');
    expect(after.serial.status).toBe('redeemed');
  });

  it('logs a refund of a sale this connection never recorded as failed', async () => {
    const { ws, connection } = await store();
    const res = await deliver(c, 'stripe', connection.id, stripeChargeRefunded(`pi_${unique()}`, 1000, 1000));
    expect(res.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('no sale') });
    expect(await balances(c, ws.workspaceId)).toEqual({});
  });
});

describe.runIf(onPostgres)('Stripe: parallel deliveries on PostgreSQL', () => {
  it('books one sale when the same event arrives ten times at once, and answers the rest replayed', async () => {
    const { ws, connection, prod1 } = await store();
    const event = paidSession([stripeLineItem(prod1, 4200)]);
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(c, 'stripe', connection.id, event)));
    const outcomes = answers.map((a) => a.json().outcome).sort();
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'replayed')).toHaveLength(9);
    expect(await purchases(c, ws)).toHaveLength(1);
    const rows = await sql<{ n: number }>`select count(*)::int as n from partner_allocations where workspace_id = ${ws.workspaceId}`.execute(c.database.db);
    expect(rows.rows[0]!.n).toBe(1);
    // And one refund delivered five times at once is counted once.
    const refund = stripeChargeRefunded(event.data.object.payment_intent, 4200, 4200);
    const refunds = await Promise.all(Array.from({ length: 5 }, () => deliver(c, 'stripe', connection.id, refund)));
    expect(refunds.map((r) => r.json().outcome).filter((o) => o === 'recorded')).toHaveLength(1);
    expect((await purchases(c, ws))[0]).toMatchObject({ refund_status: 'full' });
  });
});
