import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';

// The dashboard pinned as a whole: each section is what the section's own route answers, and a caller without a
// section's permission gets the full answer with exactly that section emptied (contract 4.5). The dashboard reads its
// sections in one statement; these hold it to the routes it summarises.

const ctx = useTestApp();

const OPTIONAL = ['analytics.view', 'reviews.view', 'product_files.view', 'credentials.view'] as const;
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

type Json = Record<string, any>;

async function workspaceWithEverything(): Promise<SeededWorkspace> {
  const combos = Array.from({ length: 16 }, (_, mask) => ({
    key: `m${mask}`,
    permissions: ['products.view', ...OPTIONAL.filter((_, bit) => mask & (1 << bit))],
    products: 'all' as const,
  }));
  const ws = await seedWorkspace(ctx(), {
    members: combos,
    customers: [{ key: 'a', email: 'a@x.test', products: ['p1'] }, { key: 'b', email: 'b@x.test', products: ['p1'] }, { key: 'c', email: 'c@x.test' }],
    orders: [
      { key: 'o1', customer: 'a', purchasedAt: daysAgo(2), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 4900 }] },
      { key: 'o2', customer: 'b', purchasedAt: daysAgo(20), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 3900, refundedCents: 1000, refundedAt: daysAgo(1) }] },
      { key: 'o3', customer: 'a', purchasedAt: daysAgo(200), items: [{ product: 'p1', priceCents: 4900, salePriceCents: 4900 }] },
      { key: 'o4', customer: 'b', currency: 'eur', purchasedAt: daysAgo(3), items: [{ product: 'p1', priceCents: 4500, salePriceCents: 4500 }] },
      { key: 'o5', customer: 'c', purchasedAt: daysAgo(1), items: [{ product: 'p2', priceCents: 900, salePriceCents: 900 }] },
    ],
  });
  const p1 = `/api/developer/products/${ws.ids.products.p1}`;
  const post = async (url: string, payload: unknown) => {
    const res = await ctx().app.inject({ method: 'POST', url, headers: bearer(ws.owner), payload: payload as Json });
    expect(res.statusCode, `${url} ${res.body}`).toBeLessThan(300);
  };
  await post(`${p1}/versions`, { version: '1.0.0', changelog: 'First', releaseDate: daysAgo(30) });
  await post(`${p1}/versions`, { version: '1.1.0', releaseDate: daysAgo(5), isCurrent: true });
  await post(`${p1}/files`, { filename: 'a.zip', url: 'https://cdn.example/a.zip' });
  await post(`${p1}/files`, { filename: 'b.pdf', url: 'https://cdn.example/b.pdf', type: 'manual' });
  await post(`${p1}/reviews/import`, {
    reviews: [{ rating: 5, customerEmail: 'a@x.test', title: 'Great' }, { rating: 3 }, { rating: 1, status: 'pending' }, { rating: 4, status: 'hidden' }],
  });
  // Another product's records must not leak in.
  await post(`/api/developer/products/${ws.ids.products.p2}/files`, { filename: 'other.zip', url: 'https://cdn.example/other.zip' });
  await post(`/api/developer/products/${ws.ids.products.p2}/reviews/import`, { reviews: [{ rating: 2 }] });
  return ws;
}

const get = async (ws: SeededWorkspace, path: string, token = ws.owner) => {
  const res = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}${path}`, headers: bearer(token) });
  expect(res.statusCode, `${path} ${res.body}`).toBe(200);
  return res.json() as Json;
};

/** The owner's answer with the sections of the permissions `access` lacks emptied, as contract 4.5 says. */
function expectedFor(full: Json, access: { analytics: boolean; reviews: boolean; files: boolean; credentials: boolean }): Json {
  const product = { ...full.product };
  if (!access.analytics) for (const key of ['customerCount', 'orderCount', 'downloadsTotal']) delete product[key];
  if (!access.files) delete product.fileCount;
  const unknown = new Set([...(access.files ? [] : ['delivery_file']), ...(access.credentials ? [] : ['credentials_ready', 'package_generated', 'plugin_connected'])]);
  const items = (full.readiness.items as Json[]).map((i) => (unknown.has(i.key) ? { ...i, state: 'unknown' } : i));
  const known = items.filter((i) => i.state !== 'unknown');
  const missing = items.filter((i) => i.state === 'missing').map((i) => i.key);
  const ratings = access.analytics && access.reviews;
  return {
    ...full,
    access,
    product,
    health: {
      status: missing.length === 0 ? (known.length === items.length ? 'ready' : 'ready_as_far_as_visible') : 'incomplete',
      done: known.length - missing.length,
      checked: known.length,
      missing,
    },
    kpis: {
      customerCount: access.analytics ? full.kpis.customerCount : null,
      orderCount: access.analytics ? full.kpis.orderCount : null,
      downloadsTotal: access.analytics ? full.kpis.downloadsTotal : null,
      ratingAverage: ratings ? full.kpis.ratingAverage : null,
      ratingCount: ratings ? full.kpis.ratingCount : null,
    },
    performance: access.analytics ? full.performance : { available: false, reason: 'permission_required', ranges: [] },
    reviewSummary: access.reviews ? full.reviewSummary : { available: false, reason: 'permission_required' },
    readiness: { ready: missing.length === 0 && known.length === items.length, items },
    pluginPackage: access.credentials ? full.pluginPackage : null,
    pluginConnectionStatus: access.credentials ? full.pluginConnectionStatus : null,
    restApi: access.credentials ? full.restApi : null,
    files: access.files ? full.files : [],
    reviews: access.reviews ? full.reviews : [],
    recentActivity: access.analytics ? full.recentActivity : [],
  };
}

describe('the product dashboard as a whole', () => {
  it('answers each section as its own route does', async () => {
    const ws = await workspaceWithEverything();
    const first = await get(ws, '/dashboard');
    expect(first.restApi.created).toBe(true);
    const d = await get(ws, '/dashboard');
    expect(d.restApi.created).toBe(false);

    expect(d.product).toEqual({ ...(await get(ws, '')), customerCount: 2, orderCount: 4, downloadsTotal: 0, fileCount: 2 });
    expect(d.versions).toEqual((await get(ws, '/versions')).versions);
    expect(d.versions.map((v: Json) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(d.files).toEqual((await get(ws, '/files')).files);
    expect(d.files.map((f: Json) => f.filename).sort()).toEqual(['a.zip', 'b.pdf']);
    const reviews = await get(ws, '/reviews?limit=10');
    expect(d.reviews).toEqual(reviews.rows);
    expect(d.reviewSummary).toEqual({
      available: true,
      total: 4,
      published: 2,
      pending: 1,
      hidden: 1,
      averageRating: 4,
      ratingCount: 2,
      distribution: { 1: 0, 2: 0, 3: 1, 4: 0, 5: 1 },
    });
    expect(d.reviews.find((r: Json) => r.rating === 5)).toMatchObject({ customerEmail: 'a@x.test', verifiedPurchase: true });
    expect(d.kpis).toEqual({ customerCount: 2, orderCount: 4, downloadsTotal: 0, ratingAverage: 4, ratingCount: 2 });
    expect(d.restApi).toEqual({ ...(await get(ws, '/rest-config')).restApi, created: false });
    const status = await get(ws, '/plugin-package/status');
    expect(d.pluginPackage).toEqual({ status: status.status, packageReady: status.packageReady, lastGeneratedAt: status.lastGeneratedAt, variants: [], environment: 'live' });
    expect(d.pluginConnectionStatus).toEqual({ status: 'never_connected', lastPluginConnectionAt: null, environment: 'live' });

    const [d7, d30, d90, d365] = d.performance.ranges as Json[];
    const today = new Date().toISOString().slice(0, 10);
    expect(d7).toEqual({
      window: '7d', days: 7, from: new Date(Date.now() - 6 * DAY).toISOString().slice(0, 10), to: today, currency: 'usd',
      orders: 1, units: 1, grossCents: 4900, refundsCents: 1000, netCents: 3900, otherCurrencies: [{ currency: 'eur', orders: 1 }],
    });
    expect(d30).toMatchObject({ orders: 2, units: 2, grossCents: 8800, refundsCents: 1000, netCents: 7800, otherCurrencies: [{ currency: 'eur', orders: 1 }] });
    expect(d90).toMatchObject({ orders: 2, grossCents: 8800 });
    expect(d365).toMatchObject({ orders: 3, grossCents: 13700, refundsCents: 1000, netCents: 12700 });

    const kinds = (d.recentActivity as Json[]).map((a) => a.kind);
    expect(kinds.filter((k) => k === 'sale')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'refund')).toHaveLength(1);
    const refund = (d.recentActivity as Json[]).find((a) => a.kind === 'refund')!;
    expect(refund).toEqual({ kind: 'refund', occurredAt: expect.any(String), orderId: ws.ids.orders.o2, orderItemId: expect.any(Number), currency: 'usd', refundedCents: 1000, refundStatus: expect.any(String) });
    const times = (d.recentActivity as Json[]).map((a) => Date.parse(a.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(d.storefrontDestination).toEqual({ url: '', kind: 'none' });
  });

  it('gives each of the 16 permission combinations the full answer with exactly its unreadable sections emptied', async () => {
    const ws = await workspaceWithEverything();
    await get(ws, '/dashboard'); // provisions the credentials once
    const full = await get(ws, '/dashboard');
    for (let mask = 0; mask < 16; mask += 1) {
      const [analytics, reviews, files, credentials] = [0, 1, 2, 3].map((bit) => Boolean(mask & (1 << bit))) as [boolean, boolean, boolean, boolean];
      const d = await get(ws, '/dashboard', ws.tokens[`m${mask}`]!);
      expect(d, `mask ${mask}`).toEqual(expectedFor(full, { analytics, reviews, files, credentials }));
    }
  });

  it('answers 404 for a product of another workspace and for one outside the caller’s products, reading nothing of it', async () => {
    const ws = await workspaceWithEverything();
    const other = await seedWorkspace(ctx(), { members: [{ key: 'p2only', permissions: ['products.view', 'analytics.view'], products: ['p2'] }] });
    const foreign = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/dashboard`, headers: bearer(other.owner) });
    expect(foreign.statusCode).toBe(404);
    const outside = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${other.ids.products.p1}/dashboard`, headers: bearer(other.tokens.p2only!) });
    expect(outside.statusCode).toBe(404);
    const missing = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/2147483647/dashboard`, headers: bearer(ws.owner) });
    expect(missing.statusCode).toBe(404);
  });
});
