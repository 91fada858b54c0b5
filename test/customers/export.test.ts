import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const URL = '/api/developer/customers/export';

describe('GET /api/developer/customers/export', () => {
  it('streams every matching row as CSV with a header row, not one page', async () => {
    const ws = await seedWorkspace(ctx());
    const customers = Array.from({ length: 5_200 }, (_, i) => ({ email: `bulk${i}@x.test`, firstName: `F${i}`, productId: ws.ids.products.p1 }));
    const imported = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: bearer(ws.owner), payload: { customers } });
    expect(imported.statusCode).toBe(201);

    const res = await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.owner) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="customers-\d{4}-\d{2}-\d{2}\.csv"$/);
    const records = parse(res.body, { columns: true }) as Array<Record<string, string>>;
    expect(records).toHaveLength(5_200);
    expect(Object.keys(records[0]!)).toEqual([
      'id', 'customer_id', 'email', 'first_name', 'last_name', 'status', 'email_verification_status', 'products', 'created_at',
    ]);
    expect(new Set(records.map((r) => r.email)).size).toBe(5_200);
    expect(records[0]!.products).toBe(`Product p1 ${ws.suffix}`);
  });

  it('applies the list filters and neutralises spreadsheet formulas', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { email: 'formula@x.test', firstName: '=HYPERLINK("http://evil")', lastName: '+1-2', products: ['p1'] },
        { email: 'at@x.test', firstName: '@SUM(A1)', lastName: '-3', products: ['p2'] },
        { email: 'tab@x.test', firstName: '\tTabbed', lastName: 'Plain' },
      ],
    });
    const all = parse((await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.owner) })).body, { columns: true }) as Array<
      Record<string, string>
    >;
    const byEmail = Object.fromEntries(all.map((r) => [r.email, r]));
    expect(byEmail['formula@x.test']!.first_name).toBe(`'=HYPERLINK("http://evil")`);
    expect(byEmail['formula@x.test']!.last_name).toBe(`'+1-2`);
    expect(byEmail['at@x.test']!.first_name).toBe(`'@SUM(A1)`);
    expect(byEmail['at@x.test']!.last_name).toBe(`'-3`);
    expect(byEmail['tab@x.test']!.last_name).toBe('Plain');

    const filtered = await ctx().app.inject({ method: 'GET', url: `${URL}?productId=${ws.ids.products.p2}`, headers: bearer(ws.owner) });
    expect(parse(filtered.body, { columns: true })).toHaveLength(1);
    const searched = await ctx().app.inject({ method: 'GET', url: `${URL}?search=FORMULA`, headers: bearer(ws.owner) });
    expect(parse(searched.body, { columns: true })).toHaveLength(1);
  });

  it('exports only the products and customers a product-scoped member can see', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'scoped', permissions: ['customers.view'], products: ['p1'] }],
      customers: [
        { email: 'both@x.test', products: ['p1', 'p2'] },
        { email: 'p2only@x.test', products: ['p2'] },
      ],
    });
    const res = await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.tokens.scoped!) });
    const records = parse(res.body, { columns: true }) as Array<Record<string, string>>;
    expect(records.map((r) => r.email)).toEqual(['both@x.test']);
    expect(records[0]!.products).toBe(`Product p1 ${ws.suffix}`);
  });

  it('answers an empty file with only the header when nothing matches', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.owner) });
    expect(res.statusCode).toBe(200);
    expect(res.body.trim()).toBe('id,customer_id,email,first_name,last_name,status,email_verification_status,products,created_at');
  });

  it('rejects bad filters, missing tokens and missing permissions', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'none', permissions: [], products: 'all' }] });
    const bad = await ctx().app.inject({ method: 'GET', url: `${URL}?dateRange=soon`, headers: bearer(ws.owner) });
    expect(bad.statusCode).toBe(400);
    expect((await ctx().app.inject({ method: 'GET', url: URL })).statusCode).toBe(401);
    expect((await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.tokens.none!) })).statusCode).toBe(403);
  });
});
