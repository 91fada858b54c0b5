import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, seedWorkspace, unique, type TestContext } from '../helpers/app.js';

// Two app instances on one database share rate-limit counters through a real Redis server
// (these machines run one on 127.0.0.1:6379; CI starts it when it is down).

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('rate limits shared through Redis by several instances', () => {
  const clients: Redis[] = [];
  const apps: TestContext[] = [];
  afterAll(async () => {
    for (const ctx of apps) {
      await ctx.app.close();
      await ctx.database.close();
    }
    for (const client of clients) client.disconnect();
  });

  it('counts the requests of both instances against one limit', { timeout: 180_000 }, async () => {
    const namespace = `patchbay-test:${unique()}:`;
    const options = { rateLimit: { perIp: 4, perSerial: 1_000 }, rateLimitNamespace: namespace };
    for (let i = 0; i < 2; i += 1) {
      const redis = new Redis(REDIS_URL);
      clients.push(redis);
      apps.push(await buildTestApp({ ...options, redis }));
    }
    const [a, b] = apps as [TestContext, TestContext];
    const get = (ctx: TestContext) => ctx.app.inject({ method: 'GET', url: '/api/licensing/v1/keys?productAppId=app_unknown' });
    const statuses = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await get(i % 2 === 0 ? a : b)).statusCode);
    // 4 allowed in all, not 4 per instance.
    expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
  });

  it('lets requests through while Redis is unreachable (counters are skipped, never an error)', { timeout: 180_000 }, async () => {
    const redis = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    redis.on('error', () => undefined);
    clients.push(redis);
    const ctx = await buildTestApp({ rateLimit: { perIp: 1, perSerial: 1 }, redis, rateLimitNamespace: `patchbay-test:${unique()}:` });
    apps.push(ctx);
    const ws = await seedWorkspace(ctx, { serials: [{ key: 's', product: 'p1' }] });
    for (let i = 0; i < 3; i += 1) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/licensing/v1/validate',
        payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'm' },
      });
      expect(res.statusCode).toBe(200);
    }
  });
});
