import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';

// The product dashboard (contract 4.5): every optional section follows its permission, and a
// section the caller may not read is never queried.

const queries: string[] = [];
const ctx = useTestApp({ onQuery: (sql) => queries.push(sql) });

const OPTIONAL = ['analytics.view', 'reviews.view', 'product_files.view', 'credentials.view'] as const;
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

async function richWorkspace(): Promise<SeededWorkspace> {
  const combos = Array.from({ length: 16 }, (_, mask) => ({
    key: `m${mask}`,
    permissions: ['products.view', ...OPTIONAL.filter((_, bit) => mask & (1 << bit))],
    products: 'all' as const,
  }));
  const ws = await seedWorkspace(ctx(), {
    members: combos,
    customers: [{ key: 'a', email: 'a@x.test', products: ['p1'] }, { key: 'b', email: 'b@x.test', products: ['p1'] }],
    orders: [
      { key: 'o1', customer: 'a', purchasedAt: daysAgo(2), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 4900 }] },
      { key: 'o2', customer: 'b', purchasedAt: daysAgo(20), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 3900, refundedCents: 1000, refundedAt: daysAgo(1) }] },
      { key: 'o3', customer: 'a', purchasedAt: daysAgo(200), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 4900 }] },
      { key: 'o4', customer: 'b', currency: 'eur', purchasedAt: daysAgo(3), items: [{ product: 'p1', priceCents: 4500, salePriceCents: 4500 }] },
    ],
  });
  await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/versions`, headers: bearer(ws.owner), payload: { version: '1.0.0' } });
  await ctx().app.inject({
    method: 'POST',
    url: `/api/developer/products/${ws.ids.products.p1}/files`,
    headers: bearer(ws.owner),
    payload: { filename: 'a.zip', url: 'https://cdn.example/a.zip' },
  });
  await ctx().app.inject({
    method: 'POST',
    url: `/api/developer/products/${ws.ids.products.p1}/reviews/import`,
    headers: bearer(ws.owner),
    payload: { reviews: [{ rating: 5, customerEmail: 'a@x.test' }, { rating: 3 }, { rating: 1, status: 'pending' }] },
  });
  return ws;
}

const dashboard = (ws: SeededWorkspace, token: string, query = '') =>
  ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/dashboard${query}`, headers: bearer(token) });

describe('GET /api/developer/products/{productId}/dashboard', () => {
  it('fills, nulls or empties each section exactly as the 16 permission combinations allow', async () => {
    const ws = await richWorkspace();
    for (let mask = 0; mask < 16; mask += 1) {
      const [analytics, reviews, files, credentials] = [0, 1, 2, 3].map((bit) => Boolean(mask & (1 << bit))) as [boolean, boolean, boolean, boolean];
      const res = await dashboard(ws, ws.tokens[`m${mask}`]!);
      expect(res.statusCode, `mask ${mask}`).toBe(200);
      const d = res.json();
      const label = `analytics=${analytics} reviews=${reviews} files=${files} credentials=${credentials}`;
      expect(d.access, label).toEqual({ analytics, reviews, files, credentials });
      // Always: the catalogue row, versions, readiness, health and the storefront destination.
      expect(d.product.id, label).toBe(ws.ids.products.p1);
      expect(d.versions.map((v: { version: string }) => v.version), label).toEqual(['1.0.0']);
      if (analytics) {
        expect(d.performance.available, label).toBe(true);
        expect(d.performance.ranges, label).toHaveLength(4);
        expect(d.kpis, label).toMatchObject({ customerCount: 2, orderCount: 4, downloadsTotal: 0 });
        expect(d.recentActivity.length, label).toBeGreaterThan(0);
        expect(d.product, label).toMatchObject({ customerCount: 2, orderCount: 4, downloadsTotal: 0 });
      } else {
        expect(d.performance, label).toEqual({ available: false, reason: 'permission_required', ranges: [] });
        expect(d.kpis, label).toEqual({ customerCount: null, orderCount: null, downloadsTotal: null, ratingAverage: null, ratingCount: null });
        expect(d.recentActivity, label).toEqual([]);
        expect(d.product, label).not.toHaveProperty('customerCount');
        expect(d.product, label).not.toHaveProperty('downloadsTotal');
      }
      if (analytics && reviews) expect(d.kpis, label).toMatchObject({ ratingAverage: 4, ratingCount: 2 });
      else expect([d.kpis.ratingAverage, d.kpis.ratingCount], label).toEqual([null, null]);
      if (reviews) {
        expect(d.reviews, label).toHaveLength(3);
        expect(d.reviewSummary, label).toMatchObject({ available: true, published: 2, pending: 1, hidden: 0, averageRating: 4 });
      } else {
        expect(d.reviews, label).toEqual([]);
        expect(d.reviewSummary, label).toEqual({ available: false, reason: 'permission_required' });
      }
      if (files) {
        expect(d.files, label).toHaveLength(1);
        expect(d.product.fileCount, label).toBe(1);
      } else {
        expect(d.files, label).toEqual([]);
        expect(d.product, label).not.toHaveProperty('fileCount');
        expect(d.readiness.items.find((i: { key: string }) => i.key === 'delivery_file').state, label).toBe('unknown');
      }
      if (credentials) {
        expect(d.restApi, label).toMatchObject({ appId: ws.appIds.p1, secretReturned: false, environment: 'live' });
        expect(d.restApi.productKey, label).toMatch(/^pk_live_…/);
        expect(d.pluginConnectionStatus, label).toMatchObject({ status: 'never_connected' });
        expect(d.pluginPackage, label).toMatchObject({ packageReady: false });
      } else {
        expect([d.restApi, d.pluginConnectionStatus, d.pluginPackage], label).toEqual([null, null, null]);
      }
    }
  });

  it('does not query the tables of sections the caller may not read', async () => {
    const ws = await richWorkspace();
    queries.length = 0;
    const res = await dashboard(ws, ws.tokens.m0!);
    expect(res.statusCode).toBe(200);
    const issued = queries.join('\n');
    for (const table of ['order_items', 'product_sales_daily', 'customer_products', 'serial_events', 'product_events', 'product_reviews', 'product_files', 'product_credentials', 'product_keys']) {
      expect(issued, table).not.toContain(`"${table}"`);
      expect(issued, table).not.toMatch(new RegExp(`\\b${table}\\b`));
    }
    // and provisions nothing for that caller
    expect(issued).not.toMatch(/insert into/i);
    queries.length = 0;
    await dashboard(ws, ws.tokens.m15!);
    expect(queries.join('\n')).toMatch(/product_sales_daily/);
  });

  it('sums sales windows in the requested currency only, naming the others, with refunds on the day they were reported', async () => {
    const ws = await richWorkspace();
    const d = (await dashboard(ws, ws.owner)).json();
    const [d7, d30, , d365] = d.performance.ranges;
    expect(d7).toMatchObject({ window: '7d', currency: 'usd', orders: 1, units: 1, grossCents: 4900, refundsCents: 1000, netCents: 3900, otherCurrencies: [{ currency: 'eur', orders: 1 }] });
    expect(d30).toMatchObject({ window: '30d', orders: 2, grossCents: 8800, refundsCents: 1000, netCents: 7800 });
    expect(d365).toMatchObject({ window: '365d', orders: 3, grossCents: 13700, refundsCents: 1000, netCents: 12700 });
    const eur = (await dashboard(ws, ws.owner, '?currency=EUR')).json().performance.ranges[0];
    expect(eur).toMatchObject({ currency: 'eur', orders: 1, grossCents: 4500, otherCurrencies: [{ currency: 'usd', orders: 1 }] });
  });

  it('lists recent activity newest first across sales, refunds, catalogue and review changes', async () => {
    const ws = await richWorkspace();
    const activity = (await dashboard(ws, ws.owner)).json().recentActivity as Array<{ kind: string; occurredAt: string }>;
    const times = activity.map((a) => Date.parse(a.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const kinds = new Set(activity.map((a) => a.kind));
    for (const kind of ['sale', 'refund', 'version.created', 'file.registered', 'reviews.imported']) expect(kinds, kind).toContain(kind);
  });

  it('names the storefront destination of the product, else of the workspace', async () => {
    const ws = await richWorkspace();
    expect((await dashboard(ws, ws.owner)).json().storefrontDestination).toEqual({ url: '', kind: 'none' });
    await ctx().database.db.updateTable('workspaces').set({ storefront_url: 'https://shop.example' }).where('id', '=', ws.workspaceId).execute();
    expect((await dashboard(ws, ws.owner)).json().storefrontDestination).toEqual({ url: 'https://shop.example', kind: 'workspace' });
    await ctx().app.inject({ method: 'PATCH', url: `/api/developer/products/${ws.ids.products.p1}`, headers: bearer(ws.owner), payload: { storefrontUrl: 'https://shop.example/p1' } });
    expect((await dashboard(ws, ws.owner)).json().storefrontDestination).toEqual({ url: 'https://shop.example/p1', kind: 'product' });
  });

  it('validates currency and environment; 401, 403 and 404 like every product route', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'none', permissions: ['analytics.view'], products: 'all' }, { key: 'scoped', permissions: ['products.view'], products: ['p2'] }] });
    const other = await seedWorkspace(ctx());
    for (const q of ['?currency=usdd', '?currency=u1d', '?currency=', '?environment=staging', '?unknown=1']) expect((await dashboard(ws, ws.owner, q)).statusCode, q).toBe(400);
    expect((await dashboard(ws, ws.owner, '?currency=gbp&environment=test')).statusCode).toBe(200);
    expect((await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/dashboard` })).statusCode).toBe(401);
    expect((await dashboard(ws, ws.tokens.none!)).statusCode).toBe(403);
    expect((await dashboard(ws, ws.tokens.scoped!)).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${other.ids.products.p1}/dashboard`, headers: bearer(ws.owner) })).statusCode).toBe(404);
  });
});
