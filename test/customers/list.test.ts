import { Value } from '@sinclair/typebox/value';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CustomerList } from '../../src/modules/customers/customers.schemas.js';
import { DIRECT_PAGE_MAX_OFFSET } from '../../src/platform/paging/page-statement.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const URL = '/api/developer/customers';

describe('GET /api/developer/customers', () => {
  it('returns the paged envelope with customer rows, newest first', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { email: 'first@x.test', firstName: 'Ann', lastName: 'Lee', products: ['p1'] },
        { email: 'second@x.test', firstName: 'Bo', lastName: 'Kim', products: ['p2'] },
        { email: 'third@x.test' },
      ],
    });
    const res = await ctx().app.inject({ method: 'GET', url: `${URL}?limit=2`, headers: bearer(ws.owner) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(body.rows).toHaveLength(2);
    const row = body.rows[0];
    expect(Object.keys(row)).toEqual(
      expect.arrayContaining(['id', 'customer_id', 'email', 'first_name', 'last_name', 'status', 'email_verification_status']),
    );
    expect(row.status).toBe('active');
    expect(row.email_verification_status).toBe('unverified');
    const page2 = (await ctx().app.inject({ method: 'GET', url: `${URL}?limit=2&page=2`, headers: bearer(ws.owner) })).json();
    expect(page2.rows).toHaveLength(1);
    const ids = [...body.rows, ...page2.rows].map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(3);
  });

  it('answers rows exactly as the database holds them and as the schema documents, on shallow and deep pages', async () => {
    // PostgreSQL writes the rows' JSON (customers.repo.ts listPage): names that need escaping, no names,
    // several products, both verification states, and times with microseconds (cut to milliseconds, as Date does).
    const names = ['Zoë "Q" \\ back', 'tab\there', 'line\nbreak', '\u0001ctl', '日本', '</script>', "O'Brien"];
    const customers = Array.from({ length: DIRECT_PAGE_MAX_OFFSET + 6 }, (_, i) => ({
      email: `row${i}@json.test`,
      ...(i % 4 === 3 ? {} : { firstName: names[i % names.length], lastName: names[(i + 3) % names.length] }),
      products: [['p1', 'p2'], [], ['p2'], ['p1']][i % 4],
    }));
    const ws = await seedWorkspace(ctx(), { customers });
    const { db } = ctx().database;
    await sql`update developer_customers set created_at = created_at - (id % 997) * interval '1.234567 ms', email_verified = (id % 2 = 0) where workspace_id = ${ws.workspaceId}`.execute(db);
    const stored = await sql<{ id: number; email: string; first_name: string | null; last_name: string | null; email_verified: boolean; created_at: Date; product_ids: number[] }>`
      select dc.id, dc.email, dc.first_name, dc.last_name, dc.email_verified, dc.created_at,
        array(select product_id from customer_products cp where cp.developer_customer_id = dc.id order by product_id) as product_ids
      from developer_customers dc where dc.workspace_id = ${ws.workspaceId} order by dc.id desc`.execute(db);
    const expected = stored.rows.map((r) => ({
      id: r.id,
      customer_id: r.id,
      email: r.email,
      first_name: r.first_name,
      last_name: r.last_name,
      status: 'active',
      email_verification_status: r.email_verified ? 'verified' : 'unverified',
      product_ids: r.product_ids,
      created_at: r.created_at.toISOString(),
    }));
    // Page 1 and the last pages: the shallow statement and the deferred join (offset past DIRECT_PAGE_MAX_OFFSET).
    for (const [limit, page] of [[50, 1], [5, 2], [2, DIRECT_PAGE_MAX_OFFSET / 2 + 1], [2, DIRECT_PAGE_MAX_OFFSET / 2 + 3], [2, 500]] as const) {
      const res = await ctx().app.inject({ method: 'GET', url: `${URL}?limit=${limit}&page=${page}`, headers: bearer(ws.owner) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json();
      expect([...Value.Errors(CustomerList, body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
      expect(body).toEqual({ rows: expected.slice((page - 1) * limit, page * limit), total: customers.length, page, pageSize: limit });
      // Fields in the schema's order, as the serializer wrote them.
      if (body.rows[0]) expect(Object.keys(body.rows[0])).toEqual(Object.keys(CustomerList.properties.rows.items.properties));
    }
  });

  it('searches e-mail, first and last name case-insensitively by substring', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { email: 'zed.alpha@x.test', firstName: 'Quincy', lastName: 'Marsh' },
        { email: 'other@x.test', firstName: 'Ann', lastName: 'QUINCEY' },
        { email: 'none@x.test', firstName: 'Bob', lastName: 'Stone' },
        { email: 'percent@x.test', firstName: '100%', lastName: 'Real' },
      ],
    });
    const search = async (term: string) =>
      (await ctx().app.inject({ method: 'GET', url: `${URL}?search=${encodeURIComponent(term)}`, headers: bearer(ws.owner) })).json();
    expect((await search('QUINC')).total).toBe(2);
    expect((await search('ZED.ALPHA')).total).toBe(1);
    expect((await search('marsh')).total).toBe(1);
    expect((await search('stone')).rows[0].email).toBe('none@x.test');
    expect((await search('nomatch')).total).toBe(0);
    // LIKE wildcards are literal characters in a search.
    expect((await search('%')).total).toBe(1);
    expect((await search('_')).total).toBe(0);
  });

  it('filters by product and never widens a product-scoped member', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'scoped', permissions: ['customers.view'], products: ['p1'] }],
      customers: [
        { email: 'a@x.test', products: ['p1'] },
        { email: 'b@x.test', products: ['p2'] },
        { email: 'c@x.test', products: ['p1', 'p2'] },
        { email: 'd@x.test' },
      ],
    });
    const get = async (token: string, query = '') => (await ctx().app.inject({ method: 'GET', url: `${URL}${query}`, headers: bearer(token) })).json();
    expect((await get(ws.owner)).total).toBe(4);
    expect((await get(ws.owner, `?productId=${ws.ids.products.p2}`)).total).toBe(2);

    const scoped = ws.tokens.scoped!;
    const mine = await get(scoped);
    expect(mine.total).toBe(2);
    expect(mine.rows.map((r: { email: string }) => r.email).sort()).toEqual(['a@x.test', 'c@x.test']);
    // Product ids of unassigned products are not disclosed either.
    for (const row of mine.rows) expect(row.product_ids).toEqual([ws.ids.products.p1]);
    // A filter on an unassigned product narrows to nothing.
    const other = await get(scoped, `?productId=${ws.ids.products.p2}`);
    expect(other.total).toBe(0);
    expect(other.rows).toEqual([]);
  });

  it('filters by dateRange', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ email: 'now@x.test' }] });
    const get = async (range: string) =>
      ctx().app.inject({ method: 'GET', url: `${URL}?dateRange=${encodeURIComponent(range)}`, headers: bearer(ws.owner) });
    const today = new Date().toISOString().slice(0, 10);
    expect((await get('7d')).json().total).toBe(1);
    expect((await get('all')).json().total).toBe(1);
    expect((await get(`${today}..${today}`)).json().total).toBe(1);
    expect((await get(`${today}..`)).json().total).toBe(1);
    expect((await get('2001-01-01..2001-12-31')).json().total).toBe(0);
    for (const bad of ['yesterday', '2026-02-31..', '2026-13-01..2026-12-01', '2026-05-02..2026-05-01', '8d']) {
      const res = await get(bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });

  it('rejects bad paging and unknown parameters with 400 and the error shape', async () => {
    const ws = await seedWorkspace(ctx());
    for (const query of ['?page=0', '?limit=0', '?limit=501', '?page=abc', '?productId=-1', '?unknown=1', '?limit=1.5']) {
      const res = await ctx().app.inject({ method: 'GET', url: `${URL}${query}`, headers: bearer(ws.owner) });
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      const body = res.json();
      expect(body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      expect(typeof body.requestId).toBe('string');
      expect(body.errors.length).toBeGreaterThan(0);
    }
    const tooBig = await ctx().app.inject({ method: 'GET', url: `${URL}?limit=501`, headers: bearer(ws.owner) });
    expect(JSON.stringify(tooBig.json().errors)).toContain('500');
  });

  it('serves deep pages in the same order as shallow ones, also after changes', async () => {
    const ws = await seedWorkspace(ctx());
    const customers = Array.from({ length: 12_050 }, (_, i) => ({ email: `deep${i}@x.test` }));
    const imported = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: bearer(ws.owner), payload: { customers } });
    expect(imported.statusCode).toBe(201);
    const all = await ctx().database.db
      .selectFrom('developer_customers')
      .where('workspace_id', '=', ws.workspaceId)
      .where('status', '=', 'active')
      .select(['id', 'account_id'])
      .orderBy('id', 'desc')
      .execute();
    const page = async (n: number, limit = 500) =>
      (await ctx().app.inject({ method: 'GET', url: `${URL}?limit=${limit}&page=${n}`, headers: bearer(ws.owner) })).json();
    // Offsets 10,000 and beyond use the anchors; compare with the plain order.
    for (const [n, limit] of [[21, 500], [24, 500], [25, 500], [102, 100], [1000, 500]] as const) {
      const body = await page(n, limit);
      const expected = all.slice((n - 1) * limit, n * limit).map((r) => r.id);
      expect(body.rows.map((r: { id: number }) => r.id), `page ${n}`).toEqual(expected);
      expect(body.total).toBe(all.length);
    }
    // A removal shifts every later position by one; the anchors follow.
    const victim = all[5]!;
    await ctx().app.inject({ method: 'DELETE', url: `${URL}/${victim.id}`, headers: bearer(ws.owner), payload: { confirm: true } });
    const after = all.filter((r) => r.id !== victim.id);
    const shifted = await page(21);
    expect(shifted.rows.map((r: { id: number }) => r.id)).toEqual(after.slice(10_000, 10_500).map((r) => r.id));
    expect(shifted.total).toBe(after.length);
  });

  it('answers 403 without customers.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'nope', permissions: ['products.view'], products: 'all' }] });
    const res = await ctx().app.inject({ method: 'GET', url: URL, headers: bearer(ws.tokens.nope!) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
  });

  it('does not return customers of another workspace', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ email: 'only-a@x.test' }] });
    const b = await seedWorkspace(ctx(), { customers: [{ email: 'only-b@x.test' }] });
    const res = await ctx().app.inject({ method: 'GET', url: `${URL}?search=only-`, headers: bearer(a.owner) });
    expect(res.json().rows.map((r: { email: string }) => r.email)).toEqual(['only-a@x.test']);
    // Naming the other workspace in the header does not help a non-member.
    const picked = await ctx().app.inject({
      method: 'GET',
      url: URL,
      headers: { ...bearer(a.owner), 'x-workspace-id': String(b.workspaceId) },
    });
    expect(picked.statusCode).toBe(403);
    expect(picked.json().code).toBe('WORKSPACE_ACCESS_DENIED');
  });
});
