import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { addActivations, client, expectProblem, MEMBERS, SERIALS } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const codes = (rows: Array<{ serial: string }>) => rows.map((r) => r.serial).sort();

describe('GET /api/developer/serials', () => {
  it('answers rows with the fields of contract 2.3', async () => {
    const ws = await seedWorkspace(ctx(), {
      productSettings: { maxActivations: 3 },
      customers: [{ key: 'c', products: ['p1'] }],
      orders: [{ key: 'o', customer: 'c' }],
      serials: [{ key: 'owned', product: 'p1', customer: 'c', order: 'o' }],
    });
    await addActivations(ctx, ws.workspaceId, ws.ids.serials.owned!, 1);

    const { rows, total } = await api.list(ws.owner);
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({
      id: ws.ids.serials.owned,
      serial: ws.serialCodes.owned,
      product_id: ws.ids.products.p1,
      product: `Product p1 ${ws.suffix}`,
      customer_id: ws.ids.customers.c,
      status: 'redeemed',
      redeemed: true,
      revoked: false,
      active_activation_count: 1,
      max_activations: 3,
      remaining_activations: 2,
      order_id: ws.ids.orders.o,
      origin: 'granted',
    });
  });

  it('reports revoked serials as revoked with no remaining activations', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    expect((await api.act(ws.owner, ws.ids.serials.s!, 'revoke')).statusCode).toBe(200);
    const [row] = (await api.list(ws.owner)).rows;
    expect(row).toMatchObject({ status: 'revoked', revoked: true, redeemed: false, remaining_activations: 0 });
  });

  it('filters by status available (inventory) or redeemed (in use)', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      serials: [
        { key: 'a1', product: 'p1' },
        { key: 'a2', product: 'p2' },
        { key: 'used', product: 'p1', customer: 'c' },
        { key: 'paused', product: 'p1' },
      ],
    });
    await api.act(ws.owner, ws.ids.serials.paused!, 'suspend');

    const available = await api.list(ws.owner, '?status=available');
    expect(codes(available.rows)).toEqual([ws.serialCodes.a1, ws.serialCodes.a2].sort());
    expect(available.total).toBe(2);
    const redeemed = await api.list(ws.owner, '?status=redeemed');
    expect(codes(redeemed.rows)).toEqual([ws.serialCodes.used]);
    expect((await api.list(ws.owner)).total).toBe(4);
  });

  it('searches codes by substring, ignoring case and dashes', async () => {
    const tag = unique().toUpperCase();
    const ws = await seedWorkspace(ctx(), {
      serials: [
        { key: 'moon', product: 'p1', code: `QX7K-${tag}-MOON` },
        { key: 'sun', product: 'p1', code: `qx7k${tag.toLowerCase()}sun` },
        { key: 'star', product: 'p2', code: `ZZZZ-${tag}-STAR` },
      ],
    });
    const search = async (term: string) => codes((await api.list(ws.owner, `?search=${encodeURIComponent(term)}`)).rows);

    expect(await search(`qx-7k${tag.toLowerCase()}`)).toEqual([ws.serialCodes.moon, ws.serialCodes.sun].sort());
    expect(await search(`${tag.toLowerCase()}-moon`)).toEqual([ws.serialCodes.moon]);
    expect(await search(`${tag}SUN`)).toEqual([ws.serialCodes.sun]);
    expect(await search(` zz-zz-${tag} `)).toEqual([ws.serialCodes.star]);
    expect(await search('NOPE-NOT-HERE')).toEqual([]);
  });

  it('treats LIKE wildcards and separators in a search as literal text', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    for (const term of ['%', '_', '\\', '----', "'; drop table serials; --", '💥', '@']) {
      const res = await api.get(ws.owner, `${SERIALS}?search=${encodeURIComponent(term)}`);
      expect(res.statusCode, term).toBe(200);
      expect(res.json().total, term).toBe(0);
    }
  });

  it('finds the serials of a customer by exact e-mail, in any case, only in this workspace', async () => {
    const tag = unique();
    const email = `Ann.Search-${tag}@X.test`;
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'ann', email }, { key: 'bob', email: `bob-${tag}@x.test` }],
      serials: [
        { key: 'a1', product: 'p1', customer: 'ann' },
        { key: 'a2', product: 'p2', customer: 'ann' },
        { key: 'other', product: 'p1' },
      ],
    });
    // The same person buys from another developer too.
    const other = await seedWorkspace(ctx(), { customers: [{ key: 'ann', email }], serials: [{ key: 'x', product: 'p1', customer: 'ann' }] });

    const search = async (token: string, term: string) => codes((await api.list(token, `?search=${encodeURIComponent(term)}`)).rows);
    expect(await search(ws.owner, email.toLowerCase())).toEqual([ws.serialCodes.a1, ws.serialCodes.a2].sort());
    expect(await search(ws.owner, email.toUpperCase())).toEqual([ws.serialCodes.a1, ws.serialCodes.a2].sort());
    expect(await search(ws.owner, `bob-${tag}@x.test`)).toEqual([]);
    expect(await search(other.owner, email)).toEqual([other.serialCodes.x]);
  });

  it('filters by product, and a product-scoped member sees only their products', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [MEMBERS.scoped],
      serials: [
        { key: 'p1a', product: 'p1' },
        { key: 'p1b', product: 'p1' },
        { key: 'p2', product: 'p2' },
      ],
    });
    const other = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });

    const byProduct = await api.list(ws.owner, `?productId=${ws.ids.products.p2}`);
    expect(codes(byProduct.rows)).toEqual([ws.serialCodes.p2]);
    expect((await api.list(ws.owner, `?productId=${other.ids.products.p1}`)).total).toBe(0);

    const scoped = await api.list(ws.tokens.scoped!);
    expect(codes(scoped.rows)).toEqual([ws.serialCodes.p1a, ws.serialCodes.p1b].sort());
    expect(scoped.total).toBe(2);
    // Asking for an unassigned product never widens the scope.
    const unassigned = await api.list(ws.tokens.scoped!, `?productId=${ws.ids.products.p2}`);
    expect(unassigned).toMatchObject({ rows: [], total: 0 });
    expect((await api.list(ws.tokens.scoped!, '?status=available&search=')).total).toBe(2);
  });

  it('filters by creation date window', async () => {
    const ws = await seedWorkspace(ctx(), {
      serials: [
        { key: 'old', product: 'p1' },
        { key: 'new1', product: 'p1' },
        { key: 'new2', product: 'p2' },
      ],
    });
    await sql`update serials set created_at = '2020-01-15T12:00:00Z' where id = ${ws.ids.serials.old}`.execute(ctx().database.db);
    const window = async (range: string) => codes((await api.list(ws.owner, `?dateRange=${range}`)).rows);

    expect(await window('2020-01-01..2020-01-31')).toEqual([ws.serialCodes.old]);
    expect(await window('..2020-01-15')).toEqual([ws.serialCodes.old]);
    expect(await window('2020-01-16..')).toEqual([ws.serialCodes.new1, ws.serialCodes.new2].sort());
    expect(await window('7d')).toEqual([ws.serialCodes.new1, ws.serialCodes.new2].sort());
    expect(await window('all')).toHaveLength(3);
  });

  it('pages newest first with an exact total', async () => {
    const ws = await seedWorkspace(ctx(), { serials: ['a', 'b', 'c', 'd', 'e'].map((key) => ({ key, product: 'p1' })) });
    const first = await api.list(ws.owner, '?limit=2');
    expect(first).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    const second = await api.list(ws.owner, '?limit=2&page=2');
    const third = await api.list(ws.owner, '?limit=2&page=3');
    expect(third.rows).toHaveLength(1);
    const ids = [...first.rows, ...second.rows, ...third.rows].map((r) => r.id);
    expect(ids).toEqual(Object.values(ws.ids.serials).sort((a, b) => b - a));
    expect(await api.list(ws.owner, '?limit=2&page=9')).toMatchObject({ rows: [], total: 5 });
    expect((await api.list(ws.owner)).pageSize).toBe(50);
  });

  it('needs serials.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.viewer, MEMBERS.manager, MEMBERS.outsider], serials: [{ key: 's', product: 'p1' }] });
    expect((await api.list(ws.tokens.viewer!)).total).toBe(1);
    expectProblem(await api.get(ws.tokens.manager!, SERIALS), 403, 'FORBIDDEN');
    expectProblem(await api.get(ws.tokens.outsider!, SERIALS), 403, 'FORBIDDEN');
  });

  it.each([
    ['an unknown status', 'status=revoked'],
    ['a status in the wrong case', 'status=AVAILABLE'],
    ['two statuses', 'status=available&status=redeemed'],
    ['page 0', 'page=0'],
    ['limit 0', 'limit=0'],
    ['a limit above 500', 'limit=501'],
    ['a non-numeric productId', 'productId=abc'],
    ['productId 0', 'productId=0'],
    ['a productId beyond int4', 'productId=2147483648'],
    ['an unknown dateRange', 'dateRange=soon'],
    ['an impossible calendar date', 'dateRange=2026-02-30..'],
    ['a dateRange that ends before it starts', 'dateRange=2026-05-01..2026-04-01'],
    ['a search over 200 characters', `search=${'a'.repeat(201)}`],
    ['an unknown parameter', 'sort=code'],
  ])('rejects %s with 400 VALIDATION_FAILED', async (_label, query) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.get(ws.owner, `${SERIALS}?${query}`), 400, 'VALIDATION_FAILED');
  });
});
