import { afterAll, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, type TestContext } from '../helpers/app.js';

// Two app instances on one PostgreSQL database share one job queue: every job runs once.

describe.runIf(onPostgres)('two instances on one database (PostgreSQL)', () => {
  const apps: Array<TestContext & { transport: MemoryTransport }> = [];
  afterAll(async () => {
    for (const ctx of apps) {
      await ctx.app.close();
      await ctx.database.close();
    }
  });

  it('sends each queued e-mail exactly once, whichever instance queued it', async () => {
    for (let i = 0; i < 2; i += 1) {
      const transport = new MemoryTransport();
      apps.push({ ...(await buildTestApp({ mail: { transport }, jobs: { pollIntervalMs: 50, concurrency: 4 } })), transport });
    }
    const [a, b] = apps as [TestContext & { transport: MemoryTransport }, TestContext & { transport: MemoryTransport }];
    const ws = await seedWorkspace(a);
    const grants = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a : b).app.inject({
          method: 'POST',
          url: '/api/developer/purchases/manual-grant',
          headers: bearer(ws.owner),
          payload: { productIds: [ws.ids.products.p1, ws.ids.products.p2], email: `multi-${i}-${ws.suffix}@x.test`, reason: 'x', sendProductPurchaseEmails: true },
        }),
      ),
    );
    for (const g of grants) expect(g.statusCode).toBe(201);
    for (let round = 0; round < 3; round += 1) await Promise.all([a.app.jobs.idle(), b.app.jobs.idle()]);
    const sent = [...a.transport.sent, ...b.transport.sent];
    expect(sent).toHaveLength(24);
    expect(new Set(sent.map((m) => m.id)).size).toBe(24);
    // Which instance sends what is up to the scheduler: on a loaded machine one instance can claim all 24 before the
    // other polls (a clean-clone CI run saw exactly that), so only exactly-once is asserted.
  });
});
