import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

// An import of more rows than one write batch (5,000) takes the staged path on PostgreSQL (COPY into a temporary
// table, then set-based statements per range of rows) and the statement path on the embedded database. Both must
// write the same thing: merged duplicates, refreshed names, re-activated removals, links, consents, the
// customer.created events of the relationships made active, and the counts.

const ctx = useTestApp();
const URL = '/api/developer/customers/import';
const ROWS = 6_200;

const get = async (token: string, url: string) => (await ctx().app.inject({ method: 'GET', url, headers: bearer(token) })).json();

describe('a customer import larger than one write batch', () => {
  it('writes what the statement path writes: merges, re-activations, links, consents, events and counts', { timeout: 120_000 }, async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'scoped', permissions: ['customers.view', 'customers.manage'], products: ['p1'] }] });
    const { db } = ctx().database;
    const { p1, p2 } = ws.ids.products as { p1: number; p2: number };

    // Before: three customers, one of them removed.
    const first = await ctx().app.inject({
      method: 'POST',
      url: URL,
      headers: bearer(ws.owner),
      payload: { customers: [{ email: 'kept@big.test', firstName: 'Old', lastName: 'Name' }, { email: 'gone@big.test', firstName: 'Gone' }, { email: 'linked@big.test', productId: p1 }] },
    });
    expect(first.statusCode, first.body).toBe(201);
    const before = await get(ws.owner, '/api/developer/customers?search=gone%40big');
    const goneId = before.rows[0].id as number;
    const removed = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${goneId}`, headers: bearer(ws.owner), payload: { confirm: true } });
    expect(removed.statusCode, removed.body).toBe(200);

    // A listener for customer.created (written directly: no delivery happens in this test).
    await db.insertInto('webhook_endpoints').values({ workspace_id: ws.workspaceId, url: 'https://hooks.example.com/in', description: null, event_types: ['customer.created'], secret_sealed: 'x' }).execute();

    const customers: Array<Record<string, unknown>> = Array.from({ length: ROWS }, (_, i) => ({
      email: `row-${String(i).padStart(5, '0')}@big.test`,
      firstName: `F${i}`,
      ...(i % 3 === 0 ? { productId: i % 2 === 0 ? p1 : p2 } : {}),
      ...(i % 5 === 0 ? { marketingConsent: true } : {}),
    }));
    customers.push(
      { email: 'KEPT@big.test', firstName: 'New' }, // an existing customer: names refreshed, not counted
      { email: 'gone@big.test', firstName: 'Back', productId: p2 }, // a removed one: active again, counted
      { email: 'row-00001@big.test', lastName: 'Later', productId: p1, marketingConsent: true }, // a duplicate: merged
      { email: 'odd@big.test', firstName: 'Tab\there', lastName: 'Back\\slash\nline' }, // COPY's special characters
      { email: 'not an e-mail' }, // a row error
    );
    const res = await ctx().app.inject({ method: 'POST', url: URL, headers: bearer(ws.owner), payload: { customers } });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: ROWS + 4, insertedCount: ROWS + 2, failedCount: 1 });
    expect(res.json().errors).toEqual([expect.objectContaining({ row: ROWS + 5, field: 'email' })]);

    expect((await get(ws.owner, '/api/developer/customers?limit=1')).total).toBe(ROWS + 4);
    const linkedP1 = customers.filter((c, i) => i < ROWS && i % 3 === 0 && i % 2 === 0).length + 2; // + linked@, + row-00001
    const linkedP2 = customers.filter((c, i) => i < ROWS && i % 3 === 0 && i % 2 === 1).length + 1; // + gone@
    expect((await get(ws.owner, `/api/developer/customers?limit=1&productId=${p1}`)).total).toBe(linkedP1);
    expect((await get(ws.owner, `/api/developer/customers?limit=1&productId=${p2}`)).total).toBe(linkedP2);

    const byEmail = async (term: string) => (await get(ws.owner, `/api/developer/customers?search=${encodeURIComponent(term)}`)).rows[0];
    expect(await byEmail('kept@big')).toMatchObject({ first_name: 'New', last_name: 'Name', status: 'active' });
    expect(await byEmail('gone@big')).toMatchObject({ id: goneId, first_name: 'Back', status: 'active', product_ids: [p2] });
    expect(await byEmail('odd@big')).toMatchObject({ first_name: 'Tab\there', last_name: 'Back\\slash\nline' });
    expect(await byEmail('row-00001@big')).toMatchObject({ first_name: 'F1', last_name: 'Later', product_ids: [p1] });

    const consents = await sql<{ n: number }>`select count(*)::int as n from marketing_consents where workspace_id = ${ws.workspaceId}`.execute(db);
    expect(consents.rows[0]!.n).toBe(customers.filter((c, i) => i < ROWS && i % 5 === 0).length + 1);

    const events = await sql<{ data: { customer_id: number; email: string; first_name: string | null; source: string } }>`
      select data from webhook_events where workspace_id = ${ws.workspaceId} and type = 'customer.created' order by id`.execute(db);
    expect(events.rows).toHaveLength(ROWS + 2);
    const gone = events.rows.find((e) => e.data.email === 'gone@big.test')!.data;
    expect(gone).toEqual({ customer_id: goneId, email: 'gone@big.test', first_name: 'Back', last_name: null, source: 'import' });
    expect(new Set(events.rows.map((e) => e.data.customer_id)).size).toBe(ROWS + 2);

    // The maintained counters agree with the rows.
    const counts = await sql<{ active: number; p1: number }>`
      select (select active_customers from workspace_stats where workspace_id = ${ws.workspaceId}) as active,
        (select active_customers from product_customer_counts where workspace_id = ${ws.workspaceId} and product_id = ${p1}) as p1`.execute(db);
    expect(counts.rows[0]).toEqual({ active: ROWS + 4, p1: linkedP1 });

    // A product-scoped member's large import only fills gaps in names.
    const scopedRows = Array.from({ length: 5_100 }, (_, i) => ({ email: `row-${String(i).padStart(5, '0')}@big.test`, firstName: `S${i}`, lastName: `L${i}`, productId: p1 }));
    const scoped = await ctx().app.inject({ method: 'POST', url: URL, headers: bearer(ws.tokens.scoped!), payload: { customers: scopedRows } });
    expect(scoped.statusCode, scoped.body).toBe(201);
    expect(scoped.json()).toMatchObject({ importedCount: 5_100, insertedCount: 0 });
    expect(await byEmail('row-00002@big')).toMatchObject({ first_name: 'F2', last_name: 'L2', product_ids: [p1] });
  });
});

describe('large customer imports at the same time', () => {
  it('never duplicates a customer, deadlocks or miscounts when two staged imports share rows', { timeout: 120_000 }, async () => {
    const ws = await seedWorkspace(ctx());
    const { db } = ctx().database;
    // 9,000 e-mails; each import takes 6,000 of them, 3,000 in common, in a different order.
    const emails = Array.from({ length: 9_000 }, (_, i) => `both-${i}@race.test`);
    const a = emails.slice(0, 6_000).map((email) => ({ email, productId: ws.ids.products.p1 }));
    const b = emails.slice(3_000).reverse().map((email) => ({ email, productId: ws.ids.products.p2 }));
    const results = await Promise.all(
      [a, b].map((customers) => ctx().app.inject({ method: 'POST', url: URL, headers: bearer(ws.owner), payload: { customers } })),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(201);
    const inserted = results.reduce((sum, r) => sum + (r.json().insertedCount as number), 0);
    const rows = await sql<{ n: number; distinct_accounts: number }>`
      select count(*)::int as n, count(distinct account_id)::int as distinct_accounts from developer_customers where workspace_id = ${ws.workspaceId}`.execute(db);
    expect(rows.rows[0]).toEqual({ n: 9_000, distinct_accounts: 9_000 });
    expect(inserted).toBe(9_000);
    expect((await get(ws.owner, '/api/developer/customers?limit=1')).total).toBe(9_000);
    expect((await get(ws.owner, `/api/developer/customers?limit=1&productId=${ws.ids.products.p1}`)).total).toBe(6_000);
    expect((await get(ws.owner, `/api/developer/customers?limit=1&productId=${ws.ids.products.p2}`)).total).toBe(6_000);
  });
});
