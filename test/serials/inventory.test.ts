import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, SERIALS, type SerialRow } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);
const AVAILABLE = `${SERIALS}/available-by-product`;
const RESELLERS = `${SERIALS}/resellers`;

interface Availability {
  products: Array<{ productId: number; product: string; available: number; total: number }>;
  promos: Array<{ productId: number; product: string; batchTag: string | null; promoPrice: number; promoStart: string | null; promoExpires: string | null; available: number }>;
  rows: SerialRow[];
  total: number;
  page: number;
  pageSize: number;
}

async function availability(token: string, query = ''): Promise<Availability> {
  const res = await api.get(token, `${AVAILABLE}${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const DAY = 86_400_000;
const at = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY).toISOString();

describe('GET /api/developer/serials/available-by-product', () => {
  it('counts available and total serials for every product, and lists only available rows', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      serials: [
        { key: 'a1', product: 'p1' },
        { key: 'a2', product: 'p1' },
        { key: 'used', product: 'p1', customer: 'c' },
        { key: 'paused', product: 'p2' },
        { key: 'a3', product: 'p2' },
      ],
    });
    await api.act(ws.owner, ws.ids.serials.paused!, 'suspend');

    const body = await availability(ws.owner);
    expect(body.products).toEqual([
      { productId: ws.ids.products.p1, product: `Product p1 ${ws.suffix}`, available: 2, total: 3 },
      { productId: ws.ids.products.p2, product: `Product p2 ${ws.suffix}`, available: 1, total: 2 },
      { productId: ws.ids.products.p3, product: `Product p3 ${ws.suffix}`, available: 0, total: 0 },
    ]);
    expect(body.rows.map((r) => r.serial).sort()).toEqual([ws.serialCodes.a1, ws.serialCodes.a2, ws.serialCodes.a3].sort());
    expect(body.rows.every((r) => r.status === 'available')).toBe(true);
    expect(body).toMatchObject({ total: 3, page: 1, pageSize: 50 });

    const paged = await availability(ws.owner, '?limit=2&page=2');
    expect(paged).toMatchObject({ total: 3, pageSize: 2 });
    expect(paged.rows).toHaveLength(1);
  });

  it('narrows products, promos and rows to productId', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p2' }] });
    await api.generate(ws.owner, { productId: ws.ids.products.p1, promoPrice: 100 });
    const body = await availability(ws.owner, `?productId=${ws.ids.products.p2}`);
    expect(body.products.map((p) => p.productId)).toEqual([ws.ids.products.p2]);
    expect(body.promos).toEqual([]);
    expect(body.rows.map((r) => r.serial)).toEqual([ws.serialCodes.b]);
  });

  it('shows promo batches whose window is running, and only their available serials', async () => {
    const ws = await seedWorkspace(ctx());
    const batch = (body: Record<string, unknown>) => api.generate(ws.owner, { productId: ws.ids.products.p1, ...body });
    const running = await batch({ quantity: 3, batchTag: 'SPRING', promoPrice: 1900, promoStart: at(-1), promoExpires: at(7) });
    expect(running.statusCode, running.body).toBe(201);
    await batch({ quantity: 2, batchTag: 'OPEN-ENDED', promoPrice: 2900 });
    await batch({ quantity: 2, batchTag: 'EXPIRED', promoPrice: 900, promoStart: at(-30), promoExpires: at(-1) });
    await batch({ quantity: 2, batchTag: 'UPCOMING', promoPrice: 900, promoStart: at(2), promoExpires: at(9) });
    await batch({ quantity: 2, batchTag: 'NO-PROMO' });
    // A promo serial that has been sold is no longer promo inventory.
    await api.act(ws.owner, running.json().serials[0].id, 'activate');

    const { promos, products } = await availability(ws.owner);
    const byTag = Object.fromEntries(promos.map((p) => [p.batchTag, p]));
    expect(Object.keys(byTag).sort()).toEqual(['OPEN-ENDED', 'SPRING']);
    expect(byTag.SPRING).toMatchObject({ productId: ws.ids.products.p1, product: `Product p1 ${ws.suffix}`, promoPrice: 1900, available: 2 });
    expect(Date.parse(byTag.SPRING!.promoExpires!)).toBe(Date.parse(running.json().serials[0].promo_expires));
    expect(byTag['OPEN-ENDED']).toMatchObject({ promoPrice: 2900, promoStart: null, promoExpires: null, available: 2 });
    expect(products[0]).toMatchObject({ available: 10, total: 11 });
  });

  it('shows a product-scoped member only their products', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.scoped], serials: [{ key: 'mine', product: 'p1' }, { key: 'theirs', product: 'p2' }] });
    await api.generate(ws.owner, { productId: ws.ids.products.p2, promoPrice: 100 });
    const body = await availability(ws.tokens.scoped!);
    expect(body.products.map((p) => p.productId)).toEqual([ws.ids.products.p1]);
    expect(body.promos).toEqual([]);
    expect(body.rows.map((r) => r.serial)).toEqual([ws.serialCodes.mine]);

    const unassigned = await availability(ws.tokens.scoped!, `?productId=${ws.ids.products.p2}`);
    expect(unassigned).toMatchObject({ products: [], promos: [], rows: [], total: 0 });
  });

  it('does not count another workspace’s serials', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const body = await availability(ws.owner, `?productId=${other.ids.products.p1}`);
    expect(body).toMatchObject({ products: [], promos: [], rows: [], total: 0 });
  });

  it('needs serials.view and rejects bad filters', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.manager] });
    expectProblem(await api.get(ws.tokens.manager!, AVAILABLE), 403, 'FORBIDDEN');
    expectProblem(await api.get(ws.owner, `${AVAILABLE}?productId=-1`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.owner, `${AVAILABLE}?limit=1000`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.owner, `${AVAILABLE}?dateRange=1y`), 400, 'VALIDATION_FAILED');
  });
});

describe('GET /api/developer/serials/resellers', () => {
  it('lists the workspace’s reseller relationships', async () => {
    const ws = await seedWorkspace(ctx(), {
      resellers: [
        { key: 'b', name: 'Beat Store', kind: 'store', developerShareBps: 7000 },
        { key: 'a', name: 'Audio Bundle Co', kind: 'bundle', developerShareBps: null },
        { key: 'd', name: 'Distro', kind: 'distributor' },
      ],
    });
    const res = await api.get(ws.owner, RESELLERS);
    expect(res.statusCode).toBe(200);
    const { resellers } = res.json() as { resellers: Array<Record<string, unknown>> };
    expect(resellers.map((r) => r.name)).toEqual(['Audio Bundle Co', 'Beat Store', 'Distro']);
    expect(resellers[1]).toEqual({ id: expect.any(Number), name: 'Beat Store', kind: 'store', relationship_id: ws.ids.resellers.b, developer_share_bps: 7000 });
    expect(resellers[0]).toMatchObject({ kind: 'bundle', relationship_id: ws.ids.resellers.a, developer_share_bps: null });
    expect(resellers[2]).toMatchObject({ kind: 'distributor', relationship_id: ws.ids.resellers.d });
  });

  it('does not show another workspace’s resellers, nor ended relationships', async () => {
    const ws = await seedWorkspace(ctx(), { resellers: [{ key: 'mine', name: 'Mine' }, { key: 'ended', name: 'Ended' }] });
    await seedWorkspace(ctx(), { resellers: [{ key: 'theirs', name: 'Theirs' }] });
    await ctx().database.db.updateTable('reseller_relationships').set({ status: 'ended' }).where('id', '=', ws.ids.resellers.ended!).execute();
    const { resellers } = (await api.get(ws.owner, RESELLERS)).json();
    expect(resellers.map((r: { relationship_id: number }) => r.relationship_id)).toEqual([ws.ids.resellers.mine]);
    expect((await api.get((await seedWorkspace(ctx())).owner, RESELLERS)).json()).toEqual({ resellers: [] });
  });

  it('needs serials.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.viewer, MEMBERS.manager, MEMBERS.outsider], resellers: [{ key: 'r', name: 'R' }] });
    expect((await api.get(ws.tokens.viewer!, RESELLERS)).json().resellers).toHaveLength(1);
    expectProblem(await api.get(ws.tokens.manager!, RESELLERS), 403, 'FORBIDDEN');
    expectProblem(await api.get(ws.tokens.outsider!, RESELLERS), 403, 'FORBIDDEN');
  });
});
