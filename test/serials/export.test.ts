import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, SERIALS } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);
const URL = `${SERIALS}/export`;

const HEADER = [
  'id', 'serial', 'product_id', 'product', 'customer_id', 'status', 'redeemed', 'revoked', 'active_activation_count',
  'max_activations', 'remaining_activations', 'origin', 'expires_at', 'batch_tag', 'order_id', 'created_at',
];

async function exported(token: string, query = '') {
  const res = await api.get(token, `${URL}${query}`);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return parse(res.body, { columns: true }) as Array<Record<string, string>>;
}

describe('GET /api/developer/serials/export', () => {
  it('streams every matching row as CSV with a header row, well beyond one page', async () => {
    const ws = await seedWorkspace(ctx());
    const generated = await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 5_200 });
    expect(generated.statusCode).toBe(201);

    const res = await api.get(ws.owner, URL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="serials-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.body.split(/\r?\n/, 1)[0]).toBe(HEADER.join(','));
    const records = parse(res.body, { columns: true }) as Array<Record<string, string>>;
    expect(records).toHaveLength(5_200);
    expect(new Set(records.map((r) => r.serial))).toEqual(new Set(generated.json().serials.map((s: { serial: string }) => s.serial)));
    expect(records.map((r) => Number(r.id))).toEqual(records.map((r) => Number(r.id)).sort((a, b) => b - a));
    expect(records[0]).toMatchObject({
      product_id: String(ws.ids.products.p1),
      product: `Product p1 ${ws.suffix}`,
      customer_id: '',
      status: 'available',
      redeemed: 'false',
      revoked: 'false',
      max_activations: '2',
      remaining_activations: '2',
      origin: 'generated',
    });
  });

  it('neutralises formula-like product names and batch tags', async () => {
    const ws = await seedWorkspace(ctx());
    await ctx().database.db.updateTable('products').set({ name: '=HYPERLINK("http://evil")' }).where('id', '=', ws.ids.products.p1!).execute();
    await ctx().database.db.updateTable('products').set({ name: '@SUM(A1)' }).where('id', '=', ws.ids.products.p2!).execute();
    for (const [product, batchTag] of [
      ['p1', '+cmd|calc'],
      ['p2', '-2+3'],
      ['p3', 'Spring sale'],
    ] as const) {
      expect((await api.generate(ws.owner, { productId: ws.ids.products[product], batchTag })).statusCode).toBe(201);
    }
    const byProduct = Object.fromEntries((await exported(ws.owner)).map((r) => [r.product_id, r]));
    expect(byProduct[ws.ids.products.p1!]).toMatchObject({ product: `'=HYPERLINK("http://evil")`, batch_tag: "'+cmd|calc" });
    expect(byProduct[ws.ids.products.p2!]).toMatchObject({ product: "'@SUM(A1)", batch_tag: "'-2+3" });
    expect(byProduct[ws.ids.products.p3!]).toMatchObject({ product: `Product p3 ${ws.suffix}`, batch_tag: 'Spring sale' });
  });

  it('applies the list filters', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c', email: `export-filter-${Date.now()}@x.test` }],
      serials: [
        { key: 'a', product: 'p1' },
        { key: 'b', product: 'p2' },
        { key: 'owned', product: 'p2', customer: 'c' },
      ],
    });
    const serials = async (query: string) => (await exported(ws.owner, query)).map((r) => r.serial).sort();
    expect(await serials(`?productId=${ws.ids.products.p2}`)).toEqual([ws.serialCodes.b, ws.serialCodes.owned].sort());
    expect(await serials('?status=redeemed')).toEqual([ws.serialCodes.owned]);
    expect(await serials(`?search=${ws.serialCodes.a!.toLowerCase().replaceAll('-', '')}`)).toEqual([ws.serialCodes.a]);
    expect(await serials('?dateRange=2020-01-01..2020-12-31')).toEqual([]);
    expect(await serials('?dateRange=7d')).toHaveLength(3);
  });

  it('exports only the serials of a product-scoped member’s products', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [MEMBERS.scoped],
      serials: [
        { key: 'mine', product: 'p1' },
        { key: 'theirs', product: 'p2' },
      ],
    });
    expect((await exported(ws.tokens.scoped!)).map((r) => r.serial)).toEqual([ws.serialCodes.mine]);
    expect(await exported(ws.tokens.scoped!, `?productId=${ws.ids.products.p2}`)).toEqual([]);
  });

  it('answers only the header when nothing matches', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.get(ws.owner, URL);
    expect(res.statusCode).toBe(200);
    expect(res.body.trim()).toBe(HEADER.join(','));
  });

  it('rejects bad filters and callers without serials.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.manager, MEMBERS.outsider] });
    expectProblem(await api.get(ws.owner, `${URL}?status=deactivated`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.owner, `${URL}?dateRange=2026-13-01..`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.owner, `${URL}?format=xlsx`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.tokens.manager!, URL), 403, 'FORBIDDEN');
    expectProblem(await api.get(ws.tokens.outsider!, URL), 403, 'FORBIDDEN');
  });
});
