import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { connect, deliver, events, lemonOrder, SECRETS } from './helpers.js';

// The developer routes of checkout connections: who may use them (purchases.manage over all
// products), what another workspace sees (404), what bad input answers, and that a secret never
// comes back out.

const ctx = useTestApp();
const BASE = '/api/developer/checkout-connections';

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

const team = () =>
  seedWorkspace(ctx(), {
    members: [
      { key: 'manager', permissions: ['purchases.manage'], products: 'all' },
      { key: 'viewer', permissions: ['purchases.view'], products: 'all' },
      { key: 'scoped', permissions: ['purchases.manage'], products: ['p1'] },
    ],
  });

describe('checkout connection routes', () => {
  it('create, read, list, change and remove a connection; the secret and the API key never come back', async () => {
    const ws = await team();
    const created = await ctx().app.inject({
      method: 'POST',
      url: BASE,
      headers: bearer(ws.tokens.manager!),
      payload: { provider: 'stripe', signingSecret: SECRETS.stripe, apiKey: 'rk_test_secret_key_value', productMapping: [{ providerProductId: 'prod_A', productId: ws.ids.products.p1 }] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ provider: 'stripe', enabled: true, webhookUrl: `http://patchbay.test/api/checkout/stripe/${body.id}/events`, productMapping: [{ providerProductId: 'prod_A', productId: ws.ids.products.p1 }], apiKeySet: true });
    expect(created.body).not.toContain(SECRETS.stripe);
    expect(created.body).not.toContain('rk_test_secret_key_value');
    // Sealed at rest: the stored values are not the secrets.
    const row = await ctx().database.db.selectFrom('checkout_connections').select(['signing_secret_sealed', 'api_key_sealed']).where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row.signing_secret_sealed).not.toContain(SECRETS.stripe);
    expect(row.api_key_sealed).not.toContain('rk_test_secret_key_value');

    const list = await ctx().app.inject({ method: 'GET', url: BASE, headers: bearer(ws.tokens.manager!) });
    expect(list.json().rows.map((r: { id: number }) => r.id)).toEqual([body.id]);
    const changed = await ctx().app.inject({
      method: 'PATCH',
      url: `${BASE}/${body.id}`,
      headers: bearer(ws.tokens.manager!),
      payload: { enabled: false, apiKey: null, signingSecret: 'whsec_rolled_secret_value', productMapping: [{ providerProductId: 'prod_B', productId: ws.ids.products.p2 }] },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ enabled: false, apiKeySet: false, productMapping: [{ providerProductId: 'prod_B', productId: ws.ids.products.p2 }] });
    expect(changed.body).not.toContain('whsec_rolled_secret_value');
    const audit = await ctx().database.db.selectFrom('audit_log').select(['action', 'data']).where('workspace_id', '=', ws.workspaceId).where('action', 'like', 'checkout_connections.%').orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['checkout_connections.created', 'checkout_connections.changed']);
    expect(JSON.stringify(audit)).not.toMatch(/whsec_|rk_test/);

    expect((await ctx().app.inject({ method: 'DELETE', url: `${BASE}/${body.id}`, headers: bearer(ws.tokens.manager!) })).statusCode).toBe(204);
    expectProblem(await ctx().app.inject({ method: 'GET', url: `${BASE}/${body.id}`, headers: bearer(ws.tokens.manager!) }), 404, 'NOT_FOUND');
    // Its webhook URL stops answering.
    expect((await deliver(ctx(), 'stripe', body.id, { id: 'evt_x', type: 'charge.refunded' })).statusCode).toBe(404);
  });

  it('answer 401 without a credential, 403 without purchases.manage or without all products', async () => {
    const ws = await team();
    const { id } = await connect(ctx(), ws, 'paddle');
    const routes: Array<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object }> = [
      { method: 'GET', url: BASE },
      { method: 'POST', url: BASE, payload: { provider: 'paddle', signingSecret: SECRETS.paddle } },
      { method: 'GET', url: `${BASE}/${id}` },
      { method: 'PATCH', url: `${BASE}/${id}`, payload: { enabled: false } },
      { method: 'DELETE', url: `${BASE}/${id}` },
      { method: 'GET', url: `${BASE}/${id}/events` },
      { method: 'POST', url: `${BASE}/${id}/events/1/reprocess` },
    ];
    for (const route of routes) {
      expectProblem(await ctx().app.inject(route), 401, 'UNAUTHENTICATED');
      expectProblem(await ctx().app.inject({ ...route, headers: bearer(ws.tokens.viewer!) }), 403, 'FORBIDDEN');
      expectProblem(await ctx().app.inject({ ...route, headers: bearer(ws.tokens.scoped!) }), 403, 'ALL_PRODUCTS_SCOPE_REQUIRED');
    }
    expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/${id}`, headers: bearer(ws.owner) })).json().enabled).toBe(true);
  });

  it('answer 404 for another workspace’s connection and its events, and change nothing of it', async () => {
    const ws = await team();
    const other = await team();
    const theirs = await connect(ctx(), other, 'lemonsqueezy', { mapping: { '77': 'p1' } });
    // A failed event of theirs, to try re-processing it from here.
    const failed = await deliver(ctx(), 'lemonsqueezy', theirs.id, lemonOrder(String(Math.floor(Math.random() * 1e9) + 1), 88));
    expect(failed.json().outcome).toBe('failed');
    const [event] = await events(ctx(), other, theirs.id);
    const mine = await connect(ctx(), ws, 'lemonsqueezy');
    const attempts: Array<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object }> = [
      { method: 'GET', url: `${BASE}/${theirs.id}` },
      { method: 'PATCH', url: `${BASE}/${theirs.id}`, payload: { enabled: false } },
      { method: 'DELETE', url: `${BASE}/${theirs.id}` },
      { method: 'GET', url: `${BASE}/${theirs.id}/events` },
      { method: 'POST', url: `${BASE}/${theirs.id}/events/${event!.id}/reprocess` },
      // Their event under my connection is not mine either.
      { method: 'POST', url: `${BASE}/${mine.id}/events/${event!.id}/reprocess` },
    ];
    for (const attempt of attempts) expectProblem(await ctx().app.inject({ ...attempt, headers: bearer(ws.owner) }), 404, 'NOT_FOUND');
    expect((await ctx().app.inject({ method: 'GET', url: BASE, headers: bearer(ws.owner) })).json().rows.map((r: { id: number }) => r.id)).toEqual([mine.id]);
    const still = await ctx().app.inject({ method: 'GET', url: `${BASE}/${theirs.id}`, headers: bearer(other.owner) });
    expect(still.json()).toMatchObject({ id: theirs.id, enabled: true });
    expect((await events(ctx(), other, theirs.id))[0]).toMatchObject({ outcome: 'failed' });
    // Mapping another workspace's product is 404 too, and nothing is created.
    expectProblem(
      await ctx().app.inject({ method: 'POST', url: BASE, headers: bearer(ws.owner), payload: { provider: 'paddle', signingSecret: SECRETS.paddle, productMapping: [{ providerProductId: 'pro_X', productId: other.ids.products.p1 }] } }),
      404,
      'NOT_FOUND',
    );
    expectProblem(
      await ctx().app.inject({ method: 'PATCH', url: `${BASE}/${mine.id}`, headers: bearer(ws.owner), payload: { productMapping: [{ providerProductId: '1', productId: other.ids.products.p2 }] } }),
      404,
      'NOT_FOUND',
    );
    expect((await ctx().app.inject({ method: 'GET', url: BASE, headers: bearer(ws.owner) })).json().rows).toHaveLength(1);
  });

  it('refuse bad input with 400 VALIDATION_FAILED', async () => {
    const ws = await team();
    const { id } = await connect(ctx(), ws, 'paddle');
    const p1 = ws.ids.products.p1!;
    const bad: object[] = [
      {},
      { provider: 'shopify', signingSecret: 'secret-value' },
      { provider: 'stripe' },
      { provider: 'stripe', signingSecret: '' },
      { provider: 'stripe', signingSecret: 'x'.repeat(201) },
      { provider: 'stripe', signingSecret: SECRETS.stripe, productMapping: [{ providerProductId: '', productId: p1 }] },
      { provider: 'stripe', signingSecret: SECRETS.stripe, productMapping: [{ providerProductId: 'prod_A', productId: 0 }] },
      { provider: 'stripe', signingSecret: SECRETS.stripe, productMapping: [{ providerProductId: 'prod_A', productId: p1 }, { providerProductId: 'prod_A', productId: p1 }] },
      { provider: 'stripe', signingSecret: SECRETS.stripe, productMapping: Array.from({ length: 501 }, (_, i) => ({ providerProductId: `prod_${i}`, productId: p1 })) },
      { provider: 'stripe', signingSecret: SECRETS.stripe, apiKey: 'pk_live_publishable' },
      // Only a Stripe connection holds an API key.
      { provider: 'paddle', signingSecret: SECRETS.paddle, apiKey: 'rk_test_0123456789' },
      { provider: 'stripe', signingSecret: SECRETS.stripe, workspace_id: 1 },
    ];
    for (const payload of bad) expectProblem(await ctx().app.inject({ method: 'POST', url: BASE, headers: bearer(ws.owner), payload }), 400, 'VALIDATION_FAILED');
    for (const payload of [{}, { enabled: 'yes' }, { provider: 'stripe' }, { apiKey: 'rk_test_0123456789' }, { signingSecret: '' }]) {
      expectProblem(await ctx().app.inject({ method: 'PATCH', url: `${BASE}/${id}`, headers: bearer(ws.owner), payload }), 400, 'VALIDATION_FAILED');
    }
    for (const url of [`${BASE}/abc`, `${BASE}/0`, `${BASE}/${id}/events?outcome=lost`, `${BASE}/${id}/events?limit=0`, `${BASE}/${id}/events/x/reprocess`]) {
      const method = url.endsWith('reprocess') ? 'POST' : 'GET';
      expectProblem(await ctx().app.inject({ method, url, headers: bearer(ws.owner) }), 400, 'VALIDATION_FAILED');
    }
    expect((await ctx().app.inject({ method: 'GET', url: BASE, headers: bearer(ws.owner) })).json().rows).toHaveLength(1);
    // An unknown provider in the webhook path is 400, an unknown event 404 for re-processing.
    expect((await ctx().app.inject({ method: 'POST', url: `/api/checkout/shopify/${id}/events`, payload: {} })).statusCode).toBe(400);
    expectProblem(await ctx().app.inject({ method: 'POST', url: `${BASE}/${id}/events/2000000000/reprocess`, headers: bearer(ws.owner) }), 404, 'NOT_FOUND');
  });

  it('pages the event log newest first and filters it by outcome', async () => {
    const ws = await team();
    const connection = await connect(ctx(), ws, 'lemonsqueezy', { mapping: { '501': 'p1' } });
    const ids = [String(Math.floor(Math.random() * 1e8) + 1), String(Math.floor(Math.random() * 1e8) + 1e8 + 1)];
    expect((await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(ids[0]!, 501, { email: `a-${unique()}@example.com` }))).json().outcome).toBe('recorded');
    expect((await deliver(ctx(), 'lemonsqueezy', connection.id, lemonOrder(ids[1]!, 999))).json().outcome).toBe('failed');
    expect((await deliver(ctx(), 'lemonsqueezy', connection.id, { ...lemonOrder(ids[1]!, 999), meta: { event_name: 'subscription_created', custom_data: null } })).json().outcome).toBe('ignored');
    const page = await ctx().app.inject({ method: 'GET', url: `${BASE}/${connection.id}/events?limit=2`, headers: bearer(ws.owner) });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json()).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(page.json().rows.map((r: { outcome: string }) => r.outcome)).toEqual(['ignored', 'failed']);
    const failed = await ctx().app.inject({ method: 'GET', url: `${BASE}/${connection.id}/events?outcome=failed`, headers: bearer(ws.owner) });
    expect(failed.json().rows).toEqual([expect.objectContaining({ provider_event_id: `order_created:${ids[1]}`, type: 'order_created', outcome: 'failed', reason: expect.stringContaining('999'), received_at: expect.any(String) })]);
  });
});
