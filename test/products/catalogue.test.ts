import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const get = (token: string, url: string) => ctx().app.inject({ method: 'GET', url, headers: bearer(token) });
const send = (token: string, method: 'POST' | 'PATCH', url: string, payload: object) => ctx().app.inject({ method, url, headers: bearer(token), payload });

const MEMBERS = [
  { key: 'viewer', permissions: ['products.view'], products: 'all' as const },
  { key: 'scoped', permissions: ['products.view', 'products.manage'], products: ['p1'] },
  { key: 'none', permissions: ['customers.view'], products: 'all' as const },
];

describe('GET /api/developer/products', () => {
  it('lists the workspace’s products newest first with their appId, price and settings', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await get(ws.owner, '/api/developer/products');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 3, page: 1, pageSize: 50 });
    expect(body.rows.map((r: { id: number }) => r.id)).toEqual([ws.ids.products.p3, ws.ids.products.p2, ws.ids.products.p1]);
    expect(body.rows[2]).toMatchObject({
      name: `Product p1 ${ws.suffix}`,
      appId: ws.appIds.p1,
      status: 'active',
      priceCents: 4900,
      price: '49.00',
      currency: 'usd',
      maxActivations: 2,
      offlineGraceDays: 14,
      storefrontUrl: null,
    });
  });

  it('shows a product-scoped member only their products, and filters by search and status', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const scoped = (await get(ws.tokens.scoped!, '/api/developer/products')).json();
    expect(scoped.rows.map((r: { id: number }) => r.id)).toEqual([ws.ids.products.p1]);
    expect(scoped.total).toBe(1);
    expect((await get(ws.owner, '/api/developer/products?search=P2')).json().rows.map((r: { id: number }) => r.id)).toEqual([ws.ids.products.p2]);
    await send(ws.owner, 'PATCH', `/api/developer/products/${ws.ids.products.p3}`, { status: 'archived' });
    const archived = (await get(ws.owner, '/api/developer/products?status=archived')).json();
    expect(archived.rows.map((r: { id: number }) => r.id)).toEqual([ws.ids.products.p3]);
  });

  it('answers 403 without products.view, 401 without a token, 400 for unknown parameters', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    expect((await get(ws.tokens.none!, '/api/developer/products')).statusCode).toBe(403);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/products' })).statusCode).toBe(401);
    expect((await get(ws.owner, '/api/developer/products?status=gone')).statusCode).toBe(400);
    expect((await get(ws.owner, '/api/developer/products?sort=name')).statusCode).toBe(400);
  });
});

describe('GET /api/developer/products/{productId}', () => {
  it('answers the product, and 404 for another workspace’s or an unassigned product', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    expect((await get(ws.owner, `/api/developer/products/${ws.ids.products.p2}`)).json()).toMatchObject({ id: ws.ids.products.p2, appId: ws.appIds.p2 });
    expect((await get(ws.owner, `/api/developer/products/${other.ids.products.p1}`)).statusCode).toBe(404);
    expect((await get(ws.tokens.scoped!, `/api/developer/products/${ws.ids.products.p2}`)).statusCode).toBe(404);
    expect((await get(ws.tokens.scoped!, `/api/developer/products/${ws.ids.products.p1}`)).statusCode).toBe(200);
    expect((await get(ws.owner, '/api/developer/products/0')).statusCode).toBe(400);
  });
});

describe('POST /api/developer/products', () => {
  it('creates a draft product with a fresh appId that the licensing runtime knows', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await send(ws.owner, 'POST', '/api/developer/products', {
      name: '  Granular Delay ',
      priceCents: 2900,
      currency: 'EUR',
      maxActivations: 4,
      offlineGraceDays: 30,
      storefrontUrl: 'https://shop.example/delay',
      currentVersion: '0.9.0',
    });
    expect(res.statusCode, res.body).toBe(201);
    const product = res.json();
    expect(product).toMatchObject({ name: 'Granular Delay', status: 'draft', priceCents: 2900, price: '29.00', currency: 'eur', maxActivations: 4, offlineGraceDays: 30 });
    expect(product.appId).toMatch(/^app_[a-z0-9]{20}$/);
    expect(res.headers.location).toBe(`/api/developer/products/${product.id}`);
    const keys = await ctx().app.inject({ method: 'GET', url: `/api/licensing/v1/keys?productAppId=${product.appId}` });
    expect(keys.statusCode).toBe(200);
  });

  it('needs products.manage and all-products access, and refuses bad fields with 400', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    expect((await send(ws.tokens.viewer!, 'POST', '/api/developer/products', { name: 'X' })).statusCode).toBe(403);
    const scoped = await send(ws.tokens.scoped!, 'POST', '/api/developer/products', { name: 'X' });
    expect(scoped.statusCode).toBe(403);
    expect(scoped.json().code).toBe('ALL_PRODUCTS_SCOPE_REQUIRED');
    for (const bad of [{}, { name: '' }, { name: 'X', priceCents: -1 }, { name: 'X', priceCents: 1.5 }, { name: 'X', currency: 'EURO' }, { name: 'X', status: 'live' }, { name: 'X', storefrontUrl: 'javascript:alert(1)' }, { name: 'X', offlineGraceDays: 400 }]) {
      const res = await send(ws.owner, 'POST', '/api/developer/products', bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('PATCH /api/developer/products/{productId}', () => {
  it('changes only the fields sent and can clear optional ones', async () => {
    const ws = await seedWorkspace(ctx());
    const url = `/api/developer/products/${ws.ids.products.p1}`;
    const first = await send(ws.owner, 'PATCH', url, { storefrontUrl: 'https://shop.example/p1', priceCents: 5900 });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ storefrontUrl: 'https://shop.example/p1', priceCents: 5900, maxActivations: 2 });
    const cleared = await send(ws.owner, 'PATCH', url, { storefrontUrl: null });
    expect(cleared.json()).toMatchObject({ storefrontUrl: null, priceCents: 5900 });
  });

  it('answers 404 for a foreign or unassigned product, 403 without products.manage, 400 for an empty body', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    expect((await send(ws.owner, 'PATCH', `/api/developer/products/${other.ids.products.p1}`, { name: 'Taken' })).statusCode).toBe(404);
    expect((await send(ws.tokens.scoped!, 'PATCH', `/api/developer/products/${ws.ids.products.p2}`, { name: 'Taken' })).statusCode).toBe(404);
    expect((await send(ws.tokens.viewer!, 'PATCH', `/api/developer/products/${ws.ids.products.p1}`, { name: 'Taken' })).statusCode).toBe(403);
    expect((await send(ws.owner, 'PATCH', `/api/developer/products/${ws.ids.products.p1}`, {})).statusCode).toBe(400);
    expect((await get(other.owner, `/api/developer/products/${other.ids.products.p1}`)).json().name).toBe(`Product p1 ${other.suffix}`);
  });
});
