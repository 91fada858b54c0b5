import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

const ctx = useTestApp();

const create = (token: string, body: object, headers: Record<string, string> = {}) =>
  ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: { ...bearer(token), ...headers }, payload: body });
const list = (token: string) => ctx().app.inject({ method: 'GET', url: '/api/developer/api-tokens', headers: bearer(token) });
const revoke = (token: string, id: number) => ctx().app.inject({ method: 'DELETE', url: `/api/developer/api-tokens/${id}`, headers: bearer(token) });
const customers = (token: string, headers: Record<string, string> = {}) => ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: { ...bearer(token), ...headers } });

const team = () =>
  seedWorkspace(ctx(), {
    customers: [{ email: `c-${unique()}@cust.test`, products: ['p1'] }, { email: `d-${unique()}@cust.test`, products: ['p2'] }],
    members: [
      { key: 'support', permissions: ['customers.view'], products: ['p1'] },
      { key: 'other', permissions: ['customers.view'], products: 'all' },
    ],
  });

describe('API tokens', () => {
  it('shows a new token once, keeps only its hash, and lists it with its prefix', async () => {
    const ws = await team();
    const res = await create(ws.owner, { name: 'CI export', expiresInDays: 30 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'CI export',
      prefix: created.token.slice(0, 12),
      created_at: expect.any(String),
      last_used_at: null,
      expires_at: expect.any(String),
      member: { id: ws.ids.accounts.owner, email: `owner-${ws.suffix}@dev.test` },
      token: expect.stringMatching(/^pat_[A-Za-z0-9_-]{43}$/),
    });
    expect(new Date(created.expires_at).getTime() - Date.now()).toBeCloseTo(30 * 86_400_000, -5);
    const listed = (await list(ws.owner)).json();
    const { token: _shownOnce, ...row } = created;
    expect(listed.rows).toEqual([row]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const stored = await ctx().database.db.selectFrom('api_tokens').selectAll().where('id', '=', created.id).execute();
    expect(JSON.stringify(stored)).not.toContain(created.token.slice(12));
    const [entry] = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'api_token.created').selectAll().execute();
    expect(entry).toMatchObject({ actor_account_id: ws.ids.accounts.owner, subject_id: String(created.id) });
    expect(JSON.stringify(entry)).not.toContain(created.token);
  });

  it('never keeps or replays the token for an Idempotency-Key: each request makes its own token', async () => {
    const ws = await team();
    const headers = { 'idempotency-key': `token-${unique()}` };
    const first = await create(ws.owner, { name: 'retried' }, headers);
    const second = await create(ws.owner, { name: 'retried' }, headers);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().token).not.toBe(first.json().token);
    const kept = await ctx().database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', headers['idempotency-key']).execute();
    expect(kept).toEqual([]);
  });

  it('acts as its member with what they hold now, in its own workspace only', async () => {
    const ws = await team();
    const token = (await create(ws.tokens.support!, { name: 'support script' })).json().token as string;
    const rows = (await customers(token)).json().rows;
    expect(rows).toHaveLength(1);
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/purchases', headers: bearer(token) }), 403, 'FORBIDDEN');
    expectProblem(await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p2}`, headers: bearer(token) }), 404, 'NOT_FOUND');
    // Never more than the member holds now: a withdrawn permission applies to the token at once.
    await ctx().database.db.updateTable('memberships').set({ permissions: [] }).where('workspace_id', '=', ws.workspaceId).where('account_id', '=', ws.ids.accounts.support!).execute();
    expectProblem(await customers(token), 403, 'FORBIDDEN');
    // Another workspace the member also belongs to stays out of the token's reach.
    const other = await seedWorkspace(ctx());
    await ctx().database.db.insertInto('memberships').values({ workspace_id: other.workspaceId, account_id: ws.ids.accounts.support!, permissions: ['*'], all_products: true }).execute();
    expectProblem(await customers(token, { 'x-workspace-id': String(other.workspaceId) }), 403, 'WORKSPACE_ACCESS_DENIED');
    expectProblem(await customers(token, { 'x-workspace-id': 'x' }), 400, 'VALIDATION_FAILED');
  });

  it('answers 401 once revoked, expired or unknown', async () => {
    const ws = await team();
    const created = (await create(ws.owner, { name: 'short' })).json();
    expect((await customers(created.token)).statusCode).toBe(200);
    const res = await revoke(ws.owner, created.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: created.id, revoked: true });
    expectProblem(await customers(created.token), 401, 'UNAUTHENTICATED');
    expect((await list(ws.owner)).json().rows).toEqual([]);
    expectProblem(await revoke(ws.owner, created.id), 404, 'NOT_FOUND');

    const expiring = (await create(ws.owner, { name: 'expiring', expiresInDays: 1 })).json();
    await ctx().database.db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expiring.id).execute();
    expectProblem(await customers(expiring.token), 401, 'UNAUTHENTICATED');
    expectProblem(await customers(`pat_${'A'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    expectProblem(await customers('pat_short'), 401, 'UNAUTHENTICATED');
    const revoked = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'api_token.revoked').select('subject_id').execute();
    expect(revoked).toEqual([{ subject_id: String(created.id) }]);
  });

  it('lets members see and revoke their own tokens, and the owner everyone’s', async () => {
    const ws = await team();
    const mine = (await create(ws.tokens.support!, { name: 'mine' })).json();
    const theirs = (await create(ws.tokens.other!, { name: 'theirs' })).json();
    expect((await list(ws.tokens.support!)).json().rows.map((r: { id: number }) => r.id)).toEqual([mine.id]);
    expect((await list(ws.owner)).json().rows.map((r: { id: number }) => r.id)).toEqual([theirs.id, mine.id]);
    expectProblem(await revoke(ws.tokens.support!, theirs.id), 404, 'NOT_FOUND');
    expect((await customers(theirs.token)).statusCode).toBe(200);
    expect((await revoke(ws.owner, theirs.id)).statusCode).toBe(200);
    expectProblem(await customers(theirs.token), 401, 'UNAUTHENTICATED');
    const foreign = await team();
    const foreignToken = (await create(foreign.owner, { name: 'foreign' })).json();
    expectProblem(await revoke(ws.owner, foreignToken.id), 404, 'NOT_FOUND');
    expect((await customers(foreignToken.token)).statusCode).toBe(200);
  });

  it('refuses tokens on the token routes: a token cannot mint, list or revoke tokens', async () => {
    const ws = await team();
    const created = (await create(ws.owner, { name: 'owner script' })).json();
    expectProblem(await create(created.token, { name: 'minted by a token' }), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await list(created.token), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await revoke(created.token, created.id), 403, 'API_TOKEN_NOT_ALLOWED');
  });

  it('writes last_used_at at most once a minute', async () => {
    const ws = await team();
    const created = (await create(ws.owner, { name: 'busy' })).json();
    const lastUsed = async () => (await ctx().database.db.selectFrom('api_tokens').where('id', '=', created.id).select('last_used_at').executeTakeFirstOrThrow()).last_used_at;
    await Promise.all(Array.from({ length: 5 }, () => customers(created.token)));
    const first = await lastUsed();
    expect(first).not.toBeNull();
    for (let i = 0; i < 3; i += 1) await customers(created.token);
    expect(await lastUsed()).toEqual(first);
    // A minute later the next request writes again.
    const earlier = new Date(Date.now() - 61_000);
    await ctx().database.db.updateTable('api_tokens').set({ last_used_at: earlier }).where('id', '=', created.id).execute();
    await customers(created.token);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(earlier.getTime() + 30_000);
    expect((await list(ws.owner)).json().rows[0].last_used_at).not.toBeNull();
  });

  it('holds at most 50 tokens per member (409), and refuses bad input (400) and no credential (401)', async () => {
    const ws = await team();
    await ctx()
      .database.db.insertInto('api_tokens')
      .values(Array.from({ length: 50 }, (_, i) => ({ workspace_id: ws.workspaceId, account_id: ws.ids.accounts.other!, name: `t${i}`, prefix: 'pat_x', token_hash: `hash-${ws.suffix}-${i}` })))
      .execute();
    expectProblem(await create(ws.tokens.other!, { name: 'one too many' }), 409, 'API_TOKEN_LIMIT_REACHED');
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'ok', expiresInDays: 0 }, { name: 'ok', expiresInDays: 3651 }, { name: 'ok', extra: true }]) {
      expectProblem(await create(ws.owner, body), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/api-tokens' }), 401, 'UNAUTHENTICATED');
    expectProblem(await revoke(ws.owner, 0), 400, 'VALIDATION_FAILED');
  });
});
