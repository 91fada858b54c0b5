import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, unique, useTestApp, type SeededWorkspace } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// Imports above the row threshold (5 here), or sent with `Prefer: respond-async`, run as jobs.

const ctx = useTestApp({ imports: { asyncThreshold: 5 } });

const post = (ws: SeededWorkspace, url: string, payload: object, headers: Record<string, string> = {}, token = ws.owner) =>
  ctx().app.inject({ method: 'POST', url, headers: { ...bearer(token), ...headers }, payload });

async function settle(token: string, location: string) {
  await ctx().app.jobs.idle();
  const res = await ctx().app.inject({ method: 'GET', url: location, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const customers = (n: number, tag = unique()) => Array.from({ length: n }, (_, i) => ({ email: `bulk-${i}-${tag}@x.test`, firstName: `N${i}` }));

describe('imports as jobs', () => {
  it('answers 202 with the import resource and Location above the threshold, then reports the outcome', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await post(ws, '/api/developer/customers/import', { customers: customers(12) });
    expect(res.statusCode).toBe(202);
    const location = res.headers.location as string;
    expect(location).toMatch(/^\/api\/developer\/imports\/\d+$/);
    expect(res.json()).toMatchObject({ kind: 'customers', state: 'queued', totalRows: 12, processedRows: 0, importedCount: null, errors: [] });

    const done = await settle(ws.owner, location);
    expect(done).toMatchObject({ state: 'succeeded', totalRows: 12, processedRows: 12, importedCount: 12, insertedCount: 12, failedCount: 0, errors: [] });
    expect(done.startedAt).toEqual(expect.any(String));
    expect(done.finishedAt).toEqual(expect.any(String));
    const list = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) })).json();
    expect(list.total).toBe(12);
  });

  it('keeps small imports synchronous, unless the client asks for respond-async', async () => {
    const ws = await seedWorkspace(ctx());
    expect((await post(ws, '/api/developer/customers/import', { customers: customers(3) })).statusCode).toBe(201);
    const asked = await post(ws, '/api/developer/customers/import', { customers: customers(2) }, { prefer: 'respond-async' });
    expect(asked.statusCode).toBe(202);
    expect(await settle(ws.owner, asked.headers.location as string)).toMatchObject({ state: 'succeeded', importedCount: 2 });
  });

  it('reports row errors of a partial import, and a rejected import as failed with nothing written', async () => {
    const ws = await seedWorkspace(ctx());
    const partial = await post(ws, '/api/developer/customers/import', { customers: [...customers(5), { email: 'not-an-email' }] });
    expect(partial.statusCode).toBe(202);
    expect(await settle(ws.owner, partial.headers.location as string)).toMatchObject({
      state: 'succeeded',
      importedCount: 5,
      failedCount: 1,
      errors: [{ row: 6, field: 'email', code: 'INVALID_EMAIL' }],
    });

    const other = await seedWorkspace(ctx());
    const rejected = await post(other, '/api/developer/customers/import', { customers: Array.from({ length: 6 }, () => ({ email: 'nope' })) });
    const outcome = await settle(other.owner, rejected.headers.location as string);
    expect(outcome).toMatchObject({ state: 'failed', importedCount: 0, insertedCount: 0, failedCount: 6, failure: expect.any(String) });
    expect(outcome.errors).toHaveLength(6);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(other.owner) })).json().total).toBe(0);
  });

  it('runs serial and purchase imports as jobs too, and CSV uploads', async () => {
    const ws = await seedWorkspace(ctx());
    const tag = unique().toUpperCase();
    const serials = await post(ws, '/api/developer/serials/import', {
      serials: Array.from({ length: 6 }, (_, i) => ({ serialCode: `ASYNC-${tag}-${i}`, productId: ws.ids.products.p1 })),
    });
    expect(serials.statusCode).toBe(202);
    expect(await settle(ws.owner, serials.headers.location as string)).toMatchObject({ kind: 'serials', state: 'succeeded', insertedCount: 6 });

    const purchases = await post(ws, '/api/developer/purchases/import', {
      purchases: Array.from({ length: 6 }, (_, i) => ({ email: `p${i}-${tag.toLowerCase()}@x.test`, productId: ws.ids.products.p2, price: '9.99', externalReference: `R-${i}` })),
    });
    expect(purchases.statusCode).toBe(202);
    expect(await settle(ws.owner, purchases.headers.location as string)).toMatchObject({ kind: 'purchases', state: 'succeeded', insertedCount: 6 });

    const csv = `email\n${customers(7).map((c) => c.email).join('\n')}\n`;
    const form = multipart([{ name: 'file', value: csv, filename: 'c.csv' }]);
    const upload = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(upload.statusCode).toBe(202);
    expect(await settle(ws.owner, upload.headers.location as string)).toMatchObject({ state: 'succeeded', importedCount: 7 });
  });

  it('shows an import to its author and all-products readers only; another workspace gets 404', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [
        { key: 'reader', permissions: ['customers.view'], products: 'all' },
        { key: 'scoped', permissions: ['customers.view', 'customers.manage'], products: ['p1'] },
        { key: 'blind', permissions: ['serials.view'], products: 'all' },
      ],
    });
    const other = await seedWorkspace(ctx());
    const res = await post(ws, '/api/developer/customers/import', { customers: customers(6) });
    const location = res.headers.location as string;
    await ctx().app.jobs.idle();
    const get = (token: string) => ctx().app.inject({ method: 'GET', url: location, headers: bearer(token) });
    expect((await get(ws.owner)).statusCode).toBe(200);
    expect((await get(ws.tokens.reader!)).statusCode).toBe(200);
    expect((await get(ws.tokens.scoped!)).statusCode).toBe(404);
    expect((await get(ws.tokens.blind!)).statusCode).toBe(403);
    expect((await get(other.owner)).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: location })).statusCode).toBe(401);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/imports/0', headers: bearer(ws.owner) })).statusCode).toBe(400);
  });

  it('fails a queued import whose author lost the permission before it ran, writing nothing', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'temp', permissions: ['customers.view', 'customers.manage'], products: 'all' }] });
    // Stop this app's runner so the import waits in the queue while the permission changes.
    await ctx().app.jobs.stop(1_000);
    try {
      const res = await post(ws, '/api/developer/customers/import', { customers: customers(6) }, {}, ws.tokens.temp!);
      expect(res.statusCode).toBe(202);
      await ctx()
        .database.db.updateTable('memberships')
        .set({ permissions: ['customers.view'] })
        .where('workspace_id', '=', ws.workspaceId)
        .where('account_id', '=', ws.ids.accounts.temp!)
        .execute();
      ctx().app.jobs.start();
      const outcome = await settle(ws.tokens.temp!, res.headers.location as string);
      expect(outcome).toMatchObject({ state: 'failed', failure: expect.stringContaining('permission') });
      expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) })).json().total).toBe(0);
    } finally {
      ctx().app.jobs.start();
    }
  });
});
