import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { bearer, onPostgres, seedWorkspace, unique, useTestApp } from '../helpers/app.js';

// The embedded database runs in a worker thread: a long statement there must not stop the server
// from answering. (On the event loop, /healthz went unanswered for the whole of a large import.)
// The benchmark (`npm run bench -- embedded`) measures the goal; this test guards the property.

const ctx = useTestApp();

describe.skipIf(onPostgres)('the embedded database off the event loop', () => {
  it('keeps answering /healthz while a large import holds the database', { timeout: 180_000 }, async () => {
    const ws = await seedWorkspace(ctx());
    const tag = unique();
    const customers = Array.from({ length: 20_000 }, (_, i) => ({ email: `resp-${i}-${tag}@x.test`, firstName: `N${i}` }));
    const started = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: { ...bearer(ws.owner), prefer: 'respond-async' },
      payload: { customers },
    });
    expect(started.statusCode, started.body).toBe(202);

    let finished = false;
    const done = ctx().app.jobs.idle().then(() => {
      finished = true;
    });
    const latencies: number[] = [];
    while (!finished) {
      const t0 = performance.now();
      const res = await ctx().app.inject({ method: 'GET', url: '/healthz' });
      latencies.push(performance.now() - t0);
      expect(res.statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await done;

    const outcome = await ctx().app.inject({ method: 'GET', url: started.headers.location as string, headers: bearer(ws.owner) });
    expect(outcome.json()).toMatchObject({ state: 'succeeded', importedCount: 20_000 });
    // Many answers while the import ran, none of them held up for long (a generous bound for a busy CI machine).
    expect(latencies.length).toBeGreaterThan(10);
    expect(Math.max(...latencies)).toBeLessThan(1_000);
  });
});
