import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

// Real parallelism needs PostgreSQL (PGlite serialises transactions); the same
// assertions hold on both.
describe('customer import under concurrency', () => {
  it('never duplicates a customer and keeps insertedCount and the total exact', async () => {
    const ws = await seedWorkspace(ctx());
    const emails = Array.from({ length: 40 }, (_, i) => `race${i}@x.test`);
    const requests = Array.from({ length: 8 }, (_, k) =>
      ctx().app.inject({
        method: 'POST',
        url: '/api/developer/customers/import',
        headers: bearer(ws.owner),
        // Overlapping, shuffled subsets so the imports contend for the same rows.
        payload: { customers: emails.filter((_, i) => (i + k) % 3 !== 0).map((email) => ({ email, productId: ws.ids.products.p1 })) },
      }),
    );
    const results = await Promise.all(requests);
    for (const r of results) expect(r.statusCode).toBe(201);
    const ok = results;
    const inserted = ok.reduce((sum, r) => sum + r.json().insertedCount, 0);

    const rows = await sql<{ n: number; distinct_accounts: number }>`
      select count(*)::int as n, count(distinct account_id)::int as distinct_accounts
      from developer_customers where workspace_id = ${ws.workspaceId}`.execute(ctx().database.db);
    expect(rows.rows[0]!.n).toBe(rows.rows[0]!.distinct_accounts);
    expect(inserted).toBe(rows.rows[0]!.n);
    const list = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) })).json();
    expect(list.total).toBe(rows.rows[0]!.n);
    const accounts = await sql<{ n: number }>`select count(*)::int as n from accounts where email_normalized like 'race%@x.test'`.execute(
      ctx().database.db,
    );
    expect(accounts.rows[0]!.n).toBeLessThanOrEqual(emails.length);
  });
});
