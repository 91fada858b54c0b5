import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../src/modules/webhooks/index.js';
import { buyerToken } from '../customer-portal/portal-helpers.js';
import { CHECKOUT_SECRET, payablePartner } from '../payouts/partner-money.js';
import { bearer, seedWorkspace, type SeededWorkspace, unique, useTestApp } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// Every event type of the catalogue, produced by the real operation that causes it (routes, the
// licensing runtime, the buyers' portal, the checkout webhook, a queued import, a payout run),
// verified at a real receiver with the Standard Webhooks library, and each delivered body checked
// against its type's schema as the served OpenAPI document publishes it (the `webhooks` section).

const ctx = useTestApp({ webhooks: { allowedHosts: ['127.0.0.1'] }, checkout: { webhookSecrets: [CHECKOUT_SECRET] } });
const receiver = new Receiver();
const seen = new Set<string>();
/** Per event type, a validator of the whole body from GET /openapi.json's `webhooks` section. */
const published = new Map<string, ValidateFunction>();
beforeAll(async () => {
  await receiver.start();
  const document = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>;
  };
  const ajv = new Ajv.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const [type, item] of Object.entries(document.webhooks)) published.set(type, ajv.compile(item.post.requestBody.content['application/json']!.schema));
});

/** The body as received matches the published schema of its type (no field missing, none extra, each of its type). */
function matchesPublishedSchema(type: string, body: string) {
  const validate = published.get(type);
  expect(validate, `the OpenAPI document publishes ${type}`).toBeDefined();
  expect(validate!(JSON.parse(body)), `${type}: ${JSON.stringify(validate!.errors)}`).toBe(true);
}
afterAll(async () => {
  await receiver.stop();
});

/** A workspace whose endpoint (at its own path) wants every event; answers what that path verified, by type. */
async function listening(extra: Parameters<typeof seedWorkspace>[1] = {}) {
  const ws = await seedWorkspace(ctx(), extra);
  const path = `/e-${unique()}`;
  const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url: receiver.url(path), events: ['*'] } });
  expect(res.statusCode).toBe(201);
  receiver.secrets.push(res.json().secret);
  const events = async (type: string) => {
    await ctx().app.webhooks.idle();
    const got = receiver.received.filter((r) => r.path === path && r.event?.type === type);
    for (const r of got) {
      expect(r.verifiedWith.length, 'signature verified').toBe(1);
      expect(r.event!.workspace_id).toBe(ws.workspaceId);
      matchesPublishedSchema(type, r.body);
    }
    if (got.length > 0) seen.add(type);
    return got.map((r) => r.event!.data);
  };
  return { ws, events, endpointId: res.json().id as number };
}

const post = (ws: SeededWorkspace, url: string, payload?: object, headers: Record<string, string> = {}) =>
  ctx().app.inject({ method: 'POST', url, headers: { ...bearer(ws.owner), ...headers }, ...(payload ? { payload } : {}) });
const runtime = (path: string, payload: object) => ctx().app.inject({ method: 'POST', url: `/api/licensing/v1/${path}`, payload });

describe('webhook events from the operations that cause them', () => {
  it('customer.created by an import, customer.removed by the removal', async () => {
    const { ws, events } = await listening();
    const email = `new-${ws.suffix}@x.test`;
    expect((await post(ws, '/api/developer/customers/import', { customers: [{ email, firstName: 'Ann' }] })).statusCode).toBe(201);
    const [created] = await events('customer.created');
    expect(created).toEqual({ customer_id: expect.any(Number), email, first_name: 'Ann', last_name: null, source: 'import' });
    // The same customer again is no new relationship.
    await post(ws, '/api/developer/customers/import', { customers: [{ email }] });
    expect(await events('customer.created')).toHaveLength(1);
    const removed = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${created!.customer_id}`, headers: bearer(ws.owner), payload: { confirm: true, reason: 'asked to' } });
    expect(removed.statusCode).toBe(200);
    expect(await events('customer.removed')).toEqual([{ customer_id: created!.customer_id, email, reason: 'asked to' }]);
  });

  it('serial.generated once per generation, serial.status_changed for each of the six actions', async () => {
    const { ws, events } = await listening();
    const generated = await post(ws, '/api/developer/serials/generate', { productId: ws.ids.products.p1, quantity: 3, batchTag: 'launch' });
    expect(generated.statusCode).toBe(201);
    const ids = generated.json().serials.map((s: { id: number }) => s.id);
    expect(await events('serial.generated')).toEqual([{ product_id: ws.ids.products.p1, count: 3, serial_ids: ids, batch_tag: 'launch' }]);
    const id = ids[0];
    const steps: Array<[string, string, string]> = [
      ['activate', 'available', 'redeemed'],
      ['suspend', 'redeemed', 'suspended'],
      ['unsuspend', 'suspended', 'redeemed'],
      ['deactivate', 'redeemed', 'deactivated'],
      ['reactivate', 'deactivated', 'redeemed'],
      ['revoke', 'redeemed', 'revoked'],
    ];
    for (const [action] of steps) expect((await post(ws, `/api/developer/serials/${id}/${action}`, { reason: `why ${action}` })).statusCode, action).toBe(200);
    // Delivery order is not guaranteed (events carry their time): compared in the order of the steps.
    const changes = (await events('serial.status_changed')).sort((x, y) => steps.findIndex((s) => s[0] === x.action) - steps.findIndex((s) => s[0] === y.action));
    expect(changes.map((c) => [c.action, c.previous_status, c.status])).toEqual(steps);
    expect(changes[0]).toEqual({ serial_id: id, product_id: ws.ids.products.p1, action: 'activate', previous_status: 'available', status: 'redeemed', released_activations: 0, reason: 'why activate' });
    // A refused transition changes nothing and sends nothing.
    expect((await post(ws, `/api/developer/serials/${id}/activate`, {})).statusCode).toBe(409);
    expect(await events('serial.status_changed')).toHaveLength(6);
  });

  it('activation.created and activation.released from the runtime, the developer API and the buyers’ portal', async () => {
    const { ws, events } = await listening({ productSettings: { maxActivations: 5 }, customers: [{ key: 'me' }], serials: [{ key: 's', product: 'p1', customer: 'me' }] });
    const activate = async (machineId: string) => {
      const res = await runtime('activate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId, machineName: `Rig ${machineId}` });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().activation.id as number;
    };
    const [a, b, c] = [await activate('m-a'), await activate('m-b'), await activate('m-c')];
    // The same machine again is the same seat: no new activation.
    expect((await runtime('activate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'm-a' })).statusCode).toBe(200);
    const byId = (x: Record<string, unknown>, y: Record<string, unknown>) => Number(x.activation_id) - Number(y.activation_id);
    const created = (await events('activation.created')).sort(byId);
    expect(created.map((e) => e.activation_id)).toEqual([a, b, c]);
    expect(created[0]).toEqual({
      activation_id: a, serial_id: ws.ids.serials.s, product_id: ws.ids.products.p1, machine_id: 'm-a', machine_name: 'Rig m-a', platform: null, app_version: null,
      activated_at: expect.any(String), via: 'runtime',
    });
    expect((await runtime('deactivate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'm-a' })).statusCode).toBe(200);
    const support = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/serials/${ws.ids.serials.s}/activations/${b}`, headers: bearer(ws.owner), payload: { reason: 'lost laptop' } });
    expect(support.statusCode).toBe(200);
    const buyer = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);
    const portal = await ctx().app.inject({ method: 'DELETE', url: `/api/customer-portal/licenses/${ws.ids.serials.s}/activations/${c}`, headers: bearer(buyer) });
    expect(portal.statusCode, portal.body).toBe(200);
    const released = (await events('activation.released')).sort(byId);
    expect(released.map((e) => [e.activation_id, e.released_by, e.reason])).toEqual([
      [a, 'runtime', null],
      [b, 'developer', 'lost laptop'],
      [c, 'customer_portal', null],
    ]);
    // An offline activation in the buyers' portal is an activation too.
    const offline = await ctx().app.inject({
      method: 'POST',
      url: `/api/customer-portal/licenses/${ws.ids.serials.s}/offline-activations`,
      headers: bearer(buyer),
      payload: { format: 'patchbay-machine-request/1', productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'studio-b', machineName: 'Studio B', nonce: `n-${unique()}` },
    });
    expect(offline.statusCode, offline.body).toBe(201);
    expect((await events('activation.created')).find((e) => e.machine_id === 'studio-b')).toMatchObject({ via: 'customer_portal' });
  });

  it('purchase.recorded by an import, a manual grant and a checkout sale; serial.assigned; purchase.refunded', async () => {
    const { ws, events } = await listening({ serials: [{ key: 'free', product: 'p2' }] });
    const imported = await post(ws, '/api/developer/purchases/import', {
      purchases: [{ email: `imp-${ws.suffix}@x.test`, productId: ws.ids.products.p2, price: '49.00', salePrice: '39.00', date: '2026-03-01', externalReference: 'EXT-1', serialCode: ws.serialCodes.free }],
    });
    expect(imported.statusCode, imported.body).toBe(201);
    const assigned = await events('serial.assigned');
    expect(assigned).toEqual([{ serial_id: ws.ids.serials.free, product_id: ws.ids.products.p2, customer_id: expect.any(Number), order_id: expect.any(Number), via: 'assigned_by_import' }]);
    const granted = await post(ws, '/api/developer/purchases/manual-grant', { productId: ws.ids.products.p1, email: `g-${ws.suffix}@x.test`, reason: 'giveaway' });
    expect(granted.statusCode, granted.body).toBe(201);
    const orderId = `ord_${unique()}`;
    const sale = JSON.stringify({
      id: `evt_${unique()}`,
      type: 'sale.captured',
      created: Math.floor(Date.now() / 1000),
      data: { workspace_id: ws.workspaceId, order_id: orderId, currency: 'usd', customer: { email: `buyer-${ws.suffix}@x.test` }, items: [{ product_id: ws.ids.products.p3, subtotal_cents: 4900, discount_cents: 900 }] },
    });
    const checkout = (body: string) =>
      ctx().app.inject({ method: 'POST', url: '/api/checkout/events', headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(CHECKOUT_SECRET, body, Math.floor(Date.now() / 1000)) }, payload: body });
    expect((await checkout(sale)).statusCode).toBe(200);
    const recorded = (await events('purchase.recorded')).sort((x, y) => Number(x.order_item_id) - Number(y.order_item_id));
    expect(recorded.map((r) => r.channel)).toEqual(['import', 'manual_grant', 'managed_checkout']);
    expect(recorded[0]).toMatchObject({ product_id: ws.ids.products.p2, price_cents: 4900, sale_price_cents: 3900, currency: 'usd', serial_id: ws.ids.serials.free, record_type: 'sale' });
    expect(recorded[2]).toMatchObject({ product_id: ws.ids.products.p3, price_cents: 4900, sale_price_cents: 4000, record_type: 'sale' });
    // Two refunds of the sale: a part, then the rest.
    for (const amount of [1000, 3000]) {
      const refund = JSON.stringify({ id: `evt_${unique()}`, type: 'refund.created', created: Math.floor(Date.now() / 1000), data: { workspace_id: ws.workspaceId, order_id: orderId, product_id: ws.ids.products.p3, amount_cents: amount } });
      expect((await checkout(refund)).statusCode).toBe(200);
    }
    expect((await events('purchase.refunded')).sort((x, y) => Number(x.refunded_cents) - Number(y.refunded_cents))).toEqual([
      { order_item_id: recorded[2]!.order_item_id, order_reference: orderId, amount_cents: 1000, refunded_cents: 1000, fully_refunded: false, refunded_at: expect.any(String) },
      { order_item_id: recorded[2]!.order_item_id, order_reference: orderId, amount_cents: 3000, refunded_cents: 4000, fully_refunded: true, refunded_at: expect.any(String) },
    ]);
    // An import row seen before records nothing, and announces nothing.
    await post(ws, '/api/developer/purchases/import', { purchases: [{ email: `imp-${ws.suffix}@x.test`, productId: ws.ids.products.p2, price: '49.00', salePrice: '39.00', date: '2026-03-01', externalReference: 'EXT-1' }] });
    expect(await events('purchase.recorded')).toHaveLength(3);
  });

  it('import.finished when a queued import ends', async () => {
    const { ws, events } = await listening();
    const queued = await post(ws, '/api/developer/customers/import', { customers: [{ email: `q-${ws.suffix}@x.test` }] }, { prefer: 'respond-async' });
    expect(queued.statusCode).toBe(202);
    await ctx().app.jobs.idle();
    const importId = Number(String(queued.headers.location).split('/').pop());
    expect(await events('import.finished')).toEqual([{ import_id: importId, kind: 'customers', state: 'succeeded', imported_count: 1, inserted_count: 1, failed_count: 0, failure: null }]);
  });

  it('partner.agreement.status_changed and partner.consent.recorded', async () => {
    const { ws, events } = await listening({ programs: [{ key: 'pr', kind: 'affiliate', name: 'P', recipientEmail: `pr-${unique()}@partner.test`, rateBps: 100, status: 'active' }] });
    const id = ws.ids.programs.pr!;
    expect((await post(ws, `/api/developer/partners/programs/${id}/status`, { status: 'paused' })).statusCode).toBe(200);
    // The same status again changes nothing.
    await post(ws, `/api/developer/partners/programs/${id}/status`, { status: 'paused' });
    expect(await events('partner.agreement.status_changed')).toEqual([{ agreement_id: id, previous_status: 'active', status: 'paused', changed_by: 'developer' }]);
    const consent = await post(ws, `/api/developer/partners/programs/${id}/live-consent`, { accept: true, terms_version: 1, policy_version: 'patchbay-managed-live-v1' });
    expect(consent.statusCode, consent.body).toBe(200);
    expect(await events('partner.consent.recorded')).toEqual([
      { agreement_id: id, party: 'developer', terms_version: 1, policy_version: 'patchbay-managed-live-v1', live_terms_consented: consent.json().live_terms_consented },
    ]);
  });

  it('payout.transfer.status_changed as a payout run moves a transfer', async () => {
    const partner = await payablePartner(ctx());
    const path = `/e-${unique()}`;
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(partner.ws.owner), payload: { url: receiver.url(path), events: ['payout.transfer.status_changed'] } });
    receiver.secrets.push(res.json().secret);
    await ctx().app.transfers.run(false);
    await ctx().app.webhooks.idle();
    // On PostgreSQL another test file's payout run or job runner may be the one that moves the transfer and delivers
    // its events (any instance's does, as in production): wait until the moves have arrived, whoever sent them.
    const expected = [
      ['null->reserved', 'reserved->submitted', 'submitted->paid'],
      ['null->reserved', 'reserved->paid'],
    ];
    const movesSoFar = () => receiver.received.filter((r) => r.path === path).map((r) => `${r.event!.data.previous_status}->${r.event!.data.status}`).sort();
    await expect.poll(() => expected.some((e) => JSON.stringify(e) === JSON.stringify(movesSoFar())), { timeout: 20_000, interval: 50 }).toBe(true);
    const got = receiver.received.filter((r) => r.path === path);
    for (const r of got) {
      expect(r.verifiedWith.length, 'signature verified').toBe(1);
      matchesPublishedSchema('payout.transfer.status_changed', r.body);
    }
    const moves = got.map((r) => r.event!.data);
    // Delivery order is not guaranteed: the moves are compared as a set. The sandbox queues its
    // confirmation with its answer, and any instance's job runner (on PostgreSQL, another test
    // file's) may settle the transfer before the run records `submitted`: then it goes straight
    // from reserved to paid, as a real provider's early webhook would move it.
    expect(expected).toContainEqual(moves.map((m) => `${m.previous_status}->${m.status}`).sort());
    for (const move of moves) expect(move).toMatchObject({ agreement_id: partner.co, currency: 'usd', amount_cents: 4500, livemode: false });
    seen.add('payout.transfer.status_changed');
  });

  it('webhook.test on request, to that endpoint', async () => {
    const { ws, events, endpointId } = await listening();
    expect((await post(ws, `/api/developer/webhooks/endpoints/${endpointId}/test`)).statusCode).toBe(202);
    expect(await events('webhook.test')).toEqual([{ endpoint_id: endpointId, message: expect.any(String) }]);
  });

  it('covered every type of the catalogue', () => {
    expect([...seen].sort()).toEqual([...SUBSCRIBABLE_EVENT_TYPES, 'webhook.test'].sort());
    expect([...published.keys()].sort()).toEqual([...seen].sort());
  });
});
