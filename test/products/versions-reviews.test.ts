import { describe, expect, it } from 'vitest';
import { bearer, onPostgres, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const MEMBERS = [
  { key: 'viewer', permissions: ['products.view', 'reviews.view'], products: 'all' as const },
  { key: 'scoped', permissions: ['products.view', 'products.manage', 'reviews.view', 'reviews.manage'], products: ['p1'] },
];
const versionsUrl = (ws: SeededWorkspace, product = ws.ids.products.p1) => `/api/developer/products/${product}/versions`;
const reviewsUrl = (ws: SeededWorkspace, product = ws.ids.products.p1) => `/api/developer/products/${product}/reviews`;

describe('versions', () => {
  it('derives the current version from the catalogue while no record exists, and none when it names none', async () => {
    const ws = await seedWorkspace(ctx());
    const empty = await ctx().app.inject({ method: 'GET', url: versionsUrl(ws), headers: bearer(ws.owner) });
    expect(empty.json()).toEqual({ versions: [] });
    await ctx().app.inject({ method: 'PATCH', url: `/api/developer/products/${ws.ids.products.p1}`, headers: bearer(ws.owner), payload: { currentVersion: '3.1.4' } });
    const derived = (await ctx().app.inject({ method: 'GET', url: versionsUrl(ws), headers: bearer(ws.owner) })).json();
    expect(derived.versions).toEqual([expect.objectContaining({ id: 'derived', version: '3.1.4', isCurrent: true, releaseDate: null, changelog: '' })]);
  });

  it('keeps exactly one current version: the first record, then whichever is made current', async () => {
    const ws = await seedWorkspace(ctx());
    const post = (payload: object) => ctx().app.inject({ method: 'POST', url: versionsUrl(ws), headers: bearer(ws.owner), payload });
    const v1 = (await post({ version: '1.0.0', changelog: 'First', releaseDate: '2026-01-01T00:00:00Z' })).json();
    expect(v1).toMatchObject({ version: '1.0.0', isCurrent: true });
    const v2 = (await post({ version: '1.1.0', releaseDate: '2026-02-01T00:00:00Z' })).json();
    expect(v2.isCurrent).toBe(false);
    const v3 = await post({ version: '2.0.0', isCurrent: true });
    expect(v3.statusCode).toBe(201);
    let list = (await ctx().app.inject({ method: 'GET', url: versionsUrl(ws), headers: bearer(ws.owner) })).json().versions;
    expect(list.filter((v: { isCurrent: boolean }) => v.isCurrent).map((v: { version: string }) => v.version)).toEqual(['2.0.0']);
    expect(list[0].version).toBe('2.0.0');
    const patched = await ctx().app.inject({ method: 'PATCH', url: `${versionsUrl(ws)}/${v2.id}`, headers: bearer(ws.owner), payload: { isCurrent: true, changelog: 'Hotfix' } });
    expect(patched.json()).toMatchObject({ version: '1.1.0', isCurrent: true, changelog: 'Hotfix' });
    list = (await ctx().app.inject({ method: 'GET', url: versionsUrl(ws), headers: bearer(ws.owner) })).json().versions;
    expect(list.filter((v: { isCurrent: boolean }) => v.isCurrent)).toHaveLength(1);
    const product = (await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}`, headers: bearer(ws.owner) })).json();
    expect(product.currentVersion).toBe('1.1.0');
    expect((await post({ version: '1.0.0' })).statusCode).toBe(409);
    expect((await ctx().app.inject({ method: 'PATCH', url: `${versionsUrl(ws)}/${v2.id}`, headers: bearer(ws.owner), payload: { isCurrent: false } })).statusCode).toBe(400);
  });

  it.runIf(onPostgres)('keeps one current version when ten records are made current at once (PostgreSQL)', async () => {
    const ws = await seedWorkspace(ctx());
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ctx().app.inject({ method: 'POST', url: versionsUrl(ws), headers: bearer(ws.owner), payload: { version: `9.${i}.0`, isCurrent: true } })),
    );
    for (const r of results) expect(r.statusCode).toBe(201);
    const list = (await ctx().app.inject({ method: 'GET', url: versionsUrl(ws), headers: bearer(ws.owner) })).json().versions;
    expect(list.filter((v: { isCurrent: boolean }) => v.isCurrent)).toHaveLength(1);
  });

  it('answers 403 without products.manage, 404 across workspaces and for unassigned products, 400 for bad bodies', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    expect((await ctx().app.inject({ method: 'POST', url: versionsUrl(ws), headers: bearer(ws.tokens.viewer!), payload: { version: '1' } })).statusCode).toBe(403);
    expect((await ctx().app.inject({ method: 'GET', url: versionsUrl(other), headers: bearer(ws.owner) })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'POST', url: versionsUrl(ws, ws.ids.products.p2), headers: bearer(ws.tokens.scoped!), payload: { version: '1' } })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'PATCH', url: `${versionsUrl(ws)}/999999`, headers: bearer(ws.owner), payload: { changelog: 'x' } })).statusCode).toBe(404);
    for (const payload of [{}, { version: '' }, { version: 'x'.repeat(51) }, { version: '1', releaseDate: 'yesterday' }]) {
      expect((await ctx().app.inject({ method: 'POST', url: versionsUrl(ws), headers: bearer(ws.owner), payload })).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await ctx().app.inject({ method: 'GET', url: versionsUrl(ws) })).statusCode).toBe(401);
  });
});

describe('reviews', () => {
  it('imports reviews once per externalId, links reviewers who are customers, and computes verifiedPurchase from entitlements', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'buyer', email: 'buyer@x.test', products: ['p1'] }, { key: 'browser', email: 'browser@x.test' }],
      orders: [{ key: 'o', customer: 'buyer', items: [{ product: 'p1', priceCents: 4900 }] }],
    });
    const reviews = [
      { rating: 5, title: 'Love it', customerEmail: 'buyer@x.test', externalId: 'src-1' },
      { rating: 3, title: 'Meh', customerEmail: 'BROWSER@x.test', externalId: 'src-2', status: 'pending' },
      { rating: 1, title: 'Spam', customerName: 'Bot', status: 'hidden' },
    ];
    const res = await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/import`, headers: bearer(ws.owner), payload: { reviews } });
    expect(res.json()).toEqual({ importedCount: 3, insertedCount: 3 });
    const again = await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/import`, headers: bearer(ws.owner), payload: { reviews: reviews.slice(0, 2) } });
    expect(again.json()).toEqual({ importedCount: 2, insertedCount: 0 });
    const list = (await ctx().app.inject({ method: 'GET', url: reviewsUrl(ws), headers: bearer(ws.owner) })).json();
    expect(list.total).toBe(3);
    const byTitle = Object.fromEntries(list.rows.map((r: { title: string }) => [r.title, r]));
    expect(byTitle['Love it']).toMatchObject({ rating: 5, status: 'published', imported: true, verifiedPurchase: true, customerId: ws.ids.customers.buyer });
    expect(byTitle.Meh).toMatchObject({ status: 'pending', verifiedPurchase: false, customerId: ws.ids.customers.browser });
    expect(byTitle.Spam).toMatchObject({ status: 'hidden', customerId: null, verifiedPurchase: false });
    expect((await ctx().app.inject({ method: 'GET', url: `${reviewsUrl(ws)}?status=pending`, headers: bearer(ws.owner) })).json().total).toBe(1);
  });

  it('moderates a review, recorded in the product activity', async () => {
    const ws = await seedWorkspace(ctx());
    await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/import`, headers: bearer(ws.owner), payload: { reviews: [{ rating: 4, status: 'pending' }] } });
    const [review] = (await ctx().app.inject({ method: 'GET', url: reviewsUrl(ws), headers: bearer(ws.owner) })).json().rows;
    const res = await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/${review.id}/status`, headers: bearer(ws.owner), payload: { status: 'published', note: 'checked' } });
    expect(res.json()).toMatchObject({ id: review.id, status: 'published' });
    const dash = (await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/dashboard`, headers: bearer(ws.owner) })).json();
    expect(dash.recentActivity[0]).toMatchObject({ kind: 'review.moderated', from: 'pending', to: 'published' });
  });

  it('needs reviews.view to read and reviews.manage to change; 404 across workspaces; 400 for bad input', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(other)}/import`, headers: bearer(other.owner), payload: { reviews: [{ rating: 4 }] } });
    const [foreign] = (await ctx().app.inject({ method: 'GET', url: reviewsUrl(other), headers: bearer(other.owner) })).json().rows;
    expect((await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/import`, headers: bearer(ws.tokens.viewer!), payload: { reviews: [{ rating: 4 }] } })).statusCode).toBe(403);
    expect((await ctx().app.inject({ method: 'GET', url: reviewsUrl(other), headers: bearer(ws.owner) })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/${foreign.id}/status`, headers: bearer(ws.owner), payload: { status: 'hidden' } })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: reviewsUrl(ws, ws.ids.products.p2), headers: bearer(ws.tokens.scoped!) })).statusCode).toBe(404);
    for (const payload of [{ reviews: [] }, { reviews: [{ rating: 6 }] }, { reviews: [{ rating: 4, customerEmail: 'nope' }] }, {}]) {
      expect((await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/import`, headers: bearer(ws.owner), payload })).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await ctx().app.inject({ method: 'POST', url: `${reviewsUrl(ws)}/1/status`, headers: bearer(ws.owner), payload: { status: 'deleted' } })).statusCode).toBe(400);
  });
});
