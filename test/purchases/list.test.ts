import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { findPurchases } from '../../src/modules/purchases/purchases.repo.js';
import { PurchaseRow } from '../../src/modules/purchases/purchases.schemas.js';
import { toPurchaseRow } from '../../src/modules/purchases/purchases.service.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { formatMajorUnits, majorUnitsSql } from '../../src/platform/money/money.js';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, labeller, MEMBERS, PURCHASES, SHOP_ORDER, seedShop } from './purchases-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

describe('GET /api/developer/purchases: rows and paging', () => {
  it('returns one row per order item with every documented field', async () => {
    const ws = await seedShop(ctx);
    const { rows, total, page, pageSize } = await api.list(ws.owner);
    expect({ total, page, pageSize }).toEqual({ total: 7, page: 1, pageSize: 50 });
    const byLabel = Object.fromEntries(labeller(ws.ids.orderItems)(rows).map((label, i) => [label, rows[i]!]));

    expect(byLabel.o1).toEqual({
      order_id: ws.ids.orders.o1,
      order_item_id: ws.ids.orderItems.o1![0],
      product_id: ws.ids.products.p1,
      product: `Product p1 ${ws.suffix}`,
      customer_id: ws.ids.customers.ann,
      email: 'ann.lee@buyers.test',
      first_name: 'Ann',
      last_name: 'Lee',
      status: 'paid',
      invoice_available: true,
      channel: 'managed_checkout',
      provider: 'card-provider',
      reseller_id: null,
      reseller: null,
      record_type: 'sale',
      refund_status: 'none',
      currency: 'usd',
      price_cents: 4999,
      sale_price_cents: 3999,
      refunded_cents: 0,
      price: '49.99',
      sale_price: '39.99',
      order_reference: 'PB-1001',
      external_reference: 'CHK-555',
      serial_id: ws.ids.serials.s1,
      serial_code: ws.serialCodes.s1,
      customer_portal_hidden: false,
      can_refund: true,
      purchased_at: '2026-01-10T10:00:00.000Z',
    });
    expect(byLabel.o3).toMatchObject({
      channel: 'import',
      status: 'imported',
      provider: 'gumroad',
      reseller_id: ws.ids.resellerIds.r1,
      reseller: 'Alpha Store',
      record_type: 'free',
      price_cents: 1500,
      sale_price_cents: 0,
      price: '15.00',
      sale_price: '0.00',
      external_reference: 'GUM-77',
      serial_id: null,
      serial_code: null,
      invoice_available: false,
      can_refund: false,
    });
    expect(byLabel.o4).toMatchObject({
      channel: 'external_store',
      status: 'paid',
      provider: 'paddle',
      reseller: 'Beta Market',
      refund_status: 'partial',
      sale_price_cents: 7900,
      refunded_cents: 900,
      // Paid, but not through the managed checkout: no invoice and nothing to refund here.
      invoice_available: false,
      can_refund: false,
    });
    expect(byLabel.o2).toMatchObject({ refund_status: 'full', refunded_cents: 2500, invoice_available: true, can_refund: false });
    expect(byLabel.o5).toMatchObject({ channel: 'manual_grant', status: 'granted', provider: 'manual', record_type: 'grant', sale_price: '0.00', invoice_available: false });
    expect(byLabel['o6#0']).toMatchObject({ status: 'pending', invoice_available: false, can_refund: false });
    expect(byLabel['o6#1']).toMatchObject({ record_type: 'subscription', price: '12.00', order_reference: 'PB-1006', external_reference: null });
  });

  it('shows the customer-portal visibility of the order', async () => {
    const ws = await seedShop(ctx);
    await sql`update orders set customer_portal_hidden = true where workspace_id = ${ws.workspaceId} and id = ${ws.ids.orders.o6}`.execute(ctx().database.db);
    const { rows } = await api.list(ws.owner);
    const hidden = rows.filter((r) => r.customer_portal_hidden).map((r) => r.order_id);
    expect(hidden).toEqual([ws.ids.orders.o6, ws.ids.orders.o6]);
  });

  it('writes amounts of zero- and three-decimal currencies in their own major units', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      orders: [
        { key: 'yen', customer: 'c', currency: 'JPY', purchasedAt: '2026-01-02T00:00:00Z', items: [{ product: 'p1', priceCents: 4900 }] },
        { key: 'dinar', customer: 'c', currency: 'kwd', purchasedAt: '2026-01-01T00:00:00Z', items: [{ product: 'p1', priceCents: 4900 }] },
      ],
    });
    const { rows } = await api.list(ws.owner);
    expect(rows.map((r) => [r.currency, r.price_cents, r.price])).toEqual([
      ['jpy', 4900, '4900'],
      ['kwd', 4900, '4.900'],
    ]);
  });

  it('lists the newest purchase first, items of one order by id descending', async () => {
    const ws = await seedShop(ctx);
    const { rows } = await api.list(ws.owner);
    expect(labeller(ws.ids.orderItems)(rows)).toEqual(SHOP_ORDER);
    const times = rows.map((r) => r.purchased_at);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('pages with page and limit and reports the total of all matches', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const pages = await Promise.all([1, 2, 3, 4].map((page) => api.list(ws.owner, { limit: 3, page })));
    expect(pages.map((p) => [p.page, p.pageSize, p.total, p.rows.length])).toEqual([
      [1, 3, 7, 3],
      [2, 3, 7, 3],
      [3, 3, 7, 1],
      [4, 3, 7, 0],
    ]);
    expect(pages.flatMap((p) => label(p.rows))).toEqual(SHOP_ORDER);

    const filtered = await api.list(ws.owner, { channel: 'managed_checkout', limit: 1, page: 2 });
    expect(filtered.total).toBe(4);
    expect(label(filtered.rows)).toEqual(['o6#0']);
  });

  it('answers an empty page for a workspace without purchases', async () => {
    const ws = await seedWorkspace(ctx());
    expect(await api.list(ws.owner)).toEqual({ rows: [], total: 0, page: 1, pageSize: 50, canRefund: false });
  });
});

describe('GET /api/developer/purchases: canRefund', () => {
  const refundCases = async () =>
    seedWorkspace(ctx(), {
      members: [
        MEMBERS.viewer,
        MEMBERS.refunder,
        { key: 'refundOnly', permissions: ['purchases.refund'], products: 'all' },
        { key: 'wildcard', permissions: ['*'], products: 'all' },
      ],
      customers: [{ key: 'c' }],
      orders: [
        { key: 'paid', customer: 'c', purchasedAt: '2026-01-09T00:00:00Z', items: [{ product: 'p1', priceCents: 1000 }] },
        { key: 'partial', customer: 'c', purchasedAt: '2026-01-08T00:00:00Z', items: [{ product: 'p1', priceCents: 1000, refundedCents: 1 }] },
        { key: 'full', customer: 'c', purchasedAt: '2026-01-07T00:00:00Z', items: [{ product: 'p1', priceCents: 1000, refundedCents: 1000 }] },
        { key: 'pending', customer: 'c', status: 'pending', purchasedAt: '2026-01-06T00:00:00Z', items: [{ product: 'p1', priceCents: 1000 }] },
        { key: 'cancelled', customer: 'c', status: 'cancelled', purchasedAt: '2026-01-05T00:00:00Z', items: [{ product: 'p1', priceCents: 1000 }] },
        { key: 'store', customer: 'c', channel: 'external_store', purchasedAt: '2026-01-04T00:00:00Z', items: [{ product: 'p1', priceCents: 1000 }] },
        { key: 'imported', customer: 'c', channel: 'import', status: 'imported', purchasedAt: '2026-01-03T00:00:00Z', items: [{ product: 'p1', priceCents: 1000 }] },
        { key: 'granted', customer: 'c', channel: 'manual_grant', status: 'granted', purchasedAt: '2026-01-02T00:00:00Z', items: [{ product: 'p1', recordType: 'grant' }] },
        {
          key: 'mixed', customer: 'c', purchasedAt: '2026-01-01T00:00:00Z',
          items: [{ product: 'p1', priceCents: 1000, refundedCents: 1000 }, { product: 'p2', priceCents: 1000 }],
        },
      ],
    });
  const refundable = ['paid', 'partial', 'mixed#1'];

  it('marks paid managed-checkout items that are not fully refunded for a caller who holds purchases.refund', async () => {
    const ws = await refundCases();
    const label = labeller(ws.ids.orderItems);
    for (const token of [ws.owner, ws.tokens.refunder!, ws.tokens.wildcard!]) {
      const body = await api.list(token);
      expect(body.canRefund).toBe(true);
      const marked = body.rows.filter((r) => r.can_refund);
      expect(label(marked).sort()).toEqual([...refundable].sort());
    }
  });

  it('marks nothing for a member who may view but not refund', async () => {
    const ws = await refundCases();
    const body = await api.list(ws.tokens.viewer!);
    expect(body.rows).toHaveLength(10);
    expect(body.canRefund).toBe(false);
    expect(body.rows.every((r) => r.can_refund === false)).toBe(true);
    // The invoice flag does not depend on the refund permission.
    expect(body.rows.filter((r) => r.invoice_available)).toHaveLength(5);
  });

  it('answers canRefund false for a page without a refundable row', async () => {
    const ws = await refundCases();
    expect((await api.list(ws.owner, { channel: 'import,manual_grant,external_store' })).canRefund).toBe(false);
    expect((await api.list(ws.owner, { refundStatus: 'full' })).canRefund).toBe(false);
    // Page 2 of one row each: the second-newest item (partial) is refundable, the fourth (pending) is not.
    expect((await api.list(ws.owner, { limit: 1, page: 2 })).canRefund).toBe(true);
    expect((await api.list(ws.owner, { limit: 1, page: 4 })).canRefund).toBe(false);
  });

  it('refuses purchases.refund without purchases.view', async () => {
    const ws = await refundCases();
    expectProblem(await api.listRaw(ws.tokens.refundOnly!), 403, 'FORBIDDEN');
  });
});

describe('GET /api/developer/purchases: each filter alone', () => {
  it('filters by channel, one or several', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { channel: 'managed_checkout' })).rows)).toEqual(['o6#1', 'o6#0', 'o2', 'o1']);
    expect(label((await api.list(ws.owner, { channel: 'import,manual_grant' })).rows)).toEqual(['o5', 'o3']);
    expect(label((await api.list(ws.owner, { channel: 'external_store' })).rows)).toEqual(['o4']);
    // Repeating a value changes nothing.
    expect((await api.list(ws.owner, { channel: 'import,import' })).total).toBe(1);
  });

  it('filters by productIds and productId, which intersect', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const { p1, p2, p3 } = ws.ids.products as { p1: number; p2: number; p3: number };
    expect(label((await api.list(ws.owner, { productIds: `${p1}` })).rows)).toEqual(['o6#0', 'o3', 'o1']);
    expect(label((await api.list(ws.owner, { productIds: `${p1},${p3}` })).rows)).toEqual(['o6#1', 'o6#0', 'o4', 'o3', 'o1']);
    expect(label((await api.list(ws.owner, { productId: p2 })).rows)).toEqual(['o5', 'o2']);
    expect(label((await api.list(ws.owner, { productIds: `${p1},${p2}`, productId: p2 })).rows)).toEqual(['o5', 'o2']);
    expect((await api.list(ws.owner, { productIds: `${p1}`, productId: p2 })).total).toBe(0);
    // An id that is no product of this workspace matches nothing.
    expect((await api.list(ws.owner, { productIds: '2147483647' })).total).toBe(0);
  });

  it('filters by reseller id, or none for direct sales', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { resellerId: ws.ids.resellerIds.r1 })).rows)).toEqual(['o3']);
    expect(label((await api.list(ws.owner, { resellerId: ws.ids.resellerIds.r2 })).rows)).toEqual(['o4']);
    expect((await api.list(ws.owner, { resellerId: ws.ids.resellerIds.r3 })).total).toBe(0);
    expect(label((await api.list(ws.owner, { resellerId: 'none' })).rows)).toEqual(['o6#1', 'o6#0', 'o5', 'o2', 'o1']);
  });

  it('filters by provider, case-insensitively, one or several', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { provider: 'GumRoad' })).rows)).toEqual(['o3']);
    expect(label((await api.list(ws.owner, { provider: 'gumroad,PADDLE' })).rows)).toEqual(['o4', 'o3']);
    expect((await api.list(ws.owner, { provider: 'card-provider' })).total).toBe(4);
    expect(label((await api.list(ws.owner, { provider: 'manual' })).rows)).toEqual(['o5']);
    expect((await api.list(ws.owner, { provider: 'stripe' })).total).toBe(0);
  });

  it('filters by refund status, one or several', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { refundStatus: 'full' })).rows)).toEqual(['o2']);
    expect(label((await api.list(ws.owner, { refundStatus: 'partial' })).rows)).toEqual(['o4']);
    expect(label((await api.list(ws.owner, { refundStatus: 'partial,full' })).rows)).toEqual(['o4', 'o2']);
    expect(label((await api.list(ws.owner, { refundStatus: 'none' })).rows)).toEqual(['o6#1', 'o6#0', 'o5', 'o3', 'o1']);
  });

  it('filters by record type, one or several', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { recordType: 'sale' })).rows)).toEqual(['o6#0', 'o4', 'o2', 'o1']);
    expect(label((await api.list(ws.owner, { recordType: 'free' })).rows)).toEqual(['o3']);
    expect(label((await api.list(ws.owner, { recordType: 'grant' })).rows)).toEqual(['o5']);
    expect(label((await api.list(ws.owner, { recordType: 'subscription,free' })).rows)).toEqual(['o6#1', 'o3']);
  });

  it('takes dateFrom as the start of a UTC day or an exact instant, inclusive', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const from = async (dateFrom: string) => label((await api.list(ws.owner, { dateFrom })).rows);
    expect(await from('2026-03-01')).toEqual(['o6#1', 'o6#0', 'o5', 'o4', 'o3']);
    expect(await from('2026-03-02')).toEqual(['o6#1', 'o6#0', 'o5', 'o4']);
    expect(await from('2026-03-02T00:00:00Z')).toEqual(['o6#1', 'o6#0', 'o5', 'o4']);
    expect(await from('2026-03-02T00:00:00.001Z')).toEqual(['o6#1', 'o6#0', 'o5']);
    // 01:00 at +02:00 is 23:00 UTC the day before.
    expect(await from('2026-03-02T01:00:00+02:00')).toEqual(['o6#1', 'o6#0', 'o5', 'o4', 'o3']);
    expect(await from('2026-06-01')).toEqual([]);
  });

  it('takes dateTo as the whole UTC day or an exact instant, inclusive', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const to = async (dateTo: string) => label((await api.list(ws.owner, { dateTo })).rows);
    // o3 at 23:59:59 belongs to 2026-03-01.
    expect(await to('2026-03-01')).toEqual(['o3', 'o2', 'o1']);
    expect(await to('2026-03-01T23:59:59Z')).toEqual(['o3', 'o2', 'o1']);
    expect(await to('2026-03-01T23:59:58.999Z')).toEqual(['o2', 'o1']);
    expect(await to('2026-03-02T00:00:00Z')).toEqual(['o4', 'o3', 'o2', 'o1']);
    expect(await to('2026-03-01T22:00:00-02:00')).toEqual(['o4', 'o3', 'o2', 'o1']);
    expect(await to('2026-01-09')).toEqual([]);
  });

  it('accepts a range of one day or of one instant', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    expect(label((await api.list(ws.owner, { dateFrom: '2026-03-01', dateTo: '2026-03-01' })).rows)).toEqual(['o3']);
    const instant = '2026-03-02T00:00:00Z';
    expect(label((await api.list(ws.owner, { dateFrom: instant, dateTo: instant })).rows)).toEqual(['o4']);
  });

  it('filters by an explicit dateRange of inclusive UTC days, either side open', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const range = async (dateRange: string) => label((await api.list(ws.owner, { dateRange })).rows);
    expect(await range('2026-03-01..2026-03-02')).toEqual(['o4', 'o3']);
    expect(await range('..2026-02-15')).toEqual(['o2', 'o1']);
    expect(await range('2026-04-20..')).toEqual(['o6#1', 'o6#0', 'o5']);
    expect(await range('all')).toEqual(SHOP_ORDER);
  });

  it('filters by a rolling dateRange ending now', async () => {
    const now = Date.now();
    const daysAgo = (d: number) => new Date(now - d * 86_400_000).toISOString();
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      orders: [
        { key: 'd1', customer: 'c', purchasedAt: daysAgo(1), items: [{ product: 'p1', priceCents: 100 }] },
        { key: 'd10', customer: 'c', purchasedAt: daysAgo(10), items: [{ product: 'p1', priceCents: 100 }] },
        { key: 'd60', customer: 'c', purchasedAt: daysAgo(60), items: [{ product: 'p1', priceCents: 100 }] },
        { key: 'd200', customer: 'c', purchasedAt: daysAgo(200), items: [{ product: 'p1', priceCents: 100 }] },
        { key: 'd400', customer: 'c', purchasedAt: daysAgo(400), items: [{ product: 'p1', priceCents: 100 }] },
      ],
    });
    const label = labeller(ws.ids.orderItems);
    const range = async (dateRange: string) => label((await api.list(ws.owner, { dateRange })).rows);
    expect(await range('7d')).toEqual(['d1']);
    expect(await range('30d')).toEqual(['d1', 'd10']);
    expect(await range('90d')).toEqual(['d1', 'd10', 'd60']);
    expect(await range('365d')).toEqual(['d1', 'd10', 'd60', 'd200']);
    expect(await range('all')).toEqual(['d1', 'd10', 'd60', 'd200', 'd400']);
    // dateRange and dateFrom/dateTo both apply: the window is their intersection.
    expect(label((await api.list(ws.owner, { dateRange: '90d', dateTo: daysAgo(5) })).rows)).toEqual(['d10', 'd60']);
  });

  it('searches customer e-mail and name by substring, case-insensitively', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const search = async (term: string) => label((await api.list(ws.owner, { search: term })).rows);
    expect(await search('STONE')).toEqual(['o4', 'o3']);
    expect(await search('ann.lee@')).toEqual(['o2', 'o1']);
    expect(await search('iaz')).toEqual(['o6#1', 'o6#0', 'o5']);
    expect(await search('buyers.test')).toEqual(SHOP_ORDER);
    expect(await search('  bob  ')).toEqual(['o4', 'o3']);
    expect(await search('nobody')).toEqual([]);
  });

  it('searches order and external references by prefix, case-insensitively', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const search = async (term: string) => label((await api.list(ws.owner, { search: term })).rows);
    expect(await search('pb-1006')).toEqual(['o6#1', 'o6#0']);
    expect(await search('PB-100')).toEqual(SHOP_ORDER);
    expect(await search('gum')).toEqual(['o3']);
    expect(await search('CHK-5')).toEqual(['o1']);
    // References match from their start only.
    expect(await search('1006')).toEqual([]);
    expect(await search('555')).toEqual([]);
  });

  it('treats LIKE wildcards in a search as literal characters', async () => {
    const ws = await seedShop(ctx);
    expect((await api.list(ws.owner, { search: '%' })).total).toBe(0);
    expect((await api.list(ws.owner, { search: '_' })).total).toBe(0);
    expect((await api.list(ws.owner, { search: 'PB_1' })).total).toBe(0);
    expect((await api.list(ws.owner, { search: 'ann%lee' })).total).toBe(0);
  });
});

describe('GET /api/developer/purchases: combined filters', () => {
  it('applies every given filter together', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const { p1, p2, p3 } = ws.ids.products as { p1: number; p2: number; p3: number };
    const list = async (query: Record<string, string | number>) => label((await api.list(ws.owner, query)).rows);

    expect(await list({ channel: 'managed_checkout', refundStatus: 'none' })).toEqual(['o6#1', 'o6#0', 'o1']);
    expect(await list({ channel: 'managed_checkout', refundStatus: 'none', productIds: `${p1}` })).toEqual(['o6#0', 'o1']);
    expect(await list({ channel: 'managed_checkout', refundStatus: 'none', productIds: `${p1}`, dateFrom: '2026-05-01' })).toEqual(['o6#0']);
    expect(await list({ provider: 'gumroad,paddle', resellerId: ws.ids.resellerIds.r2! })).toEqual(['o4']);
    expect(await list({ search: 'stone', recordType: 'free' })).toEqual(['o3']);
    expect(await list({ search: 'ann', dateTo: '2026-01-31' })).toEqual(['o1']);
    expect(await list({ search: 'pb-100', channel: 'manual_grant,import', productIds: `${p2},${p3}` })).toEqual(['o5']);
    expect(
      await list({ productId: p1, resellerId: 'none', channel: 'managed_checkout', recordType: 'sale', dateRange: '2026-01-01..2026-12-31' }),
    ).toEqual(['o6#0', 'o1']);
    expect(await list({ dateRange: '2026-01-01..2026-03-31', dateFrom: '2026-02-01', refundStatus: 'partial,full' })).toEqual(['o4', 'o2']);
    expect(await list({ channel: 'import', refundStatus: 'full' })).toEqual([]);
  });

  it('counts the total of the combined filters', async () => {
    const ws = await seedShop(ctx);
    const body = await api.list(ws.owner, { channel: 'managed_checkout,external_store', resellerId: 'none', limit: 1 });
    expect(body.total).toBe(4);
    expect(body.rows).toHaveLength(1);
  });
});

describe('GET /api/developer/purchases: scope', () => {
  it('shows a product-scoped member only purchases of their products', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.scoped] });
    const label = labeller(ws.ids.orderItems);
    const body = await api.list(ws.tokens.scoped!);
    expect(label(body.rows)).toEqual(['o6#0', 'o3', 'o1']);
    expect(body.total).toBe(3);
    expect(body.rows.every((r) => r.product_id === ws.ids.products.p1)).toBe(true);
  });

  it('never widens a product-scoped member through filters', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.scoped, { key: 'two', permissions: ['purchases.view'], products: ['p1', 'p3'] }] });
    const label = labeller(ws.ids.orderItems);
    const { p1, p2, p3 } = ws.ids.products as { p1: number; p2: number; p3: number };
    const scoped = ws.tokens.scoped!;
    for (const query of [{ productIds: `${p2}` }, { productId: p2 }, { productIds: `${p2},${p3}` }, { search: 'PB-1002' }, { resellerId: ws.ids.resellerIds.r2! }, { channel: 'manual_grant' }]) {
      const body = await api.list(scoped, query);
      expect({ query, total: body.total, rows: body.rows.length }).toEqual({ query, total: 0, rows: 0 });
    }
    expect(label((await api.list(scoped, { productIds: `${p1},${p2}` })).rows)).toEqual(['o6#0', 'o3', 'o1']);
    expect(label((await api.list(scoped, { search: 'buyers' })).rows)).toEqual(['o6#0', 'o3', 'o1']);
    expect(label((await api.list(ws.tokens.two!, { productIds: `${p2},${p3}` })).rows)).toEqual(['o6#1', 'o4']);
  });

  it('does not return purchases of another workspace', async () => {
    const mine = await seedShop(ctx);
    const theirs = await seedShop(ctx);
    const label = labeller(mine.ids.orderItems);
    const body = await api.list(mine.owner);
    expect(label(body.rows)).toEqual(SHOP_ORDER);
    expect(body.total).toBe(7);
    // Their ids and references, used as filters, find nothing of theirs.
    const theirItems = new Set(Object.values(theirs.ids.orderItems).flat());
    for (const query of [
      { productIds: `${theirs.ids.products.p1}` },
      { productId: theirs.ids.products.p2! },
      { resellerId: theirs.ids.resellerIds.r1! },
      { search: 'PB-1001' },
      { search: 'bob.stone' },
    ]) {
      const rows = (await api.list(mine.owner, query)).rows;
      expect(rows.some((r) => theirItems.has(r.order_item_id))).toBe(false);
    }
    expect((await api.list(mine.owner, { productIds: `${theirs.ids.products.p1}` })).total).toBe(0);
    expect((await api.list(mine.owner, { resellerId: theirs.ids.resellerIds.r1! })).total).toBe(0);
    expect(label((await api.list(mine.owner, { search: 'PB-1001' })).rows)).toEqual(['o1']);
  });
});

describe('GET /api/developer/purchases: validation and access', () => {
  it.each([
    ['an unknown channel', 'channel=refund'],
    ['an empty list item', 'channel=import,'],
    ['a product id that is not a number', 'productIds=abc'],
    ['a product id of zero', 'productIds=0'],
    ['a product id list with a gap', 'productIds=1,,2'],
    ['more than 100 product ids', `productIds=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`],
    ['a productId that is not a number', 'productId=one'],
    ['a reseller id that is not a number or none', 'resellerId=all'],
    ['a reseller id of zero', 'resellerId=0'],
    ['a provider that is not a slug', 'provider=-card'],
    ['a provider with a space', 'provider=card%20provider'],
    ['an unknown refund status', 'refundStatus=refunded'],
    ['an unknown record type', 'recordType=gift'],
    ['a date without zero padding', 'dateFrom=2026-1-1'],
    ['a word for a date', 'dateTo=yesterday'],
    ['a date-time without a zone', 'dateFrom=2026-01-01T10:00:00'],
    ['an unknown dateRange', 'dateRange=soon'],
    ['a dateRange start after its end', 'dateRange=2026-03-02..2026-03-01'],
    ['a calendar-invalid day in dateRange', 'dateRange=2026-02-30..'],
    ['a limit of zero', 'limit=0'],
    ['a limit above the maximum', 'limit=501'],
    ['page zero', 'page=0'],
    ['an unknown parameter', 'sort=asc'],
  ])('refuses %s with 400 VALIDATION_FAILED', async (_name, query) => {
    const ws = await seedWorkspace(ctx());
    const body = expectProblem(await api.listRaw(ws.owner, query), 400, 'VALIDATION_FAILED');
    expect(body.errors?.length).toBeGreaterThan(0);
  });

  it.each([
    ['dateTo before dateFrom', 'dateFrom=2026-03-02&dateTo=2026-03-01', 'dateTo'],
    ['an instant dateTo before an instant dateFrom', 'dateFrom=2026-03-02T00:00:00Z&dateTo=2026-03-01T23:59:59Z', 'dateTo'],
    ['a calendar-invalid dateFrom', 'dateFrom=2026-02-30', 'dateFrom'],
    ['a calendar-invalid dateTo', 'dateTo=2026-13-01', 'dateTo'],
    ['a calendar-invalid day in a date-time', 'dateFrom=2026-02-30T10:00:00Z', 'dateFrom'],
    ['an impossible time of day', 'dateTo=2026-02-01T25:00:00Z', 'dateTo'],
    ['a product id beyond the integer range', 'productIds=9999999999', 'productIds'],
    ['a reseller id beyond the integer range', 'resellerId=9999999999', 'resellerId'],
  ])('refuses %s with 400 INVALID_FILTER', async (_name, query, parameter) => {
    const ws = await seedWorkspace(ctx());
    const body = expectProblem(await api.listRaw(ws.owner, query), 400, 'INVALID_FILTER');
    expect(body.errors).toEqual([expect.objectContaining({ path: `querystring/${parameter}` })]);
  });

  it('refuses a request without a token or with a bad one', async () => {
    await seedWorkspace(ctx());
    expectProblem(await api.listRaw(undefined), 401, 'UNAUTHENTICATED');
    expectProblem(await api.listRaw('not-a-jwt'), 401, 'UNAUTHENTICATED');
    expectProblem(await ctx().app.inject({ method: 'GET', url: PURCHASES, headers: { authorization: 'Basic abc' } }), 401, 'UNAUTHENTICATED');
  });

  it('refuses a member without purchases.view', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.outsider, { key: 'manageOnly', permissions: ['purchases.manage'], products: 'all' }] });
    expectProblem(await api.listRaw(ws.tokens.outsider!), 403, 'FORBIDDEN');
    expectProblem(await api.listRaw(ws.tokens.manageOnly!), 403, 'FORBIDDEN');
  });
});

// The list's rows are written by PostgreSQL as JSON (purchases.repo.ts `rowJson`); every other answer with purchase
// rows (grants) goes through toPurchaseRow. The two must answer the same row, field for field and in the same order.
describe('GET /api/developer/purchases: rows written by the database', () => {
  it('answers each row exactly as toPurchaseRow writes it, fields in the schema order, with and without purchases.refund', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.viewer] });
    const itemIds = Object.values(ws.ids.orderItems).flat();
    const records = await findPurchases(ctx().database.db, operatorScope(ws.workspaceId, ws.ids.accounts.owner!), itemIds);
    for (const [token, mayRefund] of [
      [ws.owner, true],
      [ws.tokens.viewer!, false],
    ] as const) {
      const res = await api.listRaw(token);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { rows: Array<Record<string, unknown>>; canRefund: boolean };
      expect(body.rows.length).toBe(records.length);
      for (const row of body.rows) {
        const expected = toPurchaseRow(records.find((r) => r.id === row.order_item_id)!, mayRefund);
        expect(row).toEqual(expected);
        expect(Object.keys(row)).toEqual(Object.keys(PurchaseRow.properties));
      }
      expect(body.canRefund).toBe(body.rows.some((r) => r.can_refund));
      expect(Object.keys(body)).toEqual(['rows', 'total', 'page', 'pageSize', 'canRefund']);
    }
  });

  it('writes major units in SQL as formatMajorUnits does, for every kind of currency and sign', async () => {
    const amounts = [0, 1, 5, 9, 10, 99, 100, 101, 4999, 100000, 123456789, -1, -5, -100, -4999];
    const currencies = ['usd', 'eur', 'jpy', 'krw', 'kwd', 'bhd', 'USD', 'JPY'];
    const cases = currencies.flatMap((currency) => amounts.map((minor) => ({ currency, minor })));
    const result = await sql<{ text: string }>`
      select ${sql.raw(majorUnitsSql('t.minor', 't.currency'))} as text
      from unnest(${cases.map((c) => c.minor)}::bigint[], ${cases.map((c) => c.currency.padEnd(3))}::char(3)[]) with ordinality as t(minor, currency, n)
      order by t.n`.execute(ctx().database.db);
    expect(result.rows.map((r) => r.text)).toEqual(cases.map((c) => formatMajorUnits(c.minor, c.currency)));
  });
});
