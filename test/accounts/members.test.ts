import { describe, expect, it } from 'vitest';
import { MEMBER_INVITATION_EMAIL } from '../../src/modules/accounts/accounts.emails.js';
import { LinkTokens } from '../../src/platform/mail/link-tokens.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, type SeededWorkspace, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { cookie, exchange, linkTokenFor, signInAs, someClient } from './accounts-helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, accounts: { signInLinksPerHour: 100 }, trustProxy: true });

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
  ctx().app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const invite = (token: string, body: object) => call('POST', '/api/developer/members', bearer(token), body);
const change = (token: string, memberId: number, body: object) => call('PATCH', `/api/developer/members/${memberId}`, bearer(token), body);
const remove = (token: string, memberId: number) => call('DELETE', `/api/developer/members/${memberId}`, bearer(token));
const list = (token: string, query = '') => call('GET', `/api/developer/members${query}`, bearer(token));

const team = () =>
  seedWorkspace(ctx(), {
    members: [
      { key: 'lead', permissions: ['members.manage', 'customers.view', 'customers.manage'], products: 'all' },
      { key: 'scoped', permissions: ['members.manage', 'customers.view'], products: ['p1'] },
      { key: 'plain', permissions: ['customers.view'], products: ['p1'] },
    ],
  });

async function audit(ws: SeededWorkspace, action: string) {
  return ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', action).selectAll().orderBy('id').execute();
}

describe('members: list', () => {
  it('pages the team, the owner first, with permissions, products and dates', async () => {
    const ws = await team();
    const res = await list(ws.owner);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 4, page: 1, pageSize: 50 });
    expect(body.rows[0]).toEqual({
      id: ws.ids.accounts.owner,
      email: `owner-${ws.suffix}@dev.test`,
      owner: true,
      permissions: ['*'],
      products: 'all',
      invited_at: expect.any(String),
      joined_at: expect.any(String),
    });
    expect(body.rows.find((r: { id: number }) => r.id === ws.ids.accounts.scoped)).toMatchObject({ permissions: ['members.manage', 'customers.view'], products: [ws.ids.products.p1] });
    const second = (await list(ws.owner, '?page=2&limit=3')).json();
    expect(second).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(second.rows).toHaveLength(1);
    expectProblem(await list(ws.owner, '?limit=0'), 400, 'VALIDATION_FAILED');
    expectProblem(await list(ws.owner, '?sort=email'), 400, 'VALIDATION_FAILED');
  });

  it('needs members.manage (403) and a credential (401)', async () => {
    const ws = await team();
    expectProblem(await list(ws.tokens.plain!), 403, 'FORBIDDEN');
    expectProblem(await call('GET', '/api/developer/members', {}), 401, 'UNAUTHENTICATED');
  });
});

describe('members: invite', () => {
  it('makes the member, e-mails a sign-in link valid 72 hours, and joins them when they sign in', async () => {
    const ws = await team();
    const email = `new-${unique()}@team.test`;
    const res = await invite(ws.owner, { email: email.toUpperCase(), permissions: ['customers.view', 'serials.view'], products: [ws.ids.products.p2, ws.ids.products.p3] });
    expect(res.statusCode, res.body).toBe(201);
    const member = res.json();
    expect(member).toMatchObject({ email: email.toUpperCase(), owner: false, permissions: ['customers.view', 'serials.view'], products: [ws.ids.products.p2, ws.ids.products.p3], joined_at: null });
    const token = await linkTokenFor(ctx(), transport, email);
    expect(token).toMatch(/^dsl_/);
    const mail = transport.sent.filter((m) => m.to.toLowerCase() === email).at(-1)!;
    expect(mail.subject).toBe(`You were invited to Workspace ${ws.suffix} on Patchbay`);
    expect(mail.text).toContain(`owner-${ws.suffix}@dev.test invited you`);
    expect(mail.text).toContain('within 72 hours');
    const link = await ctx().database.db.selectFrom('developer_sign_in_links').where('account_id', '=', member.id).selectAll().executeTakeFirstOrThrow();
    expect(link).toMatchObject({ purpose: 'invitation', workspace_id: ws.workspaceId });
    expect(link.expires_at.getTime() - link.created_at.getTime()).toBeCloseTo(72 * 3_600_000, -4);

    const signedIn = await exchange(ctx(), token!, someClient());
    expect(signedIn.statusCode, signedIn.body).toBe(201);
    const session = signedIn.json().token as string;
    const rows = (await list(ws.owner)).json().rows;
    expect(rows.find((r: { id: number }) => r.id === member.id).joined_at).not.toBeNull();
    // What the invitation granted, and nothing more.
    const scoped = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}`, headers: cookie(session) });
    expectProblem(scoped, 404, 'NOT_FOUND');
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: cookie(session) })).statusCode).toBe(200);
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/purchases', headers: cookie(session) }), 403, 'FORBIDDEN');

    const [entry] = await audit(ws, 'member.invited');
    expect(entry).toMatchObject({ actor_account_id: ws.ids.accounts.owner, subject_type: 'member', subject_id: String(member.id) });
    expect(entry!.data).toMatchObject({ email: email.toUpperCase(), permissions: ['customers.view', 'serials.view'] });
  });

  it('invites an address that already has an account elsewhere, and refuses a current member with 409', async () => {
    const ws = await team();
    const other = await seedWorkspace(ctx());
    const res = await invite(ws.owner, { email: `owner-${other.suffix}@dev.test`, permissions: [], products: 'all' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().id).toBe(other.ids.accounts.owner);
    expectProblem(await invite(ws.owner, { email: `lead-${ws.suffix}@DEV.test`, permissions: [], products: 'all' }), 409, 'MEMBER_EXISTS');
  });

  it('refuses to grant a permission or products the inviter does not hold', async () => {
    const ws = await team();
    const lead = ws.tokens.lead!;
    const scoped = ws.tokens.scoped!;
    const fresh = () => `x-${unique()}@team.test`;
    const p1 = ws.ids.products.p1!;
    const p2 = ws.ids.products.p2!;
    expect(expectProblem(await invite(lead, { email: fresh(), permissions: ['purchases.view'], products: 'all' }), 403, 'GRANT_EXCEEDS_OWN_ACCESS').detail).toContain('purchases.view');
    expectProblem(await invite(lead, { email: fresh(), permissions: ['*'], products: 'all' }), 403, 'GRANT_EXCEEDS_OWN_ACCESS');
    expectProblem(await invite(scoped, { email: fresh(), permissions: ['customers.view'], products: 'all' }), 403, 'GRANT_EXCEEDS_OWN_ACCESS');
    // A product outside the inviter's assignment does not exist for them: 422, like an id of another workspace.
    const outside = expectProblem(await invite(scoped, { email: fresh(), permissions: [], products: [p1, p2] }), 422, 'UNKNOWN_PRODUCT');
    expect(outside.errors).toEqual([{ path: '/products/1', message: `Product ${p2} is not a product you can assign` }]);
    const foreign = await seedWorkspace(ctx());
    expectProblem(await invite(ws.owner, { email: fresh(), permissions: [], products: [foreign.ids.products.p1!] }), 422, 'UNKNOWN_PRODUCT');
    // Within their own access: fine.
    const ok = await invite(scoped, { email: fresh(), permissions: ['customers.view'], products: [p1] });
    expect(ok.statusCode, ok.body).toBe(201);
    expect((await invite(lead, { email: fresh(), permissions: ['members.manage', 'customers.manage'], products: 'all' })).statusCode).toBe(201);
    expect(await ctx().database.db.selectFrom('memberships').where('workspace_id', '=', ws.workspaceId).select('account_id').execute()).toHaveLength(6);
  });

  it('refuses bad input with 400', async () => {
    const ws = await team();
    const bad = [
      { email: 'not-an-email', permissions: [], products: 'all' },
      { email: 'a@b.test', permissions: ['customers.view'] },
      { email: 'a@b.test', permissions: ['no.such'], products: 'all' },
      { email: 'a@b.test', permissions: ['customers.view', 'customers.view'], products: 'all' },
      { email: 'a@b.test', permissions: [], products: 'some' },
      { email: 'a@b.test', permissions: [], products: [0] },
      { email: 'a@b.test', permissions: [], products: 'all', owner: true },
    ];
    for (const body of bad) expectProblem(await invite(ws.owner, body), 400, 'VALIDATION_FAILED');
  });
});

describe('members: change and remove', () => {
  it('changes permissions and products, effective on the member’s next request, audited', async () => {
    const ws = await team();
    const plain = ws.ids.accounts.plain!;
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.tokens.plain!) })).statusCode).toBe(200);
    const res = await change(ws.owner, plain, { permissions: ['serials.view'], products: 'all' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: plain, permissions: ['serials.view'], products: 'all' });
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.tokens.plain!) }), 403, 'FORBIDDEN');
    expect((await change(ws.owner, plain, { products: [ws.ids.products.p3] })).json()).toMatchObject({ permissions: ['serials.view'], products: [ws.ids.products.p3] });
    const entries = await audit(ws, 'member.changed');
    expect(entries).toHaveLength(2);
    expect(entries[0]!.data).toMatchObject({ before: { permissions: ['customers.view'], products: [ws.ids.products.p1] }, after: { permissions: ['serials.view'], products: 'all' } });
    expectProblem(await change(ws.owner, plain, {}), 400, 'VALIDATION_FAILED');
    expectProblem(await change(ws.owner, plain, { permissions: 'all' }), 400, 'VALIDATION_FAILED');
  });

  it('never removes or changes the owner (409), nor a member whose access exceeds the caller’s (403)', async () => {
    const ws = await team();
    const owner = ws.ids.accounts.owner!;
    expectProblem(await remove(ws.tokens.lead!, owner), 409, 'OWNER_PROTECTED');
    expectProblem(await change(ws.tokens.lead!, owner, { permissions: [] }), 409, 'OWNER_PROTECTED');
    expectProblem(await remove(ws.owner, owner), 409, 'OWNER_PROTECTED');
    // The scoped manager may not touch the all-products lead, nor give the plain member customers.manage.
    expectProblem(await remove(ws.tokens.scoped!, ws.ids.accounts.lead!), 403, 'GRANT_EXCEEDS_OWN_ACCESS');
    expectProblem(await change(ws.tokens.scoped!, ws.ids.accounts.plain!, { permissions: ['customers.manage'] }), 403, 'GRANT_EXCEEDS_OWN_ACCESS');
    expectProblem(await change(ws.tokens.scoped!, ws.ids.accounts.plain!, { products: [ws.ids.products.p2] }), 422, 'UNKNOWN_PRODUCT');
    expect((await change(ws.tokens.scoped!, ws.ids.accounts.plain!, { permissions: [] })).statusCode).toBe(200);
    expect(await audit(ws, 'member.removed')).toHaveLength(0);
  });

  it('answers 404 for a member of another workspace, and for one already removed', async () => {
    const ws = await team();
    const other = await team();
    expectProblem(await change(ws.owner, other.ids.accounts.plain!, { permissions: [] }), 404, 'NOT_FOUND');
    expectProblem(await remove(ws.owner, other.ids.accounts.plain!), 404, 'NOT_FOUND');
    expectProblem(await remove(ws.owner, 2_000_000_000), 404, 'NOT_FOUND');
    expect((await remove(ws.owner, ws.ids.accounts.plain!)).json()).toEqual({ id: ws.ids.accounts.plain, removed: true });
    expectProblem(await remove(ws.owner, ws.ids.accounts.plain!), 404, 'NOT_FOUND');
    expectProblem(await remove(ws.owner, 0), 400, 'VALIDATION_FAILED');
  });

  it('stops a removed member’s JWT, console session and API tokens at once, and audits the removal', async () => {
    const ws = await team();
    const email = `plain-${ws.suffix}@dev.test`;
    const session = await signInAs(ctx(), transport, email);
    const apiToken = (await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(ws.tokens.plain!), payload: { name: 'script' } })).json().token as string;
    const customers = (headers: Record<string, string>) => ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers });
    for (const headers of [bearer(ws.tokens.plain!), cookie(session), bearer(apiToken)]) expect((await customers(headers)).statusCode).toBe(200);

    expect((await remove(ws.tokens.lead!, ws.ids.accounts.plain!)).statusCode).toBe(200);
    expectProblem(await customers(bearer(ws.tokens.plain!)), 403, 'WORKSPACE_ACCESS_DENIED');
    expectProblem(await customers(cookie(session)), 403, 'WORKSPACE_ACCESS_DENIED');
    expectProblem(await customers(bearer(apiToken)), 401, 'UNAUTHENTICATED');
    // The account stays: its session still says who it is, with no workspace.
    const state = await ctx().app.inject({ method: 'GET', url: '/api/developer/session', headers: cookie(session) });
    expect(state.json()).toMatchObject({ workspaces: [], workspace: null });
    expect(await ctx().database.db.selectFrom('api_tokens').where('account_id', '=', ws.ids.accounts.plain!).select('id').execute()).toHaveLength(0);
    const [entry] = await audit(ws, 'member.removed');
    expect(entry).toMatchObject({ actor_account_id: ws.ids.accounts.lead, subject_id: String(ws.ids.accounts.plain) });
    expect(entry!.data).toMatchObject({ email, permissions: ['customers.view'] });
  });

  it('withdraws a removed member’s unused invitation link, and its e-mail if it has not gone out', async () => {
    const ws = await team();
    const email = `late-${unique()}@team.test`;
    const invited = (await invite(ws.owner, { email, permissions: [], products: 'all' })).json();
    const token = await linkTokenFor(ctx(), transport, email);
    const link = await ctx().database.db.selectFrom('developer_sign_in_links').where('account_id', '=', invited.id).select('id').executeTakeFirstOrThrow();
    expect((await remove(ws.owner, invited.id)).statusCode).toBe(200);
    expectProblem(await exchange(ctx(), token!, someClient()), 401, 'UNAUTHENTICATED');
    const rendered = await MEMBER_INVITATION_EMAIL.render(
      { signInLinkId: link.id },
      { db: ctx().database.db, workspaceId: ws.workspaceId, tokens: new LinkTokens(TEST_LICENSE_KEY), urls: { publicBaseUrl: 'http://patchbay.test', portalUrl: 'http://patchbay.test/partner-portal' } },
    );
    expect(rendered).toEqual({ skip: 'the sign-in link is gone' });
  });

  it('refuses API tokens on every member route (403), even the owner’s', async () => {
    const ws = await team();
    const apiToken = (await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(ws.owner), payload: { name: 'owner script' } })).json().token as string;
    expectProblem(await list(apiToken), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await invite(apiToken, { email: `t-${unique()}@team.test`, permissions: [], products: 'all' }), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await change(apiToken, ws.ids.accounts.plain!, { permissions: [] }), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await remove(apiToken, ws.ids.accounts.plain!), 403, 'API_TOKEN_NOT_ALLOWED');
  });
});
