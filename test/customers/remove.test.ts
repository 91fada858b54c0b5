import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

const remove = (token: string, customerId: number, payload?: unknown) =>
  ctx().app.inject({
    method: 'DELETE',
    url: `/api/developer/customers/${customerId}`,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const list = async (token: string) =>
  (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(token) })).json();

describe('DELETE /api/developer/customers/:customerId', () => {
  it('removes the relationship and marketing records but keeps the account', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [
        { key: 'gone', email: 'gone@x.test', firstName: 'Gone', products: ['p1'], marketingConsent: true },
        { key: 'stay', email: 'stay@x.test', marketingConsent: true },
      ],
    });
    const id = ws.ids.customers.gone!;
    const res = await remove(ws.owner, id, { confirm: true, reason: 'GDPR request' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, alreadyRemoved: false, already_removed: false, customer_id: id });
    expect(typeof res.json().developer_customer_id).toBe('number');
    expect(typeof res.json().message).toBe('string');

    const after = await list(ws.owner);
    expect(after.total).toBe(1);
    expect(after.rows.map((r: { email: string }) => r.email)).toEqual(['stay@x.test']);
    const exported = parse((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers/export', headers: bearer(ws.owner) })).body, {
      columns: true,
    }) as Array<{ email: string }>;
    expect(exported.map((r) => r.email)).toEqual(['stay@x.test']);

    const db = ctx().database.db;
    const accountOf = async (relationshipId: number) =>
      (await db.selectFrom('developer_customers').where('id', '=', relationshipId).select('account_id').executeTakeFirstOrThrow()).account_id;
    const account = await db.selectFrom('accounts').where('id', '=', await accountOf(id)).select('email').executeTakeFirst();
    expect(account?.email).toBe('gone@x.test');
    const consents = await db.selectFrom('marketing_consents').where('workspace_id', '=', ws.workspaceId).select('account_id').execute();
    expect(consents.map((c) => c.account_id)).toEqual([await accountOf(ws.ids.customers.stay!)]);
    const audit = await db
      .selectFrom('audit_log')
      .where('workspace_id', '=', ws.workspaceId)
      .where('action', '=', 'customer.removed')
      .select(['subject_id', 'actor_account_id'])
      .execute();
    expect(audit).toEqual([{ subject_id: String(id), actor_account_id: ws.ids.accounts.owner }]);
  });

  it('answers alreadyRemoved on a second call', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', email: 'twice@x.test' }] });
    expect((await remove(ws.owner, ws.ids.customers.c!, { confirm: true })).json().alreadyRemoved).toBe(false);
    const again = await remove(ws.owner, ws.ids.customers.c!, { confirm: true });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ alreadyRemoved: true, already_removed: true });
    expect((await list(ws.owner)).total).toBe(0);
  });

  it('accepts confirmation "yes" in any case with surrounding whitespace', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'a' }, { key: 'b' }, { key: 'c' }] });
    for (const [key, confirmation] of [['a', 'yes'], ['b', '  YeS '], ['c', '\tYES\n']] as const) {
      const res = await remove(ws.owner, ws.ids.customers[key]!, { confirmation });
      expect(res.statusCode, confirmation).toBe(200);
    }
  });

  it('answers 400 CONFIRMATION_REQUIRED without a valid confirmation', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const id = ws.ids.customers.c!;
    for (const payload of [undefined, {}, { confirm: false }, { confirmation: 'no' }, { confirmation: 'yes please' }, { confirmation: 'y' }]) {
      const res = await remove(ws.owner, id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('CONFIRMATION_REQUIRED');
    }
    // A string "true" is not a boolean: the body is validated strictly.
    const typed = await remove(ws.owner, id, { confirm: 'true' });
    expect(typed.statusCode).toBe(400);
    expect(typed.json().code).toBe('VALIDATION_FAILED');
    expect((await list(ws.owner)).total).toBe(1);
  });

  it('re-creates the relationship on a later import', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', email: 'back@x.test', firstName: 'Old' }] });
    await remove(ws.owner, ws.ids.customers.c!, { confirm: true });
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: bearer(ws.owner),
      payload: { customers: [{ email: 'back@x.test', firstName: 'New' }] },
    });
    expect(res.json()).toMatchObject({ importedCount: 1, insertedCount: 1 });
    const after = await list(ws.owner);
    expect(after.total).toBe(1);
    expect(after.rows[0]).toMatchObject({ customer_id: ws.ids.customers.c, first_name: 'New', status: 'active' });
  });

  it('answers 404 for a customer of another workspace and leaves it untouched', async () => {
    const a = await seedWorkspace(ctx());
    const b = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const res = await remove(a.owner, b.ids.customers.c!, { confirm: true });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
    expect((await list(b.owner)).total).toBe(1);
    expect((await remove(a.owner, 2147483647, { confirm: true })).statusCode).toBe(404);
  });

  it('answers 404 to a product-scoped member for a customer of other products, 403 without customers.manage', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [
        { key: 'scoped', permissions: ['customers.manage'], products: ['p1'] },
        { key: 'viewer', permissions: ['customers.view'], products: 'all' },
      ],
      customers: [{ key: 'p2c', products: ['p2'] }, { key: 'p1c', products: ['p1'] }],
    });
    expect((await remove(ws.tokens.scoped!, ws.ids.customers.p2c!, { confirm: true })).statusCode).toBe(404);
    expect((await remove(ws.tokens.scoped!, ws.ids.customers.p1c!, { confirm: true })).statusCode).toBe(200);
    const denied = await remove(ws.tokens.viewer!, ws.ids.customers.p2c!, { confirm: true });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('FORBIDDEN');
  });

  it('answers 400 for a malformed id and 401 without a token', async () => {
    const ws = await seedWorkspace(ctx());
    for (const id of ['abc', '0', '-5', '99999999999']) {
      const res = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${id}`, headers: bearer(ws.owner), payload: { confirm: true } });
      expect(res.statusCode, id).toBe(400);
    }
    expect((await ctx().app.inject({ method: 'DELETE', url: '/api/developer/customers/1', payload: { confirm: true } })).statusCode).toBe(401);
  });

  it('keeps the total exact under concurrent removals', async () => {
    const ws = await seedWorkspace(ctx(), { customers: Array.from({ length: 6 }, (_, i) => ({ key: `c${i}` })) });
    const ids = Object.values(ws.ids.customers);
    const results = await Promise.all([...ids, ...ids].map((id) => remove(ws.owner, id, { confirm: true })));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    expect(results.filter((r) => r.json().alreadyRemoved === false)).toHaveLength(6);
    expect((await list(ws.owner)).total).toBe(0);
    const stats = await sql<{ n: number }>`select active_customers as n from workspace_stats where workspace_id = ${ws.workspaceId}`.execute(
      ctx().database.db,
    );
    expect(stats.rows[0]?.n).toBe(0);
  });
});
