import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import * as serialsService from '../../src/modules/serials/serials.service.js';
import { bearer, onPostgres, type SeededWorkspace, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { expectProblem, PURCHASES, type PurchaseRow } from './purchases-helpers.js';
import { countJobs } from '../../src/platform/jobs/jobs.testing.js';
import { EmailJob } from '../../src/platform/mail/mail.js';

const ctx = useTestApp();
const URL = `${PURCHASES}/import`;

interface ImportBody {
  success: boolean;
  importedCount: number;
  insertedCount: number;
  failedCount: number;
  errors: Array<{ row: number; field: string; code: string; message: string }>;
}

const get = (token: string, url: string) => ctx().app.inject({ method: 'GET', url, headers: bearer(token) });

const importJson = (token: string, body: unknown) =>
  ctx().app.inject({ method: 'POST', url: URL, headers: bearer(token), payload: body as object });

const importCsv = (token: string, csv: string, productMappings?: unknown) => {
  const form = multipart([
    ...(productMappings === undefined ? [] : [{ name: 'productMappings', value: JSON.stringify(productMappings) }]),
    { name: 'file', value: csv, filename: 'purchases.csv', contentType: 'text/csv' },
  ]);
  return ctx().app.inject({ method: 'POST', url: URL, headers: { ...bearer(token), ...form.headers }, payload: form.payload });
};

const purchases = async (token: string, query = '') => {
  const res = await get(token, `${PURCHASES}${query}${query ? '&' : '?'}limit=200`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { rows: PurchaseRow[]; total: number };
};

const customers = async (token: string, query = '') => {
  const res = await get(token, `/api/developer/customers${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { total: number; rows: Array<{ customer_id: number; email: string; first_name: string | null; last_name: string | null; product_ids: number[] }> };
};

const serials = async (token: string) => {
  const res = await get(token, '/api/developer/serials?limit=200');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { total: number; rows: Array<{ id: number; serial: string; product_id: number; customer_id: number | null; status: string; origin: string }> };
};

const rowErrors = (body: { errors?: unknown }) => (body.errors as ImportBody['errors']).map((e) => `${e.row}:${e.field}:${e.code}`);

const count = async (table: 'entitlements' | 'marketing_consents' | 'orders' | 'order_items' | 'serials' | 'developer_customers', workspaceId: number) =>
  (
    await ctx()
      .database.db.selectFrom(table)
      .where('workspace_id', '=', workspaceId)
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow()
  ).n;

const entitlements = (workspaceId: number) =>
  ctx()
    .database.db.selectFrom('entitlements')
    .where('workspace_id', '=', workspaceId)
    .select([
      // As the API shows it: the workspace's relationship id, not the account.
      sql<number>`(select dc.id from developer_customers dc where dc.workspace_id = entitlements.workspace_id and dc.account_id = entitlements.customer_id)`.as(
        'customer_id',
      ),
      'product_id',
      'source',
      'kind',
      'status',
      'order_item_id',
      'serial_id',
      'ends_at',
    ])
    .orderBy('order_item_id')
    .execute();

/** Unique per test (and per run on a shared PostgreSQL database). */
const email = (label: string) => `${label}-${unique()}@buyer.test`;
const code = (label: string) => `${label}-${unique().toUpperCase()}`;
const productName = (ws: SeededWorkspace, key: string) => `Product ${key} ${ws.suffix}`;

describe('POST /api/developer/purchases/import', () => {
  it('imports JSON rows with 201 as imported customers, orders, items and entitlements', async () => {
    const ws = await seedWorkspace(ctx());
    const [ann, bob] = [email('ann'), email('bob')];
    const res = await importJson(ws.owner, {
      purchases: [
        { email: ann, firstName: 'Ann', lastName: 'Lee', productId: ws.ids.products.p1, price: '24.99', salePrice: 19.99, date: '2024-03-15', externalReference: 'GUM-1', provider: 'Gumroad' },
        { email: bob, productName: productName(ws, 'p2'), price: 49, salePrice: 0, date: '2024-04-01T10:30:00+02:00' },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ success: true, importedCount: 2, insertedCount: 2, failedCount: 0, errors: [] });

    const people = await customers(ws.owner);
    expect(people.total).toBe(2);
    const annRow = people.rows.find((c) => c.email === ann)!;
    const bobRow = people.rows.find((c) => c.email === bob)!;
    expect(annRow).toMatchObject({ first_name: 'Ann', last_name: 'Lee', product_ids: [ws.ids.products.p1] });
    expect(bobRow).toMatchObject({ product_ids: [ws.ids.products.p2] });

    const list = await purchases(ws.owner);
    expect(list.total).toBe(2);
    const sale = list.rows.find((r) => r.email === ann)!;
    const free = list.rows.find((r) => r.email === bob)!;
    expect(sale).toMatchObject({
      product_id: ws.ids.products.p1,
      customer_id: annRow.customer_id,
      channel: 'import',
      status: 'imported',
      provider: 'gumroad',
      record_type: 'sale',
      refund_status: 'none',
      currency: 'usd',
      price_cents: 2499,
      sale_price_cents: 1999,
      price: '24.99',
      sale_price: '19.99',
      external_reference: 'GUM-1',
      order_reference: 'GUM-1',
      invoice_available: false,
      can_refund: false,
      serial_id: null,
      purchased_at: '2024-03-15T00:00:00.000Z',
    });
    expect(free).toMatchObject({
      product_id: ws.ids.products.p2,
      customer_id: bobRow.customer_id,
      channel: 'import',
      status: 'imported',
      provider: 'external',
      record_type: 'free',
      price_cents: 4900,
      sale_price_cents: 0,
      purchased_at: '2024-04-01T08:30:00.000Z',
    });
    // Without a reference in the file, the row gets a stable derived one.
    expect(free.external_reference).toMatch(/^auto-[0-9a-f]{24}$/);
    expect((await purchases(ws.owner, '?channel=import')).total).toBe(2);

    expect(await entitlements(ws.workspaceId)).toEqual(
      [
        { customer_id: annRow.customer_id, product_id: ws.ids.products.p1, order_item_id: sale.order_item_id },
        { customer_id: bobRow.customer_id, product_id: ws.ids.products.p2, order_item_id: free.order_item_id },
      ]
        .sort((a, b) => a.order_item_id - b.order_item_id)
        .map((e) => ({ ...e, source: 'import', kind: 'perpetual', status: 'active', serial_id: null, ends_at: null })),
    );
  });

  it('records no marketing consent and queues no e-mail', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await importJson(ws.owner, {
      purchases: [
        { email: email('quiet'), productId: ws.ids.products.p1, salePrice: 10, marketingConsent: true, sendEmail: true },
        { email: email('quiet'), productId: ws.ids.products.p2, serialCode: code('QUIET'), salePrice: 0 },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await count('developer_customers', ws.workspaceId)).toBe(2);
    expect(await count('marketing_consents', ws.workspaceId)).toBe(0);
    expect(await countJobs(ctx().database.db, { job: EmailJob, workspaceId: ws.workspaceId })).toBe(0);
  });

  it.each([
    ['a JSON number', 19.99, 'usd', 1999],
    ['a decimal string', '19.99', 'usd', 1999],
    ['a whole number', 49, 'usd', 4900],
    ['one decimal place', '0.1', 'usd', 10],
    ['surrounding spaces', ' 7.50 ', 'usd', 750],
    ['a large amount', '1234567.89', 'usd', 123456789],
    ['a zero-decimal currency', '500', 'JPY', 500],
    ['a three-decimal currency', '1.999', 'kwd', 1999],
  ])('parses %s exactly into minor units', async (_label, amount, currency, cents) => {
    const ws = await seedWorkspace(ctx());
    const res = await importJson(ws.owner, { purchases: [{ email: email('money'), productId: ws.ids.products.p1, salePrice: amount, currency }] });
    expect(res.statusCode, res.body).toBe(201);
    const [row] = (await purchases(ws.owner)).rows;
    expect(row).toMatchObject({ sale_price_cents: cents, price_cents: cents, currency: currency.toLowerCase(), record_type: 'sale' });
  });

  it('reports amounts that are not exact major units as INVALID_AMOUNT row errors', async () => {
    const ws = await seedWorkspace(ctx());
    const rows = [
      { salePrice: '1.999' },
      { price: '5.5', currency: 'JPY' },
      { salePrice: '-5' },
      { salePrice: '1e3' },
      { salePrice: '$10' },
      { salePrice: '1,299.00' },
      { price: 'free' },
      { salePrice: true },
    ].map((r) => ({ email: email('bad-money'), productId: ws.ids.products.p1, ...r }));
    const res = await importJson(ws.owner, { purchases: [{ email: email('good-money'), productId: ws.ids.products.p1, salePrice: '9.99' }, ...rows] });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 1, insertedCount: 1, failedCount: 8 });
    expect(rowErrors(res.json())).toEqual([
      '2:salePrice:INVALID_AMOUNT',
      '3:price:INVALID_AMOUNT',
      '4:salePrice:INVALID_AMOUNT',
      '5:salePrice:INVALID_AMOUNT',
      '6:salePrice:INVALID_AMOUNT',
      '7:salePrice:INVALID_AMOUNT',
      '8:price:INVALID_AMOUNT',
      '9:salePrice:INVALID_AMOUNT',
    ]);
    expect((await purchases(ws.owner)).rows.map((r) => r.sale_price_cents)).toEqual([999]);
    expect((await customers(ws.owner)).total).toBe(1);
  });

  it('imports a multipart CSV file, resolving product names through productMappings', async () => {
    const ws = await seedWorkspace(ctx());
    const [ann, bo] = [email('csv-ann'), email('csv-bo')];
    const csv = [
      'Email,First Name,last_name,Product Name,productId,Sale Price,price,date,currency,external_reference,provider',
      `${ann},Ann,Lee,Old Name,,19.99,24.99,2024-03-15,USD,CSV-1,bandcamp`,
      `${bo},"Bo, Jr",Kim,,9001,0,,2024-05-01,,,`,
      `${bo},"Bo, Jr",Kim,${productName(ws, 'p1')},,1.999,,2024-05-01,,,`,
    ].join('\r\n');
    const res = await importCsv(ws.owner, `${csv}\r\n`, { 'Old Name': ws.ids.products.p3, '9001': ws.ids.products.p2 });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 2, insertedCount: 2, failedCount: 1 });
    expect(rowErrors(res.json())).toEqual(['3:salePrice:INVALID_AMOUNT']);

    const list = await purchases(ws.owner);
    const annItem = list.rows.find((r) => r.email === ann)!;
    const boItem = list.rows.find((r) => r.email === bo)!;
    expect(list.total).toBe(2);
    expect(annItem).toMatchObject({ product_id: ws.ids.products.p3, price_cents: 2499, sale_price_cents: 1999, provider: 'bandcamp', external_reference: 'CSV-1', record_type: 'sale' });
    expect(boItem).toMatchObject({ product_id: ws.ids.products.p2, price_cents: 0, sale_price_cents: 0, provider: 'external', record_type: 'free', channel: 'import' });
    const bos = await customers(ws.owner, `?search=${encodeURIComponent(bo)}`);
    expect(bos.rows).toMatchObject([{ first_name: 'Bo, Jr', last_name: 'Kim', product_ids: [ws.ids.products.p2] }]);
  });

  it('refuses a mapping to a product the caller cannot see', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'scoped', permissions: ['purchases.manage', 'purchases.view'], products: ['p1'] }] });
    const other = await seedWorkspace(ctx());
    const purchasesIn = [{ email: email('map'), productName: 'Old Name' }];
    for (const [token, productMappings] of [
      [ws.owner, { 'Old Name': other.ids.products.p1 }],
      [ws.owner, { 'Old Name': 2147483000 }],
      [ws.owner, { 'Old Name': 'p1' }],
      [ws.owner, [ws.ids.products.p1]],
      [ws.tokens.scoped!, { 'Old Name': ws.ids.products.p2 }],
    ] as const) {
      expectProblem(await importJson(token, { purchases: purchasesIn, productMappings }), 400, 'INVALID_PRODUCT_MAPPING');
    }
    expectProblem(await importCsv(ws.owner, `email,productName\r\n${email('map')},Old Name\r\n`, { 'Old Name': other.ids.products.p2 }), 400, 'INVALID_PRODUCT_MAPPING');
    expect((await purchases(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('refuses productMappings that carry credentials', async () => {
    const ws = await seedWorkspace(ctx());
    const purchasesIn = [{ email: email('cred'), productId: ws.ids.products.p1 }];
    for (const productMappings of [{ password: 'x' }, { apiKey: 'k' }, { nested: { client_secret: 's' } }, { 'access-token': 't' }, { Authorization: 'Bearer x' }]) {
      expectProblem(await importJson(ws.owner, { purchases: purchasesIn, productMappings }), 400, 'CREDENTIALS_NOT_ALLOWED');
    }
    expectProblem(await importCsv(ws.owner, `email,productId\r\n${email('cred')},${ws.ids.products.p1}\r\n`, { token: 'x' }), 400, 'CREDENTIALS_NOT_ALLOWED');
    expect((await purchases(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('creates nothing twice when the same JSON rows are imported again, with or without externalReference', async () => {
    const ws = await seedWorkspace(ctx());
    const body = {
      purchases: [
        { email: email('again'), productId: ws.ids.products.p1, salePrice: '19.99', date: '2024-01-02', externalReference: 'REF-1' },
        { email: email('derived'), productId: ws.ids.products.p2, salePrice: 5, date: '2024-01-03' },
        { email: email('undated'), productId: ws.ids.products.p3, salePrice: 0 },
        { email: email('serial'), productId: ws.ids.products.p1, serialCode: code('AGAIN'), salePrice: 1 },
      ],
    };
    const first = await importJson(ws.owner, body);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ importedCount: 4, insertedCount: 4 });
    const before = await purchases(ws.owner);

    for (let i = 0; i < 2; i++) {
      const again = await importJson(ws.owner, body);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json()).toEqual({ success: true, importedCount: 4, insertedCount: 0, failedCount: 0, errors: [] });
    }
    const after = await purchases(ws.owner);
    expect(after.total).toBe(4);
    expect(after.rows.map((r) => r.order_item_id).sort()).toEqual(before.rows.map((r) => r.order_item_id).sort());
    expect((await customers(ws.owner)).total).toBe(4);
    expect(await count('orders', ws.workspaceId)).toBe(4);
    expect(await count('entitlements', ws.workspaceId)).toBe(4);
    expect((await serials(ws.owner)).total).toBe(1);
  });

  it('creates nothing twice when the same CSV is uploaded again', async () => {
    const ws = await seedWorkspace(ctx());
    const csv =
      'email,productId,salePrice,date,externalReference,serialCode\r\n' +
      `${email('csv-a')},${ws.ids.products.p1},19.99,2024-02-01,CSV-A,\r\n` +
      `${email('csv-b')},${ws.ids.products.p2},0,2024-02-02,,${code('CSVB')}\r\n` +
      `${email('csv-c')},${ws.ids.products.p3},12,,,\r\n`;
    const first = await importCsv(ws.owner, csv);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ importedCount: 3, insertedCount: 3 });
    const second = await importCsv(ws.owner, csv);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ success: true, importedCount: 3, insertedCount: 0, failedCount: 0 });
    expect((await purchases(ws.owner)).total).toBe(3);
    expect((await customers(ws.owner)).total).toBe(3);
    expect(await count('entitlements', ws.workspaceId)).toBe(3);
    expect((await serials(ws.owner)).total).toBe(1);
  });

  it('treats the same rows sent as JSON and as CSV as one purchase', async () => {
    const ws = await seedWorkspace(ctx());
    const buyer = email('both');
    const json = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, salePrice: 19.99, date: '2024-02-01' }] });
    expect(json.json()).toMatchObject({ insertedCount: 1 });
    const csv = await importCsv(ws.owner, `email,productId,salePrice,date\r\n${buyer},${ws.ids.products.p1},19.99,2024-02-01\r\n`);
    expect(csv.statusCode, csv.body).toBe(201);
    expect(csv.json()).toMatchObject({ importedCount: 1, insertedCount: 0 });
    expect((await purchases(ws.owner)).total).toBe(1);
  });

  it('puts two products with one externalReference into one order with two items', async () => {
    const ws = await seedWorkspace(ctx());
    const buyer = email('bundle');
    const res = await importJson(ws.owner, {
      purchases: [
        { email: buyer, productId: ws.ids.products.p1, salePrice: 10, date: '2024-06-01', externalReference: 'BUNDLE-7' },
        { email: buyer, productId: ws.ids.products.p2, salePrice: 15, date: '2024-06-01', externalReference: 'BUNDLE-7' },
        // The same item twice in one file is one item.
        { email: buyer, productId: ws.ids.products.p2, salePrice: 15, date: '2024-06-01', externalReference: 'BUNDLE-7' },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 3, insertedCount: 2 });
    const { rows } = await purchases(ws.owner);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(1);
    expect(new Set(rows.map((r) => r.order_item_id)).size).toBe(2);
    expect(rows.map((r) => r.product_id).sort()).toEqual([ws.ids.products.p1, ws.ids.products.p2].sort());
    expect(await count('orders', ws.workspaceId)).toBe(1);

    // The same reference for another customer is another order.
    await importJson(ws.owner, { purchases: [{ email: email('other-buyer'), productId: ws.ids.products.p1, externalReference: 'BUNDLE-7' }] });
    expect(await count('orders', ws.workspaceId)).toBe(2);
    expect((await purchases(ws.owner)).total).toBe(3);
  });

  it('creates an unknown serialCode as imported, redeemed, assigned to the customer and linked to the item', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 5 } });
    const buyer = email('serial');
    const serialCode = code('IMPORTED');
    const res = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p2, serialCode, salePrice: 49, externalReference: 'S-1' }] });
    expect(res.statusCode, res.body).toBe(201);

    const [customer] = (await customers(ws.owner)).rows;
    const [serial] = (await serials(ws.owner)).rows;
    expect(serial).toMatchObject({ serial: serialCode, product_id: ws.ids.products.p2, customer_id: customer!.customer_id, status: 'redeemed', redeemed: true, origin: 'imported', max_activations: 5 });
    const [item] = (await purchases(ws.owner)).rows;
    expect(item).toMatchObject({ serial_id: serial!.id, serial_code: serialCode, customer_id: customer!.customer_id });
    expect(await entitlements(ws.workspaceId)).toMatchObject([{ serial_id: serial!.id, order_item_id: item!.order_item_id, source: 'import' }]);
    const stored = await ctx().database.db.selectFrom('serials').where('id', '=', serial!.id).select(['order_id']).executeTakeFirstOrThrow();
    expect(stored.order_id).toBe(item!.order_id);
  });

  it('assigns an available serial of the workspace to the row’s customer', async () => {
    const key = `AVAIL${unique().toUpperCase()}`;
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1', code: key }] });
    const buyer = email('assign');
    const res = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: key.toLowerCase(), salePrice: 20 }] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 1, insertedCount: 1 });

    const [customer] = (await customers(ws.owner)).rows;
    const list = await serials(ws.owner);
    expect(list.total).toBe(1);
    expect(list.rows[0]).toMatchObject({ id: ws.ids.serials.s, serial: key, customer_id: customer!.customer_id, status: 'redeemed', origin: 'generated' });
    expect((await purchases(ws.owner)).rows[0]).toMatchObject({ serial_id: ws.ids.serials.s, serial_code: key });
  });

  it('accepts a serial already held by the same customer and links it without moving it', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c', email: email('holder') }],
      serials: [{ key: 's', product: 'p1', customer: 'c' }],
    });
    const holder = (await customers(ws.owner)).rows[0]!;
    const res = await importJson(ws.owner, { purchases: [{ email: holder.email.toUpperCase(), productId: ws.ids.products.p1, serialCode: ws.serialCodes.s, salePrice: 1 }] });
    expect(res.statusCode, res.body).toBe(201);
    expect((await purchases(ws.owner)).rows[0]).toMatchObject({ customer_id: holder.customer_id, serial_id: ws.ids.serials.s });
    expect((await serials(ws.owner)).rows[0]).toMatchObject({ customer_id: holder.customer_id, status: 'redeemed' });
  });

  it('reports serials it cannot assign as row errors and writes nothing for those rows', async () => {
    const foreign = await seedWorkspace(ctx(), { serials: [{ key: 'x', product: 'p1' }] });
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'holder', email: email('holder') }],
      serials: [
        { key: 'p2serial', product: 'p2' },
        { key: 'held', product: 'p1', customer: 'holder' },
      ],
    });
    const failing = [email('mismatch'), email('assigned'), email('taken'), email('dup-second')];
    const [good, dupFirst] = [email('good'), email('dup-first')];
    const dup = code('DUP');
    const res = await importJson(ws.owner, {
      purchases: [
        { email: good, productId: ws.ids.products.p1, serialCode: code('GOOD') },
        { email: failing[0], productId: ws.ids.products.p1, serialCode: ws.serialCodes.p2serial },
        { email: failing[1], productId: ws.ids.products.p1, serialCode: ws.serialCodes.held },
        { email: failing[2], productId: ws.ids.products.p1, serialCode: foreign.serialCodes.x!.toLowerCase() },
        { email: dupFirst, productId: ws.ids.products.p3, serialCode: dup },
        { email: failing[3], productId: ws.ids.products.p3, serialCode: dup.toLowerCase() },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 2, insertedCount: 2, failedCount: 4 });
    expect(rowErrors(res.json())).toEqual(['2:serialCode:SERIAL_PRODUCT_MISMATCH', '3:serialCode:SERIAL_ASSIGNED', '4:serialCode:SERIAL_CODE_TAKEN', '6:serialCode:DUPLICATE_IN_FILE']);
    // Nothing about the other workspace leaks.
    expect(res.body).not.toContain(String(foreign.workspaceId));

    const emails = (await customers(ws.owner)).rows.map((c) => c.email);
    for (const e of failing) expect(emails).not.toContain(e);
    expect(emails).toEqual(expect.arrayContaining([good, dupFirst]));
    expect(emails).toHaveLength(3);
    expect((await purchases(ws.owner)).rows.map((r) => r.email).sort()).toEqual([good, dupFirst].sort());

    const held = (await serials(ws.owner)).rows;
    expect(held.find((s) => s.id === ws.ids.serials.p2serial)).toMatchObject({ status: 'available', customer_id: null });
    expect(held.find((s) => s.id === ws.ids.serials.held)).toMatchObject({ customer_id: ws.ids.customers.holder });
    expect((await serials(foreign.owner)).rows[0]).toMatchObject({ serial: foreign.serialCodes.x, customer_id: null, status: 'available' });
  });

  it('writes nothing when a serial it saw as available was taken before the assignment', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'grantee', email: email('grantee') }],
      serials: [{ key: 's', product: 'p1', customer: 'grantee' }],
    });
    const buyer = email('late');
    // The import read the serial as available; a manual grant assigned it before the import's update.
    const real = serialsService.lookupSerialCodes;
    const spy = vi.spyOn(serialsService, 'lookupSerialCodes').mockImplementationOnce(async (...args) => {
      const seen = await real(...args);
      for (const serial of seen.mine.values()) Object.assign(serial, { status: 'available', customer_id: null, customer_email: null });
      return seen;
    });
    try {
      const res = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: ws.serialCodes.s, salePrice: 1 }] });
      expectProblem(res, 409, 'SERIALIZATION_FAILURE');
    } finally {
      spy.mockRestore();
    }
    expect((await purchases(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).rows.map((c) => c.email)).not.toContain(buyer);
    expect((await serials(ws.owner)).rows[0]).toMatchObject({ customer_id: ws.ids.customers.grantee, status: 'redeemed' });

    // Retried, the import sees the serial's holder and reports the row.
    const retry = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: ws.serialCodes.s, salePrice: 1 }] });
    expect(rowErrors(expectProblem(retry, 422, 'IMPORT_REJECTED'))).toEqual(['1:serialCode:SERIAL_ASSIGNED']);
  });

  it('answers 207 with the valid rows committed and a stable code per failed row', async () => {
    const ws = await seedWorkspace(ctx(), { resellers: [{ key: 'r', name: `Store ${unique()}` }] });
    const other = await seedWorkspace(ctx(), { resellers: [{ key: 'r', name: `Other ${unique()}` }] });
    const [first, last] = [email('first'), email('last')];
    const res = await importJson(ws.owner, {
      purchases: [
        { email: first, productId: ws.ids.products.p1, salePrice: 10, resellerId: ws.ids.resellerIds.r, date: '2023-12-31' },
        { productId: ws.ids.products.p1 },
        { email: 'not-an-email', productId: ws.ids.products.p1 },
        { email: email('noproduct') },
        { email: email('foreign'), productId: other.ids.products.p1 },
        { email: email('unknown'), productName: 'No such product' },
        { email: email('future'), productId: ws.ids.products.p1, date: '2999-01-01' },
        { email: email('feb30'), productId: ws.ids.products.p1, date: '2024-02-30' },
        { email: email('words'), productId: ws.ids.products.p1, date: 'last tuesday' },
        { email: email('local'), productId: ws.ids.products.p1, date: '15/03/2024' },
        { email: email('ancient'), productId: ws.ids.products.p1, date: '1989-12-31' },
        { email: email('reseller'), productId: ws.ids.products.p1, resellerId: other.ids.resellerIds.r },
        { email: email('currency'), productId: ws.ids.products.p1, currency: 'US$' },
        { email: email('provider'), productId: ws.ids.products.p1, provider: 'My Store!' },
        { email: email('serial'), productId: ws.ids.products.p1, serialCode: '=SUM(A1)' },
        { email: last, productId: ws.ids.products.p2, salePrice: 0 },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 2, insertedCount: 2, failedCount: 14 });
    expect(rowErrors(res.json())).toEqual([
      '2:email:REQUIRED',
      '3:email:INVALID_EMAIL',
      '4:productId:REQUIRED',
      '5:productId:PRODUCT_NOT_FOUND',
      '6:productName:PRODUCT_NOT_FOUND',
      '7:date:DATE_IN_FUTURE',
      '8:date:INVALID_DATE',
      '9:date:INVALID_DATE',
      '10:date:INVALID_DATE',
      '11:date:INVALID_DATE',
      '12:resellerId:RESELLER_NOT_FOUND',
      '13:currency:INVALID_CURRENCY',
      '14:provider:INVALID_PROVIDER',
      '15:serialCode:INVALID_SERIAL_CODE',
    ]);
    for (const e of res.json().errors) expect(typeof e.message).toBe('string');

    const list = await purchases(ws.owner);
    expect(list.rows.map((r) => r.email).sort()).toEqual([first, last].sort());
    expect(list.rows.find((r) => r.email === first)).toMatchObject({ reseller_id: ws.ids.resellerIds.r, purchased_at: '2023-12-31T00:00:00.000Z' });
    expect((await customers(ws.owner)).total).toBe(2);
  });

  it('answers 422 IMPORT_REJECTED and writes nothing when no row is valid', async () => {
    const holder = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const ws = await seedWorkspace(ctx());
    const body = expectProblem(
      await importJson(ws.owner, {
        purchases: [
          { email: email('rejected'), productId: ws.ids.products.p1, serialCode: holder.serialCodes.s },
          { email: 'bad', productId: ws.ids.products.p1 },
          { email: email('rejected'), productId: ws.ids.products.p1, salePrice: '1.999' },
        ],
      }),
      422,
      'IMPORT_REJECTED',
    );
    expect(body).toMatchObject({ success: false, importedCount: 0, insertedCount: 0, failedCount: 3 });
    expect(rowErrors(body)).toEqual(['1:serialCode:SERIAL_CODE_TAKEN', '2:email:INVALID_EMAIL', '3:salePrice:INVALID_AMOUNT']);
    expect((await purchases(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).total).toBe(0);
    expect(await count('orders', ws.workspaceId)).toBe(0);
    expect(await count('entitlements', ws.workspaceId)).toBe(0);
  });

  it.each([
    ['an empty import', { purchases: [] }, 400, 'IMPORT_EMPTY'],
    ['no purchases array', { rows: [{ email: 'a@x.test' }] }, 400, 'VALIDATION_FAILED'],
    ['purchases that is not an array', { purchases: { email: 'a@x.test' } }, 400, 'VALIDATION_FAILED'],
    ['a row that is not an object', { purchases: [{ email: 'a@x.test', productId: 1 }, 'a@x.test'] }, 400, 'VALIDATION_FAILED'],
  ])('rejects %s', async (_label, payload, status, errorCode) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await importJson(ws.owner, payload), status, errorCode);
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('rejects an empty CSV and a form without a file', async () => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await importCsv(ws.owner, 'email,productId,salePrice\r\n'), 400, 'IMPORT_EMPTY');
    const noFile = multipart([{ name: 'productMappings', value: '{}' }]);
    expectProblem(
      await ctx().app.inject({ method: 'POST', url: URL, headers: { ...bearer(ws.owner), ...noFile.headers }, payload: noFile.payload }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('answers 413 beyond the row limit and writes nothing', async () => {
    const ws = await seedWorkspace(ctx());
    const rows = Array.from({ length: 100_001 }, (_, i) => ({ email: `r${i}@x.test`, productId: ws.ids.products.p1 }));
    expectProblem(await importJson(ws.owner, { purchases: rows }), 413, 'IMPORT_TOO_LARGE');
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('lets a product-scoped member import only rows for their products', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'm', permissions: ['purchases.manage', 'purchases.view'], products: ['p1'] }] });
    const mine = email('mine');
    const res = await importJson(ws.tokens.m!, {
      purchases: [
        { email: mine, productId: ws.ids.products.p1, salePrice: 5 },
        { email: email('theirs'), productId: ws.ids.products.p2, salePrice: 5 },
        { email: email('byname'), productName: productName(ws, 'p2') },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(rowErrors(res.json())).toEqual(['2:productId:PRODUCT_NOT_FOUND', '3:productName:PRODUCT_NOT_FOUND']);
    const all = await purchases(ws.owner);
    expect(all.rows.map((r) => [r.email, r.product_id])).toEqual([[mine, ws.ids.products.p1]]);
    expect((await customers(ws.owner)).rows.map((c) => c.email)).toEqual([mine]);
  });

  it('reports a serial of a product outside a member’s assignment like a foreign code', async () => {
    const serialCode = code('HIDDEN');
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'm', permissions: ['purchases.manage', 'purchases.view'], products: ['p1'] }],
      serials: [{ key: 's', product: 'p2', code: serialCode }],
    });
    const res = await importJson(ws.tokens.m!, {
      purchases: [
        { email: email('ok'), productId: ws.ids.products.p1, salePrice: 5 },
        { email: email('probe'), productId: ws.ids.products.p1, serialCode },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(rowErrors(res.json())).toEqual(['2:serialCode:SERIAL_CODE_TAKEN']);
  });

  it('changes nothing, not even serials, when a known purchase comes back with another serial code', async () => {
    const ws = await seedWorkspace(ctx());
    const buyer = email('again');
    const first = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: code('FIRST'), externalReference: 'R-1' }] });
    expect(first.json()).toMatchObject({ importedCount: 1, insertedCount: 1 });
    const serialsBefore = await count('serials', ws.workspaceId);
    const again = await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: code('SECOND'), externalReference: 'R-1' }] });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json()).toMatchObject({ importedCount: 1, insertedCount: 0 });
    expect(await count('serials', ws.workspaceId)).toBe(serialsBefore);
  });

  it('keeps an order’s total equal to its items when a later import adds an item', async () => {
    const ws = await seedWorkspace(ctx());
    const buyer = email('total');
    await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, salePrice: '10.00', externalReference: 'T-1' }] });
    await importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p2, salePrice: '2.50', externalReference: 'T-1' }] });
    const orders = await ctx().database.db.selectFrom('orders').where('workspace_id', '=', ws.workspaceId).select(['total_cents']).execute();
    expect(orders).toEqual([{ total_cents: 1250 }]);
  });

  it('does not change another workspace when importing an e-mail that is its customer', async () => {
    const shared = email('shared');
    const other = await seedWorkspace(ctx(), {
      customers: [{ key: 'c', email: shared, firstName: 'Kept', lastName: 'Name', products: ['p1'] }],
      orders: [{ key: 'o', customer: 'c', externalReference: 'SAME-REF', items: [{ product: 'p1', salePriceCents: 4900, serial: 's' }] }],
      serials: [{ key: 's', product: 'p1', customer: 'c' }],
    });
    const ws = await seedWorkspace(ctx());
    const before = {
      customers: await customers(other.owner),
      purchases: await purchases(other.owner),
      serials: await serials(other.owner),
      entitlements: await entitlements(other.workspaceId),
    };

    const res = await importJson(ws.owner, {
      purchases: [{ email: shared.toUpperCase(), firstName: 'Changed', lastName: 'Other', productId: ws.ids.products.p1, salePrice: 1, externalReference: 'SAME-REF', serialCode: code('MINE') }],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ insertedCount: 1 });

    expect(await customers(other.owner)).toEqual(before.customers);
    expect(await purchases(other.owner)).toEqual(before.purchases);
    expect(await serials(other.owner)).toEqual(before.serials);
    expect(await entitlements(other.workspaceId)).toEqual(before.entitlements);
    expect(before.customers.rows[0]).toMatchObject({ first_name: 'Kept', last_name: 'Name' });

    // The account is shared; the relationship, order and item are this workspace's own, and the
    // customer_id it shows is this workspace's: nothing tells it the person buys elsewhere too.
    const [mine] = (await purchases(ws.owner)).rows;
    const [ownCustomer] = (await customers(ws.owner)).rows;
    expect(mine).toMatchObject({ customer_id: ownCustomer!.customer_id, product_id: ws.ids.products.p1, first_name: 'Changed' });
    expect(mine!.customer_id).not.toBe(before.customers.rows[0]!.customer_id);
    expect(mine!.order_id).not.toBe(other.ids.orders.o);
  });

  it('answers 401 without a token or with a bad one', async () => {
    const ws = await seedWorkspace(ctx());
    const payload = { purchases: [{ email: email('anon'), productId: ws.ids.products.p1 }] };
    expectProblem(await ctx().app.inject({ method: 'POST', url: URL, payload }), 401, 'UNAUTHENTICATED');
    for (const token of ['not-a-jwt', `${ws.owner.slice(0, -4)}AAAA`]) {
      expectProblem(await importJson(token, payload), 401, 'UNAUTHENTICATED');
    }
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('answers 403 without purchases.manage', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [
        { key: 'viewer', permissions: ['purchases.view'], products: 'all' },
        { key: 'customers', permissions: ['customers.manage', 'customers.view', 'serials.manage'], products: 'all' },
      ],
    });
    const payload = { purchases: [{ email: email('forbidden'), productId: ws.ids.products.p1 }] };
    expectProblem(await importJson(ws.tokens.viewer!, payload), 403, 'FORBIDDEN');
    expectProblem(await importJson(ws.tokens.customers!, payload), 403, 'FORBIDDEN');
    expectProblem(await importCsv(ws.tokens.viewer!, `email,productId\r\n${email('forbidden')},${ws.ids.products.p1}\r\n`), 403, 'FORBIDDEN');
    expect((await purchases(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).total).toBe(0);
  });
});

// Real parallelism needs PostgreSQL (PGlite serialises transactions); the same
// assertions hold on both.
describe(`purchase imports under concurrency (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const identicalImports = async (ws: SeededWorkspace, rows: Array<Record<string, unknown>>, parallel: number) => {
    const results = await Promise.all(Array.from({ length: parallel }, () => importJson(ws.owner, { purchases: rows })));
    for (const r of results) expect(r.statusCode, r.body.slice(0, 500)).toBe(201);
    return results.map((r) => r.json() as ImportBody);
  };

  it('stores each item once when identical imports run in parallel', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ email: email('known') }] });
    const known = (await customers(ws.owner)).rows[0]!.email;
    const buyers = Array.from({ length: 20 }, (_, i) => email(`race${i}`));
    const rows = [
      ...buyers.map((e, i) => ({ email: e, productId: ws.ids.products[`p${(i % 3) + 1}`], salePrice: '19.99', date: '2024-05-01', ...(i % 2 ? { externalReference: `RACE-${i}` } : {}) })),
      { email: known, productId: ws.ids.products.p1, salePrice: 5, externalReference: 'RACE-K' },
      { email: known, productId: ws.ids.products.p2, salePrice: 5, externalReference: 'RACE-K' },
    ];
    const bodies = await identicalImports(ws, rows, 4);
    expect(bodies.reduce((sum, b) => sum + b.insertedCount, 0)).toBe(22);
    for (const b of bodies) expect(b).toMatchObject({ importedCount: 22, failedCount: 0 });

    expect((await purchases(ws.owner)).total).toBe(22);
    expect(await count('order_items', ws.workspaceId)).toBe(22);
    expect(await count('orders', ws.workspaceId)).toBe(21);
    expect(await count('entitlements', ws.workspaceId)).toBe(22);
    expect((await customers(ws.owner)).total).toBe(21);
    const duplicates = await ctx()
      .database.db.selectFrom('order_items')
      .where('workspace_id', '=', ws.workspaceId)
      .groupBy(['external_reference', 'product_id', 'customer_id'])
      .having(sql<number>`count(*)`, '>', 1)
      .select('external_reference')
      .execute();
    expect(duplicates).toEqual([]);
  });

  it('creates and assigns each serial once when identical imports with serial codes run in parallel', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p2' }] });
    const rows = [
      { email: email('s1'), productId: ws.ids.products.p1, serialCode: ws.serialCodes.a, salePrice: 1 },
      { email: email('s2'), productId: ws.ids.products.p2, serialCode: ws.serialCodes.b, salePrice: 1, externalReference: 'SER-B' },
      ...Array.from({ length: 6 }, (_, i) => ({ email: email(`n${i}`), productId: ws.ids.products.p3, serialCode: code(`NEW${i}`), salePrice: 2 })),
    ];
    const bodies = await identicalImports(ws, rows, 3);
    expect(bodies.reduce((sum, b) => sum + b.insertedCount, 0)).toBe(8);

    const items = (await purchases(ws.owner)).rows;
    expect(items).toHaveLength(8);
    expect(items.every((i) => i.serial_id !== null)).toBe(true);
    const list = await serials(ws.owner);
    expect(list.total).toBe(8);
    for (const s of list.rows) {
      const item = items.find((i) => i.serial_id === s.id)!;
      expect(s).toMatchObject({ status: 'redeemed', customer_id: item.customer_id });
    }
    const events = await ctx()
      .database.db.selectFrom('serial_events')
      .where('workspace_id', '=', ws.workspaceId)
      .where('action', 'in', ['assigned_by_import', 'imported'])
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(events.n).toBe(8);
  });
  it('gives a new serial code claimed by two parallel imports to exactly one customer', async () => {
    const ws = await seedWorkspace(ctx());
    const claimed = code('CLAIM');
    const buyers = [email('claim-a'), email('claim-b'), email('claim-c')];
    const results = await Promise.all(
      buyers.map((buyer) => importJson(ws.owner, { purchases: [{ email: buyer, productId: ws.ids.products.p1, serialCode: claimed, salePrice: 3 }] })),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 422, 422]);
    for (const r of results.filter((x) => x.statusCode === 422)) expect(rowErrors(r.json())).toEqual(['1:serialCode:SERIAL_ASSIGNED']);

    const [serial] = (await serials(ws.owner)).rows;
    const items = (await purchases(ws.owner)).rows;
    expect(items).toHaveLength(1);
    expect(serial).toMatchObject({ serial: claimed, customer_id: items[0]!.customer_id, status: 'redeemed' });
    expect(items[0]).toMatchObject({ serial_id: serial!.id });
    expect((await customers(ws.owner)).total).toBe(1);
  });

  it('never links an item to a serial that a parallel manual grant assigned to someone else', async () => {
    const ws = await seedWorkspace(ctx(), { serials: Array.from({ length: 6 }, (_, i) => ({ key: `s${i}`, product: 'p1' })) });
    const keys = Object.keys(ws.serialCodes);
    const results = await Promise.all(
      keys.flatMap((key) => [
        importJson(ws.owner, { purchases: [{ email: email(`imp-${key}`), productId: ws.ids.products.p1, serialCode: ws.serialCodes[key], salePrice: 1 }] }),
        ctx().app.inject({
          method: 'POST',
          url: `${PURCHASES}/manual-grant`,
          headers: bearer(ws.owner),
          payload: { grantType: 'existing_serial', productId: ws.ids.products.p1, serialId: ws.ids.serials[key], email: email(`grant-${key}`), reason: 'race' },
        }),
      ]),
    );
    for (const r of results) expect([201, 409, 422], r.body.slice(0, 300)).toContain(r.statusCode);

    const held = new Map((await serials(ws.owner)).rows.map((s) => [s.id, s]));
    for (const key of keys) expect(held.get(ws.ids.serials[key]!)).toMatchObject({ status: 'redeemed', customer_id: expect.any(Number) });
    const items = (await purchases(ws.owner)).rows.filter((i) => i.serial_id !== null);
    for (const item of items) expect(item.customer_id).toBe(held.get(item.serial_id!)!.customer_id);
  });
});

