import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { askLink, cookie, exchange, linkTokenFor, SESSION_COOKIE, signInAs, someClient } from './accounts-helpers.js';
import { listJobs } from '../../src/platform/jobs/jobs.testing.js';
import { EmailJob } from '../../src/platform/mail/mail.js';

const transport = new MemoryTransport();
// Client addresses come from X-Forwarded-For, so each test is its own client for the per-client limit.
const ctx = useTestApp({ mail: { transport }, accounts: { signInLinksPerHour: 2 }, trustProxy: true });
const client = someClient;

const customers = (headers: Record<string, string>) => ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers });
const session = (headers: Record<string, string>) => ctx().app.inject({ method: 'GET', url: '/api/developer/session', headers });

describe('console sign-in links', () => {
  it('e-mails a one-time link to a member and answers the same for anyone else', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `owner-${ws.suffix}@dev.test`;
    const known = await askLink(ctx(), email.toUpperCase(), client());
    const unknown = await askLink(ctx(), `nobody-${unique()}@dev.test`, client());
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.json()).toEqual(known.json());
    const token = await linkTokenFor(ctx(), transport, email);
    expect(token).toMatch(/^dsl_/);
    const mail = transport.sent.filter((m) => m.to === email).at(-1)!;
    expect(mail.text).toContain(`http://patchbay.test/console/sign-in#token=${token}`);

    // Neither the link's row nor the e-mail job keeps the token.
    const links = await ctx().database.db.selectFrom('developer_sign_in_links').selectAll().where('account_id', '=', ws.ids.accounts.owner!).execute();
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ purpose: 'sign_in', used_at: null });
    expect(links[0]!.expires_at.getTime() - links[0]!.created_at.getTime()).toBeCloseTo(15 * 60_000, -4);
    const jobs = (await listJobs(ctx().database.db, { job: EmailJob })).map(({ payload }) => ({ payload }));
    expect(JSON.stringify([links, jobs])).not.toContain(token!.slice(4));
  });

  it('sends nothing to an address whose account is a member of no workspace (a buyer, say)', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ email: `buyer-${unique()}@cust.test` }] });
    const buyer = (await ctx().database.db.selectFrom('developer_customers').where('workspace_id', '=', ws.workspaceId).select('email').executeTakeFirstOrThrow()).email;
    expect((await askLink(ctx(), buyer, client())).statusCode).toBe(202);
    expect(await linkTokenFor(ctx(), transport, buyer)).toBeUndefined();
  });

  it('limits link requests per address and per client address (429 with Retry-After)', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `owner-${ws.suffix}@dev.test`;
    expect((await askLink(ctx(), email, client())).statusCode).toBe(202);
    expect((await askLink(ctx(), ` ${email.toUpperCase()} `.trim(), client())).statusCode).toBe(202);
    const limited = expectProblem(await askLink(ctx(), email, client()), 429, 'RATE_LIMITED');
    expect(limited.detail).toMatch(/Rate limit/);
    // One client asking for many addresses: 4 × the per-address limit an hour.
    const one = client();
    for (let i = 0; i < 8; i += 1) expect((await askLink(ctx(), `someone-${i}-${unique()}@dev.test`, one)).statusCode).toBe(202);
    const res = await askLink(ctx(), `someone-else-${unique()}@dev.test`, one);
    expectProblem(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('refuses bad input with 400', async () => {
    expectProblem(await askLink(ctx(), 'not-an-email', client()), 400, 'VALIDATION_FAILED');
    expectProblem(await ctx().app.inject({ method: 'POST', url: '/api/developer/session/link', headers: client(), payload: { email: 'a@b.test', extra: 1 } }), 400, 'VALIDATION_FAILED');
    expectProblem(await ctx().app.inject({ method: 'POST', url: '/api/developer/session', payload: {} }), 400, 'VALIDATION_FAILED');
    expectProblem(await exchange(ctx(), 'x'.repeat(101)), 400, 'VALIDATION_FAILED');
  });
});

describe('console sessions', () => {
  it('exchanges a link once for a session: cookie and bearer token, 12 hours', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `owner-${ws.suffix}@dev.test`;
    await askLink(ctx(), email, client());
    const token = (await linkTokenFor(ctx(), transport, email))!;
    const res = await exchange(ctx(), token);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      token: expect.stringMatching(/^pds_[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
      account: { id: ws.ids.accounts.owner, email },
      workspaces: [{ id: ws.workspaceId, name: `Workspace ${ws.suffix}`, owner: true }],
    });
    expect(new Date(body.expiresAt).getTime() - Date.now()).toBeGreaterThan(11.9 * 3_600_000);
    expect(new Date(body.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(12 * 3_600_000);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toContain(`${SESSION_COOKIE}=${body.token}`);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\/api\/developer/);
    expect(setCookie).not.toMatch(/Secure/);
    expect(res.headers['cache-control']).toBe('no-store');
    // Single use; the session itself is stored as a hash.
    expectProblem(await exchange(ctx(), token), 401, 'UNAUTHENTICATED');
    const stored = await ctx().database.db.selectFrom('developer_sessions').selectAll().where('account_id', '=', ws.ids.accounts.owner!).execute();
    expect(JSON.stringify(stored)).not.toContain(body.token.slice(4));

    // The same scope as the owner's JWT, through the cookie or the bearer token.
    const viaCookie = await customers(cookie(body.token));
    expect(viaCookie.statusCode, viaCookie.body).toBe(200);
    expect(viaCookie.headers['cache-control']).toBe('no-store');
    expect((await customers(bearer(body.token))).statusCode).toBe(200);
    expect((await customers(bearer(ws.owner))).statusCode).toBe(200);
  });

  it('sets a Secure cookie over HTTPS', async () => {
    const ws = await seedWorkspace(ctx());
    await askLink(ctx(), `owner-${ws.suffix}@dev.test`, client());
    const token = (await linkTokenFor(ctx(), transport, `owner-${ws.suffix}@dev.test`))!;
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/session', headers: { 'x-forwarded-proto': 'https' }, payload: { token } });
    expect(res.statusCode).toBe(201);
    expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
  });

  it('refuses unknown, used, expired and malformed link tokens with 401', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `owner-${ws.suffix}@dev.test`;
    await askLink(ctx(), email, client());
    const token = (await linkTokenFor(ctx(), transport, email))!;
    await ctx().database.db.updateTable('developer_sign_in_links').set({ expires_at: new Date(Date.now() - 1000) }).where('account_id', '=', ws.ids.accounts.owner!).execute();
    expectProblem(await exchange(ctx(), token), 401, 'UNAUTHENTICATED');
    expectProblem(await exchange(ctx(), `dsl_${'A'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    expectProblem(await exchange(ctx(), `psl_${'A'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    expectProblem(await exchange(ctx(), 'not-a-token'), 401, 'UNAUTHENTICATED');
  });

  it('picks the only workspace, asks a member of several to choose, and never reaches a foreign one', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ email: 'in-a@x.test' }] });
    const b = await seedWorkspace(ctx(), { customers: [{ email: 'in-b@x.test' }] });
    const email = `owner-${a.suffix}@dev.test`;
    const only = await signInAs(ctx(), transport, email, client());
    expect((await customers(bearer(only))).json().rows.map((r: { email: string }) => r.email)).toEqual(['in-a@x.test']);
    expectProblem(await customers({ ...bearer(only), 'x-workspace-id': String(b.workspaceId) }), 403, 'WORKSPACE_ACCESS_DENIED');

    await ctx().database.db.insertInto('memberships').values({ workspace_id: b.workspaceId, account_id: a.ids.accounts.owner!, permissions: ['customers.view'], all_products: true }).execute();
    expectProblem(await customers(bearer(only)), 400, 'WORKSPACE_REQUIRED');
    const inB = await customers({ ...bearer(only), 'x-workspace-id': String(b.workspaceId) });
    expect(inB.json().rows.map((r: { email: string }) => r.email)).toEqual(['in-b@x.test']);
    expectProblem(await customers({ ...bearer(only), 'x-workspace-id': 'abc' }), 400, 'VALIDATION_FAILED');

    // The session itself names both; a member of several who picks none sees no workspace's details.
    const state = await session(bearer(only));
    expect(state.statusCode, state.body).toBe(200);
    expect(state.json().workspaces.map((w: { id: number }) => w.id)).toEqual([a.workspaceId, b.workspaceId]);
    expect(state.json().workspace).toBeNull();
    const inState = (await session({ ...bearer(only), 'x-workspace-id': String(b.workspaceId) })).json().workspace;
    expect(inState).toEqual({ id: b.workspaceId, name: `Workspace ${b.suffix}`, owner: false, permissions: ['customers.view'], products: 'all' });
    const foreign = await seedWorkspace(ctx());
    expectProblem(await session({ ...bearer(only), 'x-workspace-id': String(foreign.workspaceId) }), 403, 'WORKSPACE_ACCESS_DENIED');
  });

  it('tells the console what a member may use: permissions, owner flag and products', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'support', permissions: ['customers.view', 'serials.view'], products: ['p2'] }] });
    const token = await signInAs(ctx(), transport, `support-${ws.suffix}@dev.test`, client());
    const res = await session(cookie(token));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      expiresAt: expect.any(String),
      account: { id: ws.ids.accounts.support, email: `support-${ws.suffix}@dev.test` },
      workspaces: [{ id: ws.workspaceId, name: `Workspace ${ws.suffix}`, owner: false }],
      workspace: { id: ws.workspaceId, name: `Workspace ${ws.suffix}`, owner: false, permissions: ['customers.view', 'serials.view'], products: [ws.ids.products.p2] },
    });
    const owner = await signInAs(ctx(), transport, `owner-${ws.suffix}@dev.test`, client());
    const all = (await session(bearer(owner))).json().workspace;
    expect(all.owner).toBe(true);
    expect(all.products).toBe('all');
    expect(all.permissions).toContain('members.manage');
    expect(all.permissions).toContain('partners.manage');
  });

  it('signs out: the token and the cookie stop working at once', async () => {
    const ws = await seedWorkspace(ctx());
    const token = await signInAs(ctx(), transport, `owner-${ws.suffix}@dev.test`, client());
    const out = await ctx().app.inject({ method: 'DELETE', url: '/api/developer/session', headers: cookie(token) });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ ended: true });
    expect(String(out.headers['set-cookie'])).toMatch(new RegExp(`${SESSION_COOKIE}=;.*Expires=Thu, 01 Jan 1970`));
    expectProblem(await customers(cookie(token)), 401, 'UNAUTHENTICATED');
    expectProblem(await customers(bearer(token)), 401, 'UNAUTHENTICATED');
    expectProblem(await session(bearer(token)), 401, 'UNAUTHENTICATED');
    expectProblem(await ctx().app.inject({ method: 'DELETE', url: '/api/developer/session', headers: bearer(token) }), 401, 'UNAUTHENTICATED');
  });

  it('ends a session after its 12 hours', async () => {
    const ws = await seedWorkspace(ctx());
    const token = await signInAs(ctx(), transport, `owner-${ws.suffix}@dev.test`, client());
    await ctx().database.db.updateTable('developer_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('account_id', '=', ws.ids.accounts.owner!).execute();
    expectProblem(await customers(cookie(token)), 401, 'UNAUTHENTICATED');
    expectProblem(await session(cookie(token)), 401, 'UNAUTHENTICATED');
  });

  it('keeps the session routes for sessions: a JWT, an API token or a partner session answers 401', async () => {
    const ws = await seedWorkspace(ctx());
    const created = await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(ws.owner), payload: { name: 'ci' } });
    for (const headers of [{} as Record<string, string>, bearer(ws.owner), bearer(created.json().token), bearer(`pds_${'A'.repeat(43)}`), { cookie: `patchbay_partner_session=pps_${'A'.repeat(43)}` }, { cookie: `${SESSION_COOKIE}=${ws.owner}` }]) {
      expectProblem(await session(headers), 401, 'UNAUTHENTICATED');
    }
    // A stale cookie next to a valid bearer token: the Authorization header decides.
    expect((await customers({ ...bearer(ws.owner), ...cookie(`pds_${'B'.repeat(43)}`) })).statusCode).toBe(200);
    expectProblem(await customers(cookie(`pds_${'B'.repeat(43)}`)), 401, 'UNAUTHENTICATED');
  });
});

describe('console sessions and cross-site request forgery', () => {
  it('refuses a cross-origin form post that carries the session cookie, and lets the console’s own pages through', async () => {
    const ws = await seedWorkspace(ctx());
    const token = await signInAs(ctx(), transport, `owner-${ws.suffix}@dev.test`, client());
    const boundary = '----form';
    const forged = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/api-tokens',
      headers: { ...cookie(token), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nstolen\r\n--${boundary}--\r\n`,
    });
    expectProblem(forged, 403, 'CROSS_SITE_REQUEST_REFUSED');
    const siblingPort = await ctx().app.inject({
      method: 'DELETE',
      url: '/api/developer/session',
      headers: { ...cookie(token), origin: 'http://patchbay.test:8080', 'sec-fetch-site': 'same-site' },
    });
    expectProblem(siblingPort, 403, 'CROSS_SITE_REQUEST_REFUSED');
    expect((await ctx().database.db.selectFrom('api_tokens').where('account_id', '=', ws.ids.accounts.owner!).select('id').execute()).length).toBe(0);

    const own = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/api-tokens',
      headers: { ...cookie(token), origin: 'null', 'sec-fetch-site': 'same-origin' },
      payload: { name: 'from the console' },
    });
    expect(own.statusCode, own.body).toBe(201);
  });
});
