import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

describe('GET /api/developer/serials deep pages', () => {
  it('serves pages beyond offset 10,000 in the same order as the plain query, also after more serials arrive', async () => {
    const ws = await seedWorkspace(ctx());
    const generate = (quantity: number) =>
      ctx().app.inject({ method: 'POST', url: '/api/developer/serials/generate', headers: bearer(ws.owner), payload: { productId: ws.ids.products.p1, quantity } });
    expect((await generate(10_000)).statusCode).toBe(201);
    expect((await generate(1_200)).statusCode).toBe(201);
    const ids = async () =>
      (
        await ctx().database.db.selectFrom('serials').where('workspace_id', '=', ws.workspaceId).select('id').orderBy('id', 'desc').execute()
      ).map((r) => r.id);
    const page = async (n: number, limit: number) =>
      (await ctx().app.inject({ method: 'GET', url: `/api/developer/serials?limit=${limit}&page=${n}`, headers: bearer(ws.owner) })).json();

    let all = await ids();
    for (const [n, limit] of [[21, 500], [23, 500], [101, 100], [50, 500]] as const) {
      const body = await page(n, limit);
      expect(body.rows.map((r: { id: number }) => r.id), `page ${n}`).toEqual(all.slice((n - 1) * limit, n * limit));
      expect(body.total).toBe(all.length);
    }
    expect((await generate(7)).statusCode).toBe(201);
    all = await ids();
    const shifted = await page(21, 500);
    expect(shifted.rows.map((r: { id: number }) => r.id)).toEqual(all.slice(10_000, 10_500));
    expect(shifted.total).toBe(all.length);
  });
});
