import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { insertBulkItems, seedShop } from '../purchases/purchases-helpers.js';

// A list page is one statement: its rows and its exact total together (docs/performance.md, "Lists in one
// statement"). Statements of the request's authentication touch none of the list's tables, so every statement
// that names one of them (or the counters) belongs to the list.
const queries: string[] = [];
const ctx = useTestApp({ onQuery: (sql) => queries.push(sql) });

const LIST_TABLES = /\b(developer_customers|customer_products|serials|order_items|orders|workspace_stats)\b/;

async function listStatements(url: string, token: string): Promise<{ body: { rows: unknown[]; total: number }; statements: string[] }> {
  queries.length = 0;
  const res = await ctx().app.inject({ method: 'GET', url, headers: bearer(token) });
  expect(res.statusCode, url).toBe(200);
  return { body: res.json(), statements: queries.filter((q) => LIST_TABLES.test(q)) };
}

describe('list pages run one statement', () => {
  it('customers: unfiltered, searched and filtered pages, and an empty page past the end, each with its exact total', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { key: 'a', email: 'ann.lee@x.test', products: ['p1'] },
        { key: 'b', email: 'bob.stone@x.test' },
        { key: 'c', email: 'cat.lee@x.test' },
      ],
    });
    for (const [query, total, rows] of [['', 3, 3], ['?search=lee', 2, 2], [`?productId=${ws.ids.products.p1}`, 1, 1], ['?page=5&limit=1', 3, 0]] as const) {
      const { body, statements } = await listStatements(`/api/developer/customers${query}`, ws.owner);
      expect(statements, query).toHaveLength(1);
      expect({ total: body.total, rows: body.rows.length }, query).toEqual({ total, rows });
    }
  });

  it('serials: page 1, a filtered page, and a deep page once its anchors are built', async () => {
    const ws = await seedWorkspace(ctx());
    const generate = (quantity: number) =>
      ctx().app.inject({ method: 'POST', url: '/api/developer/serials/generate', headers: bearer(ws.owner), payload: { productId: ws.ids.products.p1, quantity } });
    expect((await generate(10_000)).statusCode).toBe(201);
    expect((await generate(100)).statusCode).toBe(201);
    for (const query of ['', '?status=available&limit=10']) {
      const { body, statements } = await listStatements(`/api/developer/serials${query}`, ws.owner);
      expect(statements, query).toHaveLength(1);
      expect(body.total, query).toBe(10_100);
    }
    // The first deep page builds the anchors (one more statement); later ones are a single statement.
    await listStatements('/api/developer/serials?page=201&limit=50', ws.owner);
    const deep = await listStatements('/api/developer/serials?page=202&limit=50', ws.owner);
    expect(deep.statements).toHaveLength(1);
    expect({ total: deep.body.total, rows: deep.body.rows.length }).toEqual({ total: 10_100, rows: 50 });
    // A change of the list is seen by the deep page's own statement: the anchors are rebuilt and the page read again.
    expect((await generate(3)).statusCode).toBe(201);
    const after = await listStatements('/api/developer/serials?page=202&limit=50', ws.owner);
    expect(after.body.total).toBe(10_103);
    expect(after.statements.length).toBeLessThanOrEqual(3);
  });

  it('purchases: unfiltered, filtered and searched pages', async () => {
    const ws = await seedShop(ctx);
    for (const query of ['', '?channel=managed_checkout&refundStatus=none', '?search=ann']) {
      const { body, statements } = await listStatements(`/api/developer/purchases${query}`, ws.owner);
      expect(statements, query).toHaveLength(1);
      expect(body.total, query).toBeGreaterThan(0);
      expect(body.rows.length, query).toBe(body.total);
    }
  });

  it('purchases: a repeated filter keeps an exact total through a refund, a change of no filtered column, and new items', async () => {
    const ws = await seedShop(ctx);
    const url = `/api/developer/purchases?refundStatus=none&productIds=${ws.ids.products.p1},${ws.ids.products.p2}`;
    const db = ctx().database.db;
    const expected = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from order_items where workspace_id = ${ws.workspaceId} and refund_status = 'none'
          and product_id in (${ws.ids.products.p1}, ${ws.ids.products.p2})`.execute(db)
      ).rows[0]!.n;
    const total = async () => {
      const { body, statements } = await listStatements(url, ws.owner);
      expect(statements).toHaveLength(1);
      return body.total;
    };
    const before = await expected();
    expect(before).toBeGreaterThan(1);
    expect(await total()).toBe(before);
    expect(await total()).toBe(before);
    // A refund takes an item out of the filter: the cached total must not survive it.
    await sql`update order_items set refund_status = 'full' where id = (
      select min(id) from order_items where workspace_id = ${ws.workspaceId} and refund_status = 'none' and product_id = ${ws.ids.products.p1})`.execute(db);
    expect(await total()).toBe(before - 1);
    await sql`update order_items set status = status where workspace_id = ${ws.workspaceId}`.execute(db);
    expect(await total()).toBe(before - 1);
    await insertBulkItems(ctx, {
      workspaceId: ws.workspaceId,
      orderId: ws.ids.orders.o1!,
      productId: ws.ids.products.p2!,
      customerId: ws.ids.customers.ann!,
      count: 4,
      start: '2026-01-01T00:00:00Z',
      step: '1 second',
    });
    expect(await total()).toBe(before + 3);
    expect(await expected()).toBe(before + 3);
  });

  it('customers: a repeated search keeps an exact total through a rename, a removal and a new customer', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { key: 'a', email: 'ann@x.test', lastName: 'Lee' },
        { key: 'b', email: 'bob@x.test', lastName: 'Lee' },
        { key: 'c', email: 'cat@x.test', lastName: 'Stone' },
      ],
    });
    const total = async () => {
      const { body, statements } = await listStatements('/api/developer/customers?search=lee', ws.owner);
      expect(statements).toHaveLength(1);
      expect(body.rows).toHaveLength(body.total);
      return body.total;
    };
    expect(await total()).toBe(2);
    expect(await total()).toBe(2);
    await sql`update developer_customers set last_name = 'Lee' where id = ${ws.ids.customers.c!}`.execute(ctx().database.db);
    expect(await total()).toBe(3);
    const removed = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${ws.ids.customers.a!}`, headers: bearer(ws.owner), payload: { confirm: true } });
    expect(removed.statusCode).toBe(200);
    expect(await total()).toBe(2);
    const imported = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: bearer(ws.owner),
      payload: { customers: [{ email: 'dee.lee@x.test' }] },
    });
    expect(imported.statusCode).toBe(201);
    expect(await total()).toBe(3);
  });

  it('purchases: a repeated search keeps an exact total through a customer rename and new items', async () => {
    const ws = await seedShop(ctx);
    const db = ctx().database.db;
    const expected = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from order_items i where i.workspace_id = ${ws.workspaceId} and (
          i.customer_id in (select account_id from developer_customers where workspace_id = ${ws.workspaceId} and search_text like '%ann%')
          or i.order_id in (select id from orders where workspace_id = ${ws.workspaceId} and (lower(reference) like 'ann%' or lower(external_reference) like 'ann%')))`.execute(db)
      ).rows[0]!.n;
    const total = async () => {
      const { body, statements } = await listStatements('/api/developer/purchases?search=ann', ws.owner);
      expect(statements).toHaveLength(1);
      return body.total;
    };
    const before = await expected();
    expect(before).toBeGreaterThan(0);
    expect(await total()).toBe(before);
    expect(await total()).toBe(before);
    // Another buyer's name now contains the term: their items match without any item changing.
    await sql`update developer_customers set first_name = 'Annabel' where id = ${ws.ids.customers.cara!}`.execute(db);
    const renamed = await expected();
    expect(renamed).toBeGreaterThan(before);
    expect(await total()).toBe(renamed);
    await insertBulkItems(ctx, {
      workspaceId: ws.workspaceId,
      orderId: ws.ids.orders.o1!,
      productId: ws.ids.products.p2!,
      customerId: ws.ids.customers.ann!,
      count: 2,
      start: '2026-01-01T00:00:00Z',
      step: '1 second',
    });
    expect(await total()).toBe(renamed + 2);
  });
});
