import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { insertBulkItems, PURCHASES } from './purchases-helpers.js';

const ctx = useTestApp();

describe('GET /api/developer/purchases deep pages', () => {
  it('serves pages beyond offset 10,000 in list order, with microsecond purchase times and ties, also after more items arrive', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c' }] });
    const item = { workspaceId: ws.workspaceId, orderId: ws.ids.orders.o!, productId: ws.ids.products.p1!, customerId: ws.ids.customers.c! };
    // Sub-millisecond steps, plus a block of identical times that only the id orders.
    await insertBulkItems(ctx, { ...item, count: 10_400, start: '2026-01-01T00:00:00.123456Z', step: '0.000137 seconds' });
    await insertBulkItems(ctx, { ...item, count: 900, start: '2025-06-01T00:00:00.5Z', step: '0 seconds' });
    const ids = async () =>
      (
        await sql<{ id: number }>`select id from order_items where workspace_id = ${ws.workspaceId} order by purchased_at desc, id desc`.execute(ctx().database.db)
      ).rows.map((r) => r.id);
    const page = async (n: number, limit: number) =>
      (await ctx().app.inject({ method: 'GET', url: `${PURCHASES}?limit=${limit}&page=${n}`, headers: bearer(ws.owner) })).json();

    let all = await ids();
    for (const [n, limit] of [[21, 500], [22, 500], [103, 100], [23, 500], [50, 500]] as const) {
      const body = await page(n, limit);
      expect(body.rows.map((r: { order_item_id: number }) => r.order_item_id), `page ${n}`).toEqual(all.slice((n - 1) * limit, n * limit));
      expect(body.total).toBe(all.length);
    }
    await insertBulkItems(ctx, { ...item, count: 3, start: '2026-02-01T00:00:00Z', step: '1 second' });
    all = await ids();
    const shifted = await page(21, 500);
    expect(shifted.rows.map((r: { order_item_id: number }) => r.order_item_id)).toEqual(all.slice(10_000, 10_500));
    expect(shifted.total).toBe(all.length);
  });
});
