import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { PURCHASES } from './purchases-helpers.js';

const ctx = useTestApp();

const COLUMNS = ['email', 'firstName', 'lastName', 'productId', 'productName', 'serialCode', 'price', 'salePrice', 'date', 'currency', 'externalReference', 'provider', 'resellerId'];

const get = (token: string, url: string) => ctx().app.inject({ method: 'GET', url, headers: bearer(token) });

const download = async (token: string) => {
  const res = await get(token, `${PURCHASES}/demo-csv`);
  expect(res.statusCode, res.body).toBe(200);
  return res;
};

const upload = (token: string, csv: string) => {
  const form = multipart([{ name: 'file', value: csv, filename: 'purchases-template.csv', contentType: 'text/csv' }]);
  return ctx().app.inject({ method: 'POST', url: `${PURCHASES}/import`, headers: { ...bearer(token), ...form.headers }, payload: form.payload });
};

const records = (csv: string) => parse(csv, { columns: true }) as Array<Record<string, string>>;

describe('GET /api/developer/purchases/demo-csv', () => {
  it('answers text/csv with the documented import columns', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await download(ws.owner);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="purchases-template.csv"');
    const rows = records(res.body);
    expect(Object.keys(rows[0]!)).toEqual(COLUMNS);
    expect(rows.length).toBeGreaterThan(0);
    // Example rows name a product of the workspace, by id or by name.
    for (const row of rows) {
      expect([String(ws.ids.products.p1), `Product p1 ${ws.suffix}`]).toContain(row.productId || row.productName);
    }
  });

  it('imports unchanged with 201, and a second upload of the same file creates nothing', async () => {
    const ws = await seedWorkspace(ctx());
    const template = (await download(ws.owner)).body;
    const rows = records(template);

    const first = await upload(ws.owner, template);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toEqual({ success: true, importedCount: rows.length, insertedCount: rows.length, failedCount: 0, errors: [] });
    const list = (await get(ws.owner, PURCHASES)).json();
    expect(list.total).toBe(rows.length);
    for (const item of list.rows) expect(item).toMatchObject({ channel: 'import', status: 'imported' });
    const customers = (await get(ws.owner, '/api/developer/customers')).json();

    const second = await upload(ws.owner, template);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ success: true, importedCount: rows.length, insertedCount: 0, failedCount: 0 });
    expect((await get(ws.owner, PURCHASES)).json().total).toBe(rows.length);
    expect((await get(ws.owner, '/api/developer/customers')).json().total).toBe(customers.total);
    const serialCodes = rows.map((r) => r.serialCode).filter(Boolean);
    expect((await get(ws.owner, '/api/developer/serials')).json().total).toBe(serialCodes.length);
  });

  it('names only a product the member is assigned to', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'm', permissions: ['purchases.view', 'purchases.manage'], products: ['p2'] }] });
    const template = (await download(ws.tokens.m!)).body;
    for (const row of records(template)) {
      expect([String(ws.ids.products.p2), `Product p2 ${ws.suffix}`]).toContain(row.productId || row.productName);
    }
    const res = await upload(ws.tokens.m!, template);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('answers 401 without a token and 403 without purchases.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'c', permissions: ['customers.view', 'serials.view'], products: 'all' }] });
    const anon = await ctx().app.inject({ method: 'GET', url: `${PURCHASES}/demo-csv` });
    expect(anon.statusCode).toBe(401);
    expect(anon.json().code).toBe('UNAUTHENTICATED');
    const denied = await get(ws.tokens.c!, `${PURCHASES}/demo-csv`);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('FORBIDDEN');
  });
});
