import net, { type AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { DEFAULT_HTTP_LIMITS } from '../../src/platform/http/limits.js';
import { buildTestApp, type TestContext, useTestApp } from '../helpers/app.js';
import { balances, now, programs, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// The signed webhook is not held to the per-address cap of anonymous public routes (32 requests in
// progress, meant for plugins); it has its own bound per instance, documented with every status.

const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] } });

describe('POST /api/checkout/events under load', () => {
  it('books 60 events posted at once from one address over real connections', async () => {
    expect(60).toBeGreaterThan(DEFAULT_HTTP_LIMITS.publicInflightPerIp);
    const ws = await programs(ctx());
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx().app.server.address() as AddressInfo;
    const events = Array.from({ length: 60 }, (_, i) => sale(ws, [{ product: i % 2 ? 'p1' : 'p2', subtotal: 1000 }]));
    const answers = await Promise.all(
      events.map(async (event) => {
        const body = JSON.stringify(event);
        const res = await fetch(`http://127.0.0.1:${port}/api/checkout/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, body, now()) },
          body,
        });
        return { status: res.status, body: (await res.json()) as { outcome?: string } };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 200));
    expect(answers.every((a) => a.body.outcome === 'recorded')).toBe(true);
    expect((await balances(ctx(), ws.workspaceId)).checkout_clearing).toBe(-60_000n);
    expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
  });

});

describe('with a small bound and a short body timeout', () => {
  let c: TestContext;
  beforeAll(async () => {
    c = await buildTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET], bound: { concurrency: 1, waiting: 1 } }, httpLimits: { bodyTimeoutMs: 500 } });
  });
  afterAll(async () => {
    await c.app.close();
    await c.database.close();
  });

  it('answers 429 RATE_LIMITED with Retry-After only once its own bound is full, and books every event it admitted', async () => {
    const ws = await programs(c);
    const events = Array.from({ length: 5 }, () => sale(ws, [{ product: 'p2', subtotal: 100 }]));
    // Bookings cannot finish while the test holds the event table: one is booking, one waits, the rest overflow.
    let locked!: () => void;
    let release!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = inTransaction(c.database.db, async (tx) => {
      await sql`lock table checkout_events in exclusive mode`.execute(tx);
      locked();
      await released;
    });
    await isLocked;
    const settled: Array<{ statusCode: number; headers: Record<string, unknown>; json: () => { code?: string; outcome?: string } }> = [];
    const answers = events.map((event) => signedEvent(c, event).then((res) => (settled.push(res), res)));
    await vi.waitFor(() => expect(settled).toHaveLength(3), { timeout: 30_000, interval: 20 });
    for (const res of settled) {
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe('RATE_LIMITED');
      expect(res.headers['retry-after']).toBe('1');
    }
    release();
    await holding;
    const all = await Promise.all(answers);
    expect(all.filter((r) => r.statusCode === 200).map((r) => r.json().outcome)).toEqual(['recorded', 'recorded']);
    expect((await balances(c, ws.workspaceId)).checkout_clearing).toBe(-200n);
  });

  it('closes a request whose body does not arrive in time with 408 REQUEST_TIMEOUT', async () => {
    await c.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = c.app.server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve) => {
      let data = '';
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write('POST /api/checkout/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":'),
      );
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
  });
});

describe('POST /api/checkout/events: other statuses', () => {
  it('refuses a body over 256 KiB with 413 and another content type with 415', async () => {
    const big = JSON.stringify({ id: 'evt_big', type: 'x', created: now(), data: { pad: 'x'.repeat(256 * 1024) } });
    const tooLarge = await ctx().app.inject({
      method: 'POST',
      url: '/api/checkout/events',
      headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, big, now()) },
      payload: big,
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().code).toBe('PAYLOAD_TOO_LARGE');
    const xml = await ctx().app.inject({ method: 'POST', url: '/api/checkout/events', headers: { 'content-type': 'application/xml' }, payload: '<event/>' });
    expect(xml.statusCode).toBe(415);
    expect(xml.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('documents every status it can answer in the OpenAPI document', async () => {
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/api/checkout/events'].post;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '404', '408', '409', '413', '415', '422', '429', '500', '503']);
    expect(op.description).toMatch(/not counted in the per-address cap/i);
  });
});
