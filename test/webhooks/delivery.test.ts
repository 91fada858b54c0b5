import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { emitWebhookEvent } from '../../src/modules/webhooks/index.js';
import { bearer, buildTestApp, seedWorkspace, type TestContext, unique } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// Delivery against a real receiver on loopback: at least once through failures (the schedule
// shortened), a hanging receiver, redirects, capped bodies, secret rotation, redelivery, the
// failure window that disables an endpoint (a moved clock), and nothing for a rolled-back change.

const BASE = '/api/developer/webhooks/endpoints';
const receiver = new Receiver();
const mail = new MemoryTransport();
let clockOffsetMs = 0;
let ctx: TestContext;

beforeAll(async () => {
  await receiver.start();
  ctx = await buildTestApp({
    mail: { transport: mail },
    webhooks: { allowedHosts: ['127.0.0.1'], retryScheduleMs: [40, 40, 40], timeoutMs: 400, clock: () => new Date(Date.now() + clockOffsetMs) },
  });
});
afterAll(async () => {
  await ctx.app.close();
  await ctx.database.close();
  await receiver.stop();
});

/** A workspace with one endpoint at its own path of the receiver; the receiver knows its secret. */
async function endpointFor(events: string[] = ['*']) {
  const ws = await seedWorkspace(ctx);
  const path = `/d-${unique()}`;
  const res = await ctx.app.inject({ method: 'POST', url: BASE, headers: bearer(ws.owner), payload: { url: receiver.url(path), events } });
  expect(res.statusCode).toBe(201);
  receiver.secrets = [res.json().secret];
  return { ws, path, endpoint: res.json() as { id: number; secret: string } };
}
const at = (path: string) => receiver.received.filter((r) => r.path === path);
const log = async (ws: { owner: string }, endpointId: number) =>
  (await ctx.app.inject({ method: 'GET', url: `${BASE}/${endpointId}/deliveries`, headers: bearer(ws.owner) })).json().rows as Array<Record<string, unknown>>;
const test = (ws: { owner: string }, endpointId: number) => ctx.app.inject({ method: 'POST', url: `${BASE}/${endpointId}/test`, headers: bearer(ws.owner) });

describe('webhook delivery', () => {
  it('delivers at least once: a receiver that fails three times gets the event a fourth time, same id', async () => {
    const { ws, path, endpoint } = await endpointFor(['customer.created']);
    receiver.behaviour = (_n, request) => (request.url === path && at(path).length <= 3 ? 503 : 200);
    const imported = await ctx.app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: bearer(ws.owner), payload: { customers: [{ email: `a-${ws.suffix}@x.test` }] } });
    expect(imported.statusCode).toBe(201);
    await receiver.until(() => at(path).length >= 4);
    await ctx.app.webhooks.idle();
    const got = at(path);
    expect(got).toHaveLength(4);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(got.every((r) => r.verifiedWith.length === 1 && r.event?.type === 'customer.created')).toBe(true);
    const [row] = await log(ws, endpoint.id);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 4, last_status_code: 200, next_attempt_at: null, event_type: 'customer.created' });
    receiver.behaviour = () => 200;
  });

  it('gives up after the schedule: a delivery that never succeeds is failed, with the last answer logged', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path ? { status: 500, body: 'x'.repeat(5_000) } : 200);
    expect((await test(ws, endpoint.id)).statusCode).toBe(202);
    await receiver.until(() => at(path).length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await ctx.app.webhooks.idle();
    const [row] = await log(ws, endpoint.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 500, next_attempt_at: null });
    expect(String(row!.response_body)).toHaveLength(2_048);
    receiver.behaviour = () => 200;
  });

  it('times out a receiver that never answers and schedules the next attempt', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path ? 'hang' : 200);
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 1);
    await ctx.app.webhooks.idle();
    const [row] = await log(ws, endpoint.id);
    expect(row).toMatchObject({ last_status_code: null, error: 'no answer within 400 ms' });
    expect(row!.attempts).toBeGreaterThanOrEqual(1);
    expect(Number(row!.response_duration_ms)).toBeGreaterThanOrEqual(390);
    receiver.behaviour = () => 200;
  });

  it('does not follow a redirect: a 3xx is a failed attempt and the Location is never asked', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path ? { status: 302, body: '' } : 200);
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 1);
    await ctx.app.webhooks.idle();
    const [row] = await log(ws, endpoint.id);
    expect(row).toMatchObject({ last_status_code: 302 });
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).toHaveLength(0);
    receiver.behaviour = () => 200;
  });

  it('signs with both secrets during a rotation’s overlap, and with the new one alone after it', async () => {
    const { ws, path, endpoint } = await endpointFor();
    const rotated = await ctx.app.inject({ method: 'POST', url: `${BASE}/${endpoint.id}/rotate-secret`, headers: { ...bearer(ws.owner), 'idempotency-key': `rot-${ws.suffix}` } });
    expect(rotated.statusCode).toBe(200);
    const { secret, previous_secret_expires_at: until } = rotated.json();
    expect(secret).not.toBe(endpoint.secret);
    expect(Date.parse(until) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    receiver.secrets = [endpoint.secret, secret];
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 1);
    const during = at(path)[0]!;
    expect(during.verifiedWith).toEqual([0, 1]);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // The overlap ends: only the new secret signs.
    await ctx.database.db.updateTable('webhook_endpoints').set({ previous_secret_expires_at: new Date(Date.now() - 1000) }).where('id', '=', endpoint.id).execute();
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 2);
    expect(at(path)[1]!.verifiedWith).toEqual([1]);
    expect((await ctx.app.inject({ method: 'GET', url: `${BASE}/${endpoint.id}`, headers: bearer(ws.owner) })).json().previous_secret_expires_at).toBeNull();
  });

  it('redelivers one delivery, and every failed one since a time, with the same event ids', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path ? 500 : 200);
    const first = (await test(ws, endpoint.id)).json();
    await test(ws, endpoint.id);
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 12);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await ctx.app.webhooks.idle();
    expect((await log(ws, endpoint.id)).every((r) => r.status === 'failed')).toBe(true);
    receiver.behaviour = () => 200;

    const one = await ctx.app.inject({ method: 'POST', url: `/api/developer/webhooks/deliveries/${first.id}/redeliver`, headers: bearer(ws.owner) });
    expect(one.statusCode).toBe(202);
    expect(one.json()).toMatchObject({ id: first.id, status: 'pending' });
    await ctx.app.webhooks.idle();
    expect(at(path).at(-1)!.headers['webhook-id']).toBe(first.event_id);
    expect((await log(ws, endpoint.id)).find((r) => r.id === first.id)).toMatchObject({ status: 'succeeded', attempts: 5 });

    // `since` is the events' time: one after them takes none.
    const none = await ctx.app.inject({ method: 'POST', url: `${BASE}/${endpoint.id}/redeliver-failed`, headers: bearer(ws.owner), payload: { since: new Date(Date.now() + 60_000).toISOString() } });
    expect([none.statusCode, none.json()]).toEqual([202, { queued: 0, more: false }]);
    const all = await ctx.app.inject({ method: 'POST', url: `${BASE}/${endpoint.id}/redeliver-failed`, headers: bearer(ws.owner), payload: { since: new Date(Date.now() - 60_000).toISOString() } });
    expect([all.statusCode, all.json()]).toEqual([202, { queued: 2, more: false }]);
    await ctx.app.webhooks.idle();
    expect((await log(ws, endpoint.id)).map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const later = await ctx.app.inject({ method: 'POST', url: `${BASE}/${endpoint.id}/redeliver-failed`, headers: bearer(ws.owner), payload: { since: new Date(Date.now() - 60_000).toISOString() } });
    expect(later.json()).toEqual({ queued: 0, more: false });
  });

  it('disables an endpoint that failed every attempt for 5 days and e-mails the workspace owner', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path ? 500 : 200);
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await ctx.app.webhooks.idle();
    const failing = (await ctx.app.inject({ method: 'GET', url: `${BASE}/${endpoint.id}`, headers: bearer(ws.owner) })).json();
    expect(failing).toMatchObject({ enabled: true, disabled_reason: null });
    expect(failing.failing_since).not.toBeNull();

    clockOffsetMs = 5 * 86_400_000 + 60_000;
    try {
      await test(ws, endpoint.id);
      await receiver.until(() => at(path).length >= 5);
      await ctx.app.webhooks.idle();
      await ctx.app.jobs.idle();
    } finally {
      clockOffsetMs = 0;
    }
    const disabled = (await ctx.app.inject({ method: 'GET', url: `${BASE}/${endpoint.id}`, headers: bearer(ws.owner) })).json();
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    // The retry queued before it was disabled finds a disabled endpoint: nothing more is sent.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await ctx.app.webhooks.idle();
    expect(at(path)).toHaveLength(5);
    const sent = mail.sent.filter((m) => m.to === `owner-${ws.suffix}@dev.test`);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.subject).toContain('was disabled');
    expect(sent[0]!.text).toContain(`/api/developer/webhooks/endpoints/${endpoint.id}`);
    expect(sent[0]!.text).not.toContain(endpoint.secret);
    receiver.behaviour = () => 200;

    // Enabled again, it forgets its failures.
    const enabled = (await ctx.app.inject({ method: 'PATCH', url: `${BASE}/${endpoint.id}`, headers: bearer(ws.owner), payload: { enabled: true } })).json();
    expect(enabled).toMatchObject({ enabled: true, failing_since: null });
  });

  it('sends nothing for a change that rolls back, and the event of one that commits', async () => {
    const { ws, path } = await endpointFor(['customer.removed']);
    const event = (email: string) => ({ customer_id: 1, email, reason: null });
    await expect(
      inTransaction(ctx.database.db, async (tx) => {
        await emitWebhookEvent(tx, ws.workspaceId, 'customer.removed', event('rolled-back@x.test'));
        throw new Error('the change fails');
      }),
    ).rejects.toThrow('the change fails');
    await inTransaction(ctx.database.db, (tx) => emitWebhookEvent(tx, ws.workspaceId, 'customer.removed', event('committed@x.test')));
    await ctx.app.webhooks.idle();
    expect(at(path).map((r) => r.event?.data.email)).toEqual(['committed@x.test']);
    // A payload that does not match its schema is a programming error: the change rolls back.
    await expect(inTransaction(ctx.database.db, (tx) => emitWebhookEvent(tx, ws.workspaceId, 'customer.removed', { customer_id: 0 } as never))).rejects.toThrow(/does not match its schema/);
  });

  it('writes no event at all for a workspace without an endpoint that wants it', async () => {
    const { ws } = await endpointFor(['serial.generated']);
    const bare = await seedWorkspace(ctx);
    for (const workspaceId of [ws.workspaceId, bare.workspaceId]) {
      await inTransaction(ctx.database.db, (tx) => emitWebhookEvent(tx, workspaceId, 'customer.removed', { customer_id: 1, email: 'n@x.test', reason: null }));
    }
    const rows = await ctx.database.db.selectFrom('webhook_events').where('workspace_id', 'in', [ws.workspaceId, bare.workspaceId]).select('id').execute();
    expect(rows).toHaveLength(0);
  });

  it('counts each endpoint’s successes and failures in /metrics', async () => {
    const { ws, path, endpoint } = await endpointFor();
    receiver.behaviour = (_n, request) => (request.url === path && at(path).length === 1 ? 500 : 200);
    await test(ws, endpoint.id);
    await receiver.until(() => at(path).length >= 2);
    await ctx.app.webhooks.idle();
    const metrics = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain(`patchbay_webhook_attempts_total{workspace_id="${ws.workspaceId}",endpoint_id="${endpoint.id}",outcome="failed"} 1`);
    expect(metrics).toContain(`patchbay_webhook_attempts_total{workspace_id="${ws.workspaceId}",endpoint_id="${endpoint.id}",outcome="succeeded"} 1`);
    expect(metrics).toMatch(/patchbay_jobs_total\{kind="webhooks.deliver",outcome="succeeded"\} \d+/);
    // The success after the failure ended the endpoint's failure streak.
    expect((await ctx.app.inject({ method: 'GET', url: `${BASE}/${endpoint.id}`, headers: bearer(ws.owner) })).json().failing_since).toBeNull();
    receiver.behaviour = () => 200;
  });
});
