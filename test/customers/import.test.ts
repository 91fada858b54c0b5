import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { ANALYZE_AFTER_ROWS } from '../../src/platform/import/import-runner.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import * as customersRepo from '../../src/modules/customers/customers.repo.js';

const ctx = useTestApp();
const URL = '/api/developer/customers/import';

const post = (token: string, payload: unknown) =>
  ctx().app.inject({ method: 'POST', url: URL, headers: bearer(token), payload: payload as object });

const total = async (token: string, query = '') =>
  (await ctx().app.inject({ method: 'GET', url: `/api/developer/customers${query}`, headers: bearer(token) })).json().total as number;

describe('POST /api/developer/customers/import', () => {
  it('imports JSON rows with 201 and links products', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await post(ws.owner, {
      customers: [
        { email: 'ann@x.test', firstName: 'Ann', lastName: 'Lee', productId: ws.ids.products.p1 },
        { email: 'bob@x.test', productName: `product p2 ${ws.suffix}`.replace('product', 'Product') },
        { email: 'cy@x.test' },
      ],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ success: true, importedCount: 3, insertedCount: 3, errors: [] });
    expect(await total(ws.owner)).toBe(3);
    expect(await total(ws.owner, `?productId=${ws.ids.products.p2}`)).toBe(1);
  });

  it('does not duplicate existing customers and counts only new ones as inserted', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ email: 'Existing@X.test', firstName: 'Old' }] });
    const res = await post(ws.owner, {
      customers: [{ email: 'existing@x.test', firstName: 'New' }, { email: 'fresh@x.test' }, { email: 'FRESH@x.test', lastName: 'Twice' }],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 3, insertedCount: 1 });
    const list = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) })).json();
    expect(list.total).toBe(2);
    const byEmail = Object.fromEntries(list.rows.map((r: { email: string }) => [r.email.toLowerCase(), r]));
    expect(byEmail['existing@x.test'].first_name).toBe('New');
    expect(byEmail['fresh@x.test'].last_name).toBe('Twice');
  });

  it('answers 207 with the good rows committed and per-row errors', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const res = await post(ws.owner, {
      customers: [
        { email: 'good@x.test' },
        { email: 'not-an-email' },
        { email: 'x@x.test', productId: other.ids.products.p1 },
        { email: 'y@x.test', firstName: 42 },
        { firstName: 'No Email' },
        { email: 'good2@x.test', productName: 'Unknown product' },
      ],
    });
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body).toMatchObject({ success: false, importedCount: 1, insertedCount: 1, failedCount: 5 });
    const summary = body.errors.map((e: { row: number; field: string; code: string }) => `${e.row}:${e.field}:${e.code}`);
    expect(summary).toEqual([
      '2:email:INVALID_EMAIL',
      '3:productId:PRODUCT_NOT_FOUND',
      '4:firstName:INVALID_TYPE',
      '5:email:REQUIRED',
      '6:productName:PRODUCT_NOT_FOUND',
    ]);
    for (const e of body.errors) expect(typeof e.message).toBe('string');
    expect(await total(ws.owner)).toBe(1);
  });

  it('rejects rows that are not objects as a malformed request', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await post(ws.owner, { customers: [{ email: 'a@x.test' }, 'not an object'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('body/customers/1');
    expect(await total(ws.owner)).toBe(0);
  });

  it('answers 422 and writes nothing when no row is valid', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await post(ws.owner, { customers: [{ email: 'bad' }, { email: '' }] });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'IMPORT_REJECTED', importedCount: 0, insertedCount: 0 });
    expect(res.json().errors).toHaveLength(2);
    expect(await total(ws.owner)).toBe(0);
  });

  it('rejects an empty import', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await post(ws.owner, { customers: [] });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('IMPORT_EMPTY');
  });

  it('applies productMappings and refuses mappings to products outside the scope', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const ok = await post(ws.owner, {
      customers: [{ email: 'm1@x.test', productName: 'Legacy Synth' }, { email: 'm2@x.test', productId: 9001 }],
      productMappings: { 'Legacy Synth': ws.ids.products.p3, '9001': ws.ids.products.p3 },
    });
    expect(ok.statusCode).toBe(201);
    expect(await total(ws.owner, `?productId=${ws.ids.products.p3}`)).toBe(2);

    const foreign = await post(ws.owner, { customers: [{ email: 'm3@x.test' }], productMappings: { x: other.ids.products.p1 } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().code).toBe('INVALID_PRODUCT_MAPPING');
    const notObject = await post(ws.owner, { customers: [{ email: 'm3@x.test' }], productMappings: [1] });
    expect(notObject.json().code).toBe('INVALID_PRODUCT_MAPPING');
  });

  it('refuses productMappings that carry credentials', async () => {
    const ws = await seedWorkspace(ctx());
    for (const productMappings of [{ password: 'x' }, { apiKey: 'k' }, { nested: { client_secret: 's' } }, { 'access-token': 't' }]) {
      const res = await post(ws.owner, { customers: [{ email: 'c@x.test' }], productMappings });
      expect(res.statusCode, JSON.stringify(productMappings)).toBe(400);
      expect(res.json().code).toBe('CREDENTIALS_NOT_ALLOWED');
    }
    expect(await total(ws.owner)).toBe(0);
  });

  it('requires a product on every row for a product-scoped member, and only their products', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'scoped', permissions: ['customers.manage', 'customers.view'], products: ['p1'] }] });
    const res = await post(ws.tokens.scoped!, {
      customers: [
        { email: 'ok@x.test', productId: ws.ids.products.p1 },
        { email: 'none@x.test' },
        { email: 'other@x.test', productId: ws.ids.products.p2 },
      ],
    });
    expect(res.statusCode).toBe(207);
    expect(res.json().errors.map((e: { code: string }) => e.code)).toEqual(['PRODUCT_REQUIRED', 'PRODUCT_NOT_FOUND']);
    const mapped = await post(ws.tokens.scoped!, { customers: [{ email: 'z@x.test' }], productMappings: { a: ws.ids.products.p2 } });
    expect(mapped.json().code).toBe('INVALID_PRODUCT_MAPPING');
  });

  it('lets a product-scoped member link an existing customer without overwriting their names', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'scoped', permissions: ['customers.manage', 'customers.view'], products: ['p1'] }],
      customers: [{ email: 'known@x.test', firstName: 'Kept', products: ['p2'] }],
    });
    const res = await post(ws.tokens.scoped!, { customers: [{ email: 'known@x.test', firstName: 'Changed', lastName: 'Filled', productId: ws.ids.products.p1 }] });
    expect(res.statusCode).toBe(201);
    const row = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers?search=known', headers: bearer(ws.owner) })).json().rows[0];
    expect(row).toMatchObject({ first_name: 'Kept', last_name: 'Filled' });
    expect(row.product_ids.sort()).toEqual([ws.ids.products.p1, ws.ids.products.p2].sort());
  });

  it('imports a multipart CSV file with productMappings', async () => {
    const ws = await seedWorkspace(ctx());
    const csv = 'Email,First Name,last_name,productName\r\ncsv1@x.test,Ann,Lee,Old\r\ncsv2@x.test,"Bo, Jr",Kim,\r\nbroken,,,\r\n';
    const form = multipart([
      { name: 'productMappings', value: JSON.stringify({ Old: ws.ids.products.p1 }) },
      { name: 'file', value: csv, filename: 'c.csv', contentType: 'text/csv' },
    ]);
    const res = await ctx().app.inject({ method: 'POST', url: URL, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(207);
    expect(res.json()).toMatchObject({ importedCount: 2, insertedCount: 2 });
    expect(res.json().errors[0]).toMatchObject({ row: 3, field: 'email', code: 'INVALID_EMAIL' });
    const list = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers?search=csv2', headers: bearer(ws.owner) })).json();
    expect(list.rows[0].first_name).toBe('Bo, Jr');
    expect(await total(ws.owner, `?productId=${ws.ids.products.p1}`)).toBe(1);
  });

  it('rejects a multipart form without a file, a bad mapping field, or broken CSV', async () => {
    const ws = await seedWorkspace(ctx());
    const send = (form: ReturnType<typeof multipart>) =>
      ctx().app.inject({ method: 'POST', url: URL, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    const noFile = await send(multipart([{ name: 'productMappings', value: '{}' }]));
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().code).toBe('VALIDATION_FAILED');
    const badMapping = await send(multipart([{ name: 'productMappings', value: '{nope' }, { name: 'file', value: 'email\na@x.test\n', filename: 'a.csv' }]));
    expect(badMapping.statusCode).toBe(400);
    expect(badMapping.json().code).toBe('INVALID_PRODUCT_MAPPING');
    const badCsv = await send(multipart([{ name: 'file', value: 'email\n"unterminated\n', filename: 'a.csv' }]));
    expect(badCsv.statusCode).toBe(400);
    expect(badCsv.json().code).toBe('INVALID_CSV');
  });

  it('answers 413 beyond the row limit and the byte limit', async () => {
    const ws = await seedWorkspace(ctx());
    const rows = Array.from({ length: 100_001 }, () => ({}));
    const tooMany = await post(ws.owner, { customers: rows });
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json().code).toBe('IMPORT_TOO_LARGE');
    const huge = await ctx().app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(ws.owner), 'content-type': 'application/json' },
      payload: `{"customers":[],"pad":"${'x'.repeat(33 * 1024 * 1024)}"}`,
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 400 for malformed JSON and a missing array, and 415 for other content types', async () => {
    const ws = await seedWorkspace(ctx());
    const malformed = await ctx().app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(ws.owner), 'content-type': 'application/json' },
      payload: '{"customers": [',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe('MALFORMED_JSON');
    const missing = await post(ws.owner, { rows: [] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('VALIDATION_FAILED');
    const text = await ctx().app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(ws.owner), 'content-type': 'text/plain' },
      payload: 'email\na@x.test',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('commits nothing when the database fails part-way', async () => {
    const ws = await seedWorkspace(ctx());
    const spy = vi.spyOn(customersRepo, 'linkProducts').mockRejectedValueOnce(new Error('connection lost'));
    try {
      const res = await post(ws.owner, { customers: [{ email: 'atomic@x.test', productId: ws.ids.products.p1 }] });
      expect(res.statusCode).toBe(500);
      expect(res.json().code).toBe('INTERNAL');
      expect(res.body).not.toContain('connection lost');
    } finally {
      spy.mockRestore();
    }
    expect(await total(ws.owner)).toBe(0);
    expect(await total(ws.owner, '?search=atomic')).toBe(0);
  });

  it('refreshes the planner statistics of the tables a large import wrote', async () => {
    // Without it the planner keeps believing customer_products is empty until autovacuum samples it, and a
    // product-scoped teammate's list right after an import of 12,000 customers ran for minutes (a nested loop
    // over every relationship for every relationship).
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'scoped', permissions: ['customers.view'], products: ['p1'] }] });
    const { db } = ctx().database;
    const analyzed = async () =>
      (await sql<{ n: number }>`select coalesce(sum(analyze_count), 0)::int as n from pg_stat_user_tables where relname = 'customer_products'`.execute(db)).rows[0]!.n;
    const before = await analyzed();
    const customers = Array.from({ length: ANALYZE_AFTER_ROWS }, (_, i) => ({ email: `bulk${i}@x.test`, productId: i < 2 ? ws.ids.products.p1 : ws.ids.products.p2 }));
    const res = await post(ws.owner, { customers });
    expect(res.statusCode).toBe(201);
    expect(await analyzed()).toBeGreaterThan(before);
    const scoped = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers?page=1&limit=50', headers: bearer(ws.tokens.scoped!) });
    expect(scoped.json()).toMatchObject({ total: 2 });
    // A small import leaves the refresh to autovacuum.
    const small = await analyzed();
    expect((await post(ws.owner, { customers: [{ email: 'one-more@x.test' }] })).statusCode).toBe(201);
    expect(await analyzed()).toBe(small);
  });

  it('answers 403 without customers.manage and 401 without a token', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'viewer', permissions: ['customers.view'], products: 'all' }] });
    expect((await post(ws.tokens.viewer!, { customers: [{ email: 'a@x.test' }] })).statusCode).toBe(403);
    const anon = await ctx().app.inject({ method: 'POST', url: URL, payload: { customers: [] } });
    expect(anon.statusCode).toBe(401);
  });

  it('round-trips: the demo template imports unchanged', async () => {
    const ws = await seedWorkspace(ctx());
    const template = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers/demo-csv', headers: bearer(ws.owner) });
    expect(template.statusCode).toBe(200);
    expect(template.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(template.headers['content-disposition']).toMatch(/^attachment; filename=".+\.csv"$/);
    const records = parse(template.body, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(records[0]!)).toEqual(['email', 'firstName', 'lastName', 'productId', 'productName', 'marketingConsent']);
    const form = multipart([{ name: 'file', value: template.body, filename: 'template.csv', contentType: 'text/csv' }]);
    const res = await ctx().app.inject({ method: 'POST', url: URL, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: records.length, insertedCount: records.length });
  });
});
