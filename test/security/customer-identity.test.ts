import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';

// A workspace must learn nothing about a person's relationships with other vendors. When
// customer_id was the global account id, a vendor importing an address another vendor already
// had saw an older, smaller id than for a new person; the verification state was shared too.

const ctx = useTestApp();

describe('customer identity across workspaces', () => {
  it('gives an address known to another workspace an id of this workspace, with this workspace’s verification state', async () => {
    const email = `shared-${unique()}@x.test`;
    const first = await seedWorkspace(ctx(), { customers: [{ key: 'c', email, firstName: 'Known' }] });
    // The first vendor has verified the address (and the global account says so too).
    await ctx().database.db.updateTable('developer_customers').set({ email_verified: true }).where('id', '=', first.ids.customers.c!).execute();
    await ctx().database.db.updateTable('accounts').set({ email_verified: true }).where('email_normalized', '=', email).execute();

    const second = await seedWorkspace(ctx());
    const fresh = `fresh-${unique()}@x.test`;
    const imported = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: bearer(second.owner),
      payload: { customers: [{ email }, { email: fresh }] },
    });
    expect(imported.statusCode, imported.body).toBe(201);

    const rows = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(second.owner) })).json().rows as Array<{
      id: number;
      customer_id: number;
      email: string;
      email_verification_status: string;
    }>;
    const known = rows.find((r) => r.email === email)!;
    const other = rows.find((r) => r.email === fresh)!;
    // Both ids are this workspace's own relationship ids, created in this import: no older id for the known person.
    expect(known.customer_id).toBe(known.id);
    expect(other.customer_id).toBe(other.id);
    expect(known.customer_id).not.toBe(first.ids.customers.c);
    expect(Math.abs(known.customer_id - other.customer_id)).toBe(1);
    // Verification is per workspace: the other vendor's (or the global) state does not show.
    expect(known.email_verification_status).toBe('unverified');
    const firstRows = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(first.owner) })).json().rows;
    expect(firstRows[0]).toMatchObject({ customer_id: first.ids.customers.c, email_verification_status: 'verified' });
  });

  it('uses the same customer_id in customer, serial and purchase rows, and accepts it in manual grants', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c', products: ['p1'] }],
      orders: [{ key: 'o', customer: 'c', items: [{ product: 'p1', priceCents: 100, serial: 's' }] }],
      serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }],
    });
    const get = async (url: string) => (await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.owner) })).json();
    const customerId = ws.ids.customers.c!;
    expect((await get('/api/developer/customers')).rows[0].customer_id).toBe(customerId);
    expect((await get('/api/developer/serials')).rows[0].customer_id).toBe(customerId);
    expect((await get('/api/developer/purchases')).rows[0].customer_id).toBe(customerId);

    const grant = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p2, customerId, reason: 'support' },
    });
    expect(grant.statusCode, grant.body).toBe(201);
    const body = grant.json();
    expect(body.customer.customer_id).toBe(customerId);
    expect(body.entitlements[0].customer_id).toBe(customerId);
    expect(body.items[0].customer_id).toBe(customerId);
    expect(body.serials[0].customer_id).toBe(customerId);
  });

  it('answers 404 for the customer_id of another workspace in grants and removal', async () => {
    const mine = await seedWorkspace(ctx());
    const theirs = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const grant = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(mine.owner),
      payload: { productId: mine.ids.products.p1, customerId: theirs.ids.customers.c, reason: 'probe' },
    });
    expect(grant.statusCode).toBe(404);
    const remove = await ctx().app.inject({
      method: 'DELETE',
      url: `/api/developer/customers/${theirs.ids.customers.c}`,
      headers: bearer(mine.owner),
      payload: { confirm: true },
    });
    expect(remove.statusCode).toBe(404);
  });
});
