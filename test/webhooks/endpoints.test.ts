import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// The endpoint routes: the secret shown once and kept sealed, URL checks at creation, scope,
// permission and all-products access, the limit, the test event and the catalogue. The receiver
// listens on 127.0.0.1, which this app allows (ssrf.test.ts covers names that resolve to it).

const ctx = useTestApp({ webhooks: { allowedHosts: ['127.0.0.1'], retryScheduleMs: [50, 50] } });
const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const BASE = '/api/developer/webhooks/endpoints';
const create = (token: string, payload: Record<string, unknown>) => ctx().app.inject({ method: 'POST', url: BASE, headers: bearer(token), payload });

describe('webhook endpoints', () => {
  it('answers the secret once, keeps it sealed, and never shows it again', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await create(ws.owner, { url: receiver.url(), events: ['customer.created', 'serial.generated'], description: ' CRM sync ' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body).toMatchObject({ url: receiver.url(), events: ['customer.created', 'serial.generated'], enabled: true, description: 'CRM sync', disabled_reason: null });
    const row = await ctx().database.db.selectFrom('webhook_endpoints').where('id', '=', body.id).selectAll().executeTakeFirstOrThrow();
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(body.secret.slice(6, 20));
    const list = (await ctx().app.inject({ method: 'GET', url: BASE, headers: bearer(ws.owner) })).json();
    expect(list.rows).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(body.secret);
    const one = await ctx().app.inject({ method: 'GET', url: `${BASE}/${body.id}`, headers: bearer(ws.owner) });
    expect(one.json()).not.toHaveProperty('secret');
  });

  it('ignores Idempotency-Key on creation, so a replay never shows a secret twice', async () => {
    const ws = await seedWorkspace(ctx());
    const headers = { ...bearer(ws.owner), 'idempotency-key': `create-${ws.suffix}` };
    const payload = { url: receiver.url(), events: ['*'] };
    const a = await ctx().app.inject({ method: 'POST', url: BASE, headers, payload });
    const b = await ctx().app.inject({ method: 'POST', url: BASE, headers, payload });
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.json().id).not.toBe(b.json().id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps only * when * is asked beside other types, and refuses unknown types', async () => {
    const ws = await seedWorkspace(ctx());
    expect((await create(ws.owner, { url: receiver.url(), events: ['purchase.recorded', '*'] })).json().events).toEqual(['*']);
    for (const events of [['customer.made'], [], ['webhook.test'], ['customer.created', 'customer.created']]) {
      const res = await create(ws.owner, { url: receiver.url(), events });
      expect(res.statusCode, JSON.stringify(events)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });

  it.each([
    ['plain http to a host not allowed', 'http://example.com/hooks'],
    ['credentials in the URL', 'https://user:pass@example.com/hooks'],
    ['a loopback address', 'https://127.0.0.2/hooks'],
    ['IPv6 loopback', 'https://[::1]/hooks'],
    ['an IPv4-mapped private address', 'https://[::ffff:10.0.0.1]/hooks'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['a private address', 'https://10.1.2.3/hooks'],
    ['another scheme', 'ftp://example.com/hooks'],
  ])('refuses %s with 422 WEBHOOK_URL_NOT_ALLOWED', async (_label, url) => {
    const ws = await seedWorkspace(ctx());
    const res = await create(ws.owner, { url, events: ['*'] });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('WEBHOOK_URL_NOT_ALLOWED');
  });

  it('refuses a URL that is not one with 400', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await create(ws.owner, { url: 'not a url', events: ['*'] });
    expect(res.statusCode).toBe(400);
    const long = await create(ws.owner, { url: `https://example.com/${'a'.repeat(2_000)}`, events: ['*'] });
    expect(long.statusCode).toBe(400);
  });

  it('changes, disables, enables and deletes an endpoint', async () => {
    const ws = await seedWorkspace(ctx());
    const { id } = (await create(ws.owner, { url: receiver.url(), events: ['*'] })).json();
    const patch = (payload: Record<string, unknown>) => ctx().app.inject({ method: 'PATCH', url: `${BASE}/${id}`, headers: bearer(ws.owner), payload });
    expect((await patch({ events: ['customer.removed'], description: 'x' })).json()).toMatchObject({ events: ['customer.removed'], description: 'x' });
    expect((await patch({ enabled: false })).json()).toMatchObject({ enabled: false, disabled_reason: 'manual' });
    expect((await patch({ enabled: true })).json()).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    expect((await patch({ description: null })).json().description).toBeNull();
    expect((await patch({ url: 'https://10.0.0.1/x' })).statusCode).toBe(422);
    expect((await patch({})).statusCode).toBe(400);
    const removed = await ctx().app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers: bearer(ws.owner) });
    expect(removed.json()).toEqual({ id, deleted: true });
    expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/${id}`, headers: bearer(ws.owner) })).statusCode).toBe(404);
    const audit = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('subject_type', '=', 'webhook_endpoint').select('action').orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.changed', 'webhook_endpoint.changed', 'webhook_endpoint.changed', 'webhook_endpoint.changed', 'webhook_endpoint.deleted']);
  });

  it('answers 404 for another workspace’s endpoint and delivery on every route', async () => {
    const mine = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const { id } = (await create(other.owner, { url: receiver.url(), events: ['*'] })).json();
    const delivery = (await ctx().app.inject({ method: 'POST', url: `${BASE}/${id}/test`, headers: bearer(other.owner) })).json();
    const calls: Array<[string, string, object?]> = [
      ['GET', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`, { enabled: false }],
      ['POST', `${BASE}/${id}/rotate-secret`],
      ['POST', `${BASE}/${id}/test`],
      ['GET', `${BASE}/${id}/deliveries`],
      ['POST', `${BASE}/${id}/redeliver-failed`, { since: '2026-01-01T00:00:00Z' }],
      ['POST', `/api/developer/webhooks/deliveries/${delivery.id}/redeliver`],
      ['DELETE', `${BASE}/${id}`],
    ];
    for (const [method, url, payload] of calls) {
      const res = await ctx().app.inject({ method: method as 'GET', url, headers: bearer(mine.owner), ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/${id}`, headers: bearer(other.owner) })).json().enabled).toBe(true);
  });

  it('needs webhooks.manage and all-products access; the catalogue is open to every member', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [
        { key: 'bare', permissions: [], products: 'all' },
        { key: 'scoped', permissions: ['webhooks.manage'], products: ['p1'] },
        { key: 'manager', permissions: ['webhooks.manage'], products: 'all' },
      ],
    });
    const denied = await create(ws.tokens.bare!, { url: receiver.url(), events: ['*'] });
    expect([denied.statusCode, denied.json().code]).toEqual([403, 'FORBIDDEN']);
    const scoped = await create(ws.tokens.scoped!, { url: receiver.url(), events: ['*'] });
    expect([scoped.statusCode, scoped.json().code]).toEqual([403, 'ALL_PRODUCTS_SCOPE_REQUIRED']);
    expect((await create(ws.tokens.manager!, { url: receiver.url(), events: ['*'] })).statusCode).toBe(201);
    expect((await ctx().app.inject({ method: 'GET', url: BASE })).statusCode).toBe(401);
    const catalogue = await ctx().app.inject({ method: 'GET', url: '/api/developer/webhooks/event-types', headers: bearer(ws.tokens.bare!) });
    expect(catalogue.statusCode).toBe(200);
    const types = catalogue.json().event_types.map((t: { type: string }) => t.type);
    expect(types).toEqual(expect.arrayContaining(['customer.created', 'customer.removed', 'serial.generated', 'serial.assigned', 'serial.status_changed', 'activation.created', 'activation.released', 'purchase.recorded', 'purchase.refunded', 'import.finished', 'partner.agreement.status_changed', 'partner.consent.recorded', 'payout.transfer.status_changed', 'webhook.test']));
    const generated = catalogue.json().event_types.find((t: { type: string }) => t.type === 'serial.generated');
    expect(generated).toMatchObject({ version: 1, subscribable: true, schema: { type: 'object', required: expect.arrayContaining(['count', 'serial_ids']) } });
  });

  it('holds at most 20 endpoints per workspace, also when they are created in parallel', async () => {
    const ws = await seedWorkspace(ctx());
    const answers = await Promise.all(Array.from({ length: 24 }, () => create(ws.owner, { url: receiver.url(), events: ['*'] })));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(20);
    const refused = answers.filter((a) => a.statusCode !== 201);
    expect(refused.map((a) => a.json().code)).toEqual(Array(4).fill('WEBHOOK_ENDPOINT_LIMIT_REACHED'));
  });

  it('sends a signed test event that the Standard Webhooks library verifies', async () => {
    const ws = await seedWorkspace(ctx());
    const created = (await create(ws.owner, { url: receiver.url(`/test-${ws.suffix}`), events: ['customer.created'] })).json();
    receiver.secrets = [created.secret];
    const queued = await ctx().app.inject({ method: 'POST', url: `${BASE}/${created.id}/test`, headers: bearer(ws.owner) });
    expect(queued.statusCode).toBe(202);
    expect(queued.json()).toMatchObject({ endpoint_id: created.id, event_type: 'webhook.test', status: 'pending', attempts: 0 });
    await ctx().app.webhooks.idle();
    const got = receiver.received.filter((r) => r.path === `/test-${ws.suffix}`);
    expect(got).toHaveLength(1);
    expect(got[0]!.verifiedWith).toEqual([0]);
    expect(got[0]!.event).toMatchObject({ id: queued.json().event_id, type: 'webhook.test', workspace_id: ws.workspaceId, data: { endpoint_id: created.id } });
    expect(got[0]!.headers['webhook-id']).toBe(queued.json().event_id);
    expect(got[0]!.headers['patchbay-event-version']).toBe('1');
    expect(Object.keys(JSON.parse(got[0]!.body)).sort()).toEqual(['created_at', 'data', 'id', 'type', 'workspace_id']);
    const log = (await ctx().app.inject({ method: 'GET', url: `${BASE}/${created.id}/deliveries`, headers: bearer(ws.owner) })).json();
    expect(log).toMatchObject({ total: 1, page: 1, rows: [{ status: 'succeeded', attempts: 1, last_status_code: 200, response_body: 'ok', next_attempt_at: null }] });
    expect(log.rows[0].response_duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('refuses a test event or a redelivery for a disabled endpoint with 409', async () => {
    const ws = await seedWorkspace(ctx());
    const { id } = (await create(ws.owner, { url: receiver.url(), events: ['*'] })).json();
    const delivery = (await ctx().app.inject({ method: 'POST', url: `${BASE}/${id}/test`, headers: bearer(ws.owner) })).json();
    await ctx().app.inject({ method: 'PATCH', url: `${BASE}/${id}`, headers: bearer(ws.owner), payload: { enabled: false } });
    for (const [url, payload] of [
      [`${BASE}/${id}/test`, undefined],
      [`/api/developer/webhooks/deliveries/${delivery.id}/redeliver`, undefined],
      [`${BASE}/${id}/redeliver-failed`, { since: '2026-01-01T00:00:00Z' }],
    ] as const) {
      const res = await ctx().app.inject({ method: 'POST', url, headers: bearer(ws.owner), ...(payload ? { payload } : {}) });
      expect([res.statusCode, res.json().code], url).toEqual([409, 'WEBHOOK_ENDPOINT_DISABLED']);
    }
  });

  it('answers 400 to bad paging, an unknown status filter and a bad `since`', async () => {
    const ws = await seedWorkspace(ctx());
    const { id } = (await create(ws.owner, { url: receiver.url(), events: ['*'] })).json();
    for (const query of ['?limit=0', '?page=0', '?status=lost', '?limit=501', '?other=1']) {
      expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/${id}/deliveries${query}`, headers: bearer(ws.owner) })).statusCode, query).toBe(400);
    }
    const bad = await ctx().app.inject({ method: 'POST', url: `${BASE}/${id}/redeliver-failed`, headers: bearer(ws.owner), payload: { since: 'yesterday' } });
    expect(bad.statusCode).toBe(400);
    expect((await ctx().app.inject({ method: 'POST', url: '/api/developer/webhooks/deliveries/abc/redeliver', headers: bearer(ws.owner) })).statusCode).toBe(400);
  });
});
