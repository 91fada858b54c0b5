import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, csvRecords, expectProblem, insertBulkItems, labeller, MEMBERS, parseCsv, SHOP_ORDER, seedShop } from './purchases-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const COLUMNS = [
  'order_id',
  'order_item_id',
  'purchased_at',
  'customer_id',
  'email',
  'first_name',
  'last_name',
  'product_id',
  'product',
  'status',
  'channel',
  'provider',
  'reseller_id',
  'reseller',
  'record_type',
  'refund_status',
  'currency',
  'price',
  'sale_price',
  'refunded',
  'order_reference',
  'external_reference',
  'serial_code',
  'invoice_available',
];

describe('GET /api/developer/purchases/export', () => {
  it('answers a CSV attachment with the documented columns, newest purchase first', async () => {
    const ws = await seedShop(ctx);
    const res = await api.exportRaw(ws.owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="purchases-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual(COLUMNS);
    const records = csvRecords(rows);
    expect(labeller(ws.ids.orderItems)(records)).toEqual(SHOP_ORDER);

    const byItem = new Map(records.map((r) => [Number(r.order_item_id), r]));
    expect(byItem.get(ws.ids.orderItems.o1![0]!)).toEqual({
      order_id: String(ws.ids.orders.o1),
      order_item_id: String(ws.ids.orderItems.o1![0]),
      purchased_at: '2026-01-10T10:00:00.000Z',
      customer_id: String(ws.ids.customers.ann),
      email: 'ann.lee@buyers.test',
      first_name: 'Ann',
      last_name: 'Lee',
      product_id: String(ws.ids.products.p1),
      product: `Product p1 ${ws.suffix}`,
      status: 'paid',
      channel: 'managed_checkout',
      provider: 'card-provider',
      reseller_id: '',
      reseller: '',
      record_type: 'sale',
      refund_status: 'none',
      currency: 'usd',
      price: '49.99',
      sale_price: '39.99',
      refunded: '0.00',
      order_reference: 'PB-1001',
      external_reference: 'CHK-555',
      serial_code: ws.serialCodes.s1,
      invoice_available: 'true',
    });
    expect(byItem.get(ws.ids.orderItems.o4![0]!)).toMatchObject({
      channel: 'external_store',
      provider: 'paddle',
      reseller_id: String(ws.ids.resellerIds.r2),
      reseller: 'Beta Market',
      refund_status: 'partial',
      price: '99.00',
      sale_price: '79.00',
      refunded: '9.00',
      invoice_available: 'false',
    });
  });

  it('answers only the header when nothing matches', async () => {
    const ws = await seedWorkspace(ctx());
    const rows = await api.export(ws.owner);
    expect(rows).toEqual([COLUMNS]);
  });

  it('streams every matching row, not one page, across export batches', async () => {
    const ws = await seedShop(ctx);
    // 2,100 items over the 2,000-row batch boundary, all at one instant, so the keyset must break ties by id.
    await insertBulkItems(ctx, {
      workspaceId: ws.workspaceId,
      orderId: ws.ids.orders.o1!,
      productId: ws.ids.products.p2!,
      customerId: ws.ids.customers.ann!,
      count: 2_100,
      start: '2025-12-31T00:00:00Z',
      step: '0 seconds',
    });
    const records = csvRecords(await api.export(ws.owner));
    expect(records).toHaveLength(2_107);
    const ids = records.map((r) => Number(r.order_item_id));
    expect(new Set(ids).size).toBe(2_107);
    expect(labeller(ws.ids.orderItems)(records.slice(0, 7))).toEqual(SHOP_ORDER);
    // Same instant: id descending.
    const bulk = ids.slice(7);
    expect(bulk).toEqual([...bulk].sort((a, b) => b - a));

    const filtered = csvRecords(await api.export(ws.owner, { productIds: `${ws.ids.products.p2}`, refundStatus: 'none' }));
    expect(filtered).toHaveLength(2_101);
  });

  it('keeps every row when purchase times carry microseconds', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c' }] });
    // A JavaScript Date holds milliseconds only; a cursor built from one skipped the rows in between (fixed in purchaseBatches).
    await insertBulkItems(ctx, {
      workspaceId: ws.workspaceId,
      orderId: ws.ids.orders.o!,
      productId: ws.ids.products.p1!,
      customerId: ws.ids.customers.c!,
      count: 2_050,
      start: '2026-01-01T00:00:00.000999Z',
      step: '1 microsecond',
    });
    const records = csvRecords(await api.export(ws.owner));
    expect(records).toHaveLength(2_050);
    expect(new Set(records.map((r) => r.order_item_id)).size).toBe(2_050);
    const list = await api.list(ws.owner);
    expect(list.total).toBe(2_050);
  });

  it('applies the list filters', async () => {
    const ws = await seedShop(ctx);
    const label = labeller(ws.ids.orderItems);
    const exported = async (query: Record<string, string | number>) => label(csvRecords(await api.export(ws.owner, query)));
    const listed = async (query: Record<string, string | number>) => label((await api.list(ws.owner, query)).rows);
    const queries: Array<Record<string, string | number>> = [
      { channel: 'managed_checkout' },
      { productIds: `${ws.ids.products.p1},${ws.ids.products.p3}` },
      { productId: ws.ids.products.p2! },
      { resellerId: 'none' },
      { resellerId: ws.ids.resellerIds.r1! },
      { provider: 'PADDLE,gumroad' },
      { refundStatus: 'partial,full' },
      { recordType: 'free,grant' },
      { dateFrom: '2026-03-01', dateTo: '2026-04-20' },
      { dateRange: '..2026-02-15' },
      { search: 'stone' },
      { search: 'pb-1006' },
      { channel: 'managed_checkout', refundStatus: 'none', productIds: `${ws.ids.products.p1}` },
    ];
    for (const query of queries) {
      const rows = await exported(query);
      expect({ query, rows }).toEqual({ query, rows: await listed(query) });
      expect(rows.length).toBeLessThan(SHOP_ORDER.length);
    }
    expect(await exported({ search: 'stone', recordType: 'free' })).toEqual(['o3']);
  });

  it('neutralises spreadsheet formulas in text cells', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c', email: 'formula@buyers.test', firstName: '=HYPERLINK("http://evil")', lastName: '+SUM(A1)' }],
      resellers: [{ key: 'r', name: '@evil store' }],
      orders: [{ key: 'o', customer: 'c', reference: '-2+3', externalReference: '=cmd|calc', reseller: 'r', items: [{ product: 'p1', priceCents: 100 }] }],
    });
    const [record] = csvRecords(await api.export(ws.owner));
    expect(record).toMatchObject({
      first_name: `'=HYPERLINK("http://evil")`,
      last_name: `'+SUM(A1)`,
      reseller: `'@evil store`,
      order_reference: `'-2+3`,
      external_reference: `'=cmd|calc`,
      // Numbers are written as numbers.
      price: '1.00',
      email: 'formula@buyers.test',
    });
    // The list answers the data unchanged; only the spreadsheet export is defended.
    const [row] = (await api.list(ws.owner)).rows;
    expect(row).toMatchObject({ first_name: '=HYPERLINK("http://evil")', external_reference: '=cmd|calc' });
  });

  it('exports only the products a product-scoped member can see', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.scoped] });
    const label = labeller(ws.ids.orderItems);
    const token = ws.tokens.scoped!;
    expect(label(csvRecords(await api.export(token)))).toEqual(['o6#0', 'o3', 'o1']);
    expect(await api.export(token, { productIds: `${ws.ids.products.p2}` })).toEqual([COLUMNS]);
    expect(await api.export(token, { search: 'PB-1004' })).toEqual([COLUMNS]);
  });

  it('does not export purchases of another workspace', async () => {
    const mine = await seedShop(ctx);
    const theirs = await seedShop(ctx);
    const records = csvRecords(await api.export(mine.owner));
    expect(labeller(mine.ids.orderItems)(records)).toEqual(SHOP_ORDER);
    const theirItems = new Set(Object.values(theirs.ids.orderItems).flat().map(String));
    expect(records.some((r) => theirItems.has(r.order_item_id!))).toBe(false);
    expect(await api.export(mine.owner, { productIds: `${theirs.ids.products.p1}` })).toEqual([COLUMNS]);
  });

  it('refuses bad filters with a problem, not a partial file', async () => {
    const ws = await seedShop(ctx);
    expectProblem(await api.exportRaw(ws.owner, 'dateFrom=2026-03-02&dateTo=2026-03-01'), 400, 'INVALID_FILTER');
    expectProblem(await api.exportRaw(ws.owner, 'dateFrom=2026-02-30'), 400, 'INVALID_FILTER');
    expectProblem(await api.exportRaw(ws.owner, 'channel=refund'), 400, 'VALIDATION_FAILED');
    expectProblem(await api.exportRaw(ws.owner, 'provider=no%20spaces'), 400, 'VALIDATION_FAILED');
  });

  it('refuses a request without a valid token or without purchases.view', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.outsider, { key: 'manageOnly', permissions: ['purchases.manage', 'purchases.refund'], products: 'all' }] });
    expectProblem(await api.exportRaw(undefined), 401, 'UNAUTHENTICATED');
    expectProblem(await api.exportRaw('bad.token.value'), 401, 'UNAUTHENTICATED');
    expectProblem(await api.exportRaw(ws.tokens.outsider!), 403, 'FORBIDDEN');
    expectProblem(await api.exportRaw(ws.tokens.manageOnly!), 403, 'FORBIDDEN');
  });
});
