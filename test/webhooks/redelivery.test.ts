import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listJobs, makeJobsDue } from '../../src/platform/jobs/jobs.testing.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log-capture.js';
import { Receiver } from './receiver.js';

// A redelivery takes the place of a retry that waits (so a "stuck" delivery can always be sent
// again, and never goes out twice), and no secret reaches the log. The first retry waits an hour
// here: it only runs when the test makes it due.

const log = captureLog();
const ctx = useTestApp({ loggerInstance: log.logger, webhooks: { allowedHosts: ['127.0.0.1'], retryScheduleMs: [3_600_000] } });
const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const BASE = '/api/developer/webhooks/endpoints';

describe('redelivery and the log', () => {
  it('a redelivery while a retry waits sends now, and the waiting attempt, made due, sends nothing', async () => {
    const ws = await seedWorkspace(ctx());
    const path = `/r-${unique()}`;
    const created = (await ctx().app.inject({ method: 'POST', url: BASE, headers: bearer(ws.owner), payload: { url: receiver.url(path), events: ['*'] } })).json();
    receiver.secrets = [created.secret];
    const at = () => receiver.received.filter((r) => r.path === path);
    receiver.behaviour = (_n, request) => (request.url === path && at().length === 1 ? 503 : 200);
    const queued = (await ctx().app.inject({ method: 'POST', url: `${BASE}/${created.id}/test`, headers: bearer(ws.owner) })).json();
    await ctx().app.webhooks.idle();
    const deliveries = async () => (await ctx().app.inject({ method: 'GET', url: `${BASE}/${created.id}/deliveries`, headers: bearer(ws.owner) })).json().rows;
    const [waiting] = await deliveries();
    expect(waiting).toMatchObject({ id: queued.id, status: 'retrying', attempts: 1, last_status_code: 503 });
    expect(Date.parse(waiting.next_attempt_at) - Date.now()).toBeGreaterThan(50 * 60_000);

    const again = await ctx().app.inject({ method: 'POST', url: `/api/developer/webhooks/deliveries/${queued.id}/redeliver`, headers: bearer(ws.owner) });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toMatchObject({ status: 'pending', next_attempt_at: expect.any(String) });
    await ctx().app.webhooks.idle();
    expect(at()).toHaveLength(2);
    expect(at()[1]!.verifiedWith).toEqual([0]);
    expect((await deliveries())[0]).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 200, next_attempt_at: null });

    // The retry queued before the redelivery is stale: made due, it runs and sends nothing.
    await makeJobsDue(ctx().database.db);
    await ctx().app.webhooks.idle();
    const attempts = (await listJobs(ctx().database.db, { job: 'webhooks.deliver', workspaceId: ws.workspaceId })).filter((j) => (j.payload as { deliveryId: number }).deliveryId === queued.id);
    expect(attempts.map((j) => j.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(attempts.filter((j) => (j.result as { stale?: boolean } | null)?.stale === true)).toHaveLength(1);
    expect(at()).toHaveLength(2);
    expect((await deliveries())[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    receiver.behaviour = () => 200;
  });

  it('never logs a secret: not at creation, rotation, or delivery', async () => {
    const ws = await seedWorkspace(ctx());
    const path = `/l-${unique()}`;
    const created = (await ctx().app.inject({ method: 'POST', url: BASE, headers: bearer(ws.owner), payload: { url: receiver.url(path), events: ['*'] } })).json();
    const rotated = (await ctx().app.inject({ method: 'POST', url: `${BASE}/${created.id}/rotate-secret`, headers: bearer(ws.owner) })).json();
    receiver.secrets = [rotated.secret];
    await ctx().app.inject({ method: 'POST', url: `${BASE}/${created.id}/test`, headers: bearer(ws.owner) });
    await ctx().app.webhooks.idle();
    expect(receiver.received.filter((r) => r.path === path && r.verifiedWith.length === 1)).toHaveLength(1);
    const text = log.text();
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [created.secret, rotated.secret]) {
      expect(text).not.toContain(secret);
      // Nor the key material without its prefix.
      expect(text).not.toContain(secret.slice('whsec_'.length, 'whsec_'.length + 24));
    }
  });
});
