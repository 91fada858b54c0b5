import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitWebhookEvent } from '../../src/modules/webhooks/index.js';
import { claimPendingEvents } from '../../src/modules/webhooks/webhooks.repo.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { jobQueueName, setJobQueueName } from '../../src/platform/jobs/queue.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, type TestContext, unique } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// The outbox: emitting adds one statement to the transaction of the change, whether or not an
// endpoint listens; instances sharing a database and a job queue fan each event out once, and an
// instance of another queue (JOBS_QUEUE) leaves the events alone, as it leaves the queue's jobs.

describe('the webhook outbox in the causing transaction', () => {
  const queries: string[] = [];
  let ctx: TestContext;
  beforeAll(async () => {
    // Nothing runs in the background: every statement logged during a request is the request's.
    ctx = await buildTestApp({ jobs: { run: false }, onQuery: (sql) => queries.push(sql) });
  });
  afterAll(async () => {
    await ctx.app.close();
    await ctx.database.close();
  });

  async function statementsOf(run: () => Promise<unknown>) {
    queries.length = 0;
    await run();
    return { total: queries.length, outbox: queries.filter((q) => /insert into webhook_events/i.test(q)).length };
  }

  it('adds exactly one statement, the same with and without a listening endpoint', async () => {
    const listening = await seedWorkspace(ctx, { customers: [{ key: 'c' }] });
    const silent = await seedWorkspace(ctx, { customers: [{ key: 'c' }] });
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/developer/webhooks/endpoints',
      headers: bearer(listening.owner),
      payload: { url: 'https://hooks.invalid/x', events: ['customer.removed', 'serial.generated'] },
    });
    expect(created.statusCode).toBe(201);
    const remove = (ws: typeof listening) => () =>
      ctx.app.inject({ method: 'DELETE', url: `/api/developer/customers/${ws.ids.customers.c}`, headers: bearer(ws.owner), payload: { confirm: true } });
    const withEndpoint = await statementsOf(remove(listening));
    const without = await statementsOf(remove(silent));
    expect(withEndpoint.outbox).toBe(1);
    expect(without.outbox).toBe(1);
    expect(withEndpoint.total).toBe(without.total);
    // A generation of 500 serials is one event, one statement.
    const generate = await statementsOf(() => ctx.app.inject({ method: 'POST', url: '/api/developer/serials/generate', headers: bearer(listening.owner), payload: { productId: listening.ids.products.p1, quantity: 500 } }));
    expect(generate.outbox).toBe(1);
    const rows = await ctx.database.db.selectFrom('webhook_events').where('workspace_id', 'in', [listening.workspaceId, silent.workspaceId]).select(['workspace_id', 'type']).execute();
    expect(rows.map((r) => [r.workspace_id, r.type])).toEqual([
      [listening.workspaceId, 'customer.removed'],
      [listening.workspaceId, 'serial.generated'],
    ]);
  });

  it('is fanned out only by a relay of the job queue that wrote it', async () => {
    const ws = await seedWorkspace(ctx);
    const created = await ctx.app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url: 'https://hooks.invalid/q', events: ['customer.removed'] } });
    expect(created.statusCode).toBe(201);
    await inTransaction(ctx.database.db, (tx) => emitWebhookEvent(tx, ws.workspaceId, 'customer.removed', { customer_id: 1, email: 'q@x.test', reason: null }));
    const event = await ctx.database.db.selectFrom('webhook_events').where('workspace_id', '=', ws.workspaceId).select(['id', 'queue']).executeTakeFirstOrThrow();
    expect(event.queue).toBe(jobQueueName());
    const mine = jobQueueName();
    setJobQueueName(`elsewhere-${unique()}`);
    try {
      expect(await inTransaction(ctx.database.db, (tx) => claimPendingEvents(tx, 10_000))).not.toContain(event.id);
    } finally {
      setJobQueueName(mine);
    }
    expect(await inTransaction(ctx.database.db, (tx) => claimPendingEvents(tx, 10_000))).toContain(event.id);
  });
});

describe.skipIf(!onPostgres)('two instances on one PostgreSQL database', () => {
  const receiver = new Receiver();
  let a: TestContext;
  let b: TestContext;
  beforeAll(async () => {
    await receiver.start();
    a = await buildTestApp({ webhooks: { allowedHosts: ['127.0.0.1'] } });
    b = await buildTestApp({ webhooks: { allowedHosts: ['127.0.0.1'] } });
  });
  afterAll(async () => {
    for (const c of [a, b]) {
      await c.app.close();
      await c.database.close();
    }
    await receiver.stop();
  });

  it('fans each event out once and delivers each once, whichever instance takes it', async () => {
    const ws = await seedWorkspace(a);
    const path = `/pair-${unique()}`;
    const res = await a.app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url: receiver.url(path), events: ['customer.created'] } });
    receiver.secrets = [res.json().secret];
    // Both instances take requests that emit; both relays and runners compete for the work.
    const batches = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? a : b).app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: bearer(ws.owner), payload: { customers: Array.from({ length: 25 }, (_, j) => ({ email: `p${i}-${j}-${ws.suffix}@x.test` })) } }),
      ),
    );
    expect(batches.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    await receiver.until((r) => r.filter((x) => x.path === path).length >= 200, 60_000);
    await Promise.all([a.app.webhooks.idle(), b.app.webhooks.idle()]);
    const ids = receiver.received.filter((r) => r.path === path && r.verifiedWith.length === 1).map((r) => r.event!.id);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    const deliveries = await a.database.db.selectFrom('webhook_deliveries').where('workspace_id', '=', ws.workspaceId).select(['status', 'attempts']).execute();
    expect(deliveries).toHaveLength(200);
    expect(deliveries.every((d) => d.status === 'succeeded' && d.attempts === 1)).toBe(true);
  });
});
