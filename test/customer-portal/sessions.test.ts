import { describe, expect, it } from 'vitest';
import { listJobs } from '../../src/platform/jobs/jobs.testing.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { askLink, buyerToken, emailedLink, get, PORTAL, signIn } from './portal-helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });

describe('customer portal sign-in', () => {
  it('e-mails a one-time link to /portal/<slug>/sign-in, answering unknown workspaces and addresses the same', async () => {
    const slug = `store-${unique()}`;
    const ws = await seedWorkspace(ctx(), { slug, customers: [{ key: 'c', firstName: 'Ada', lastName: 'Lovelace' }] });
    const email = `c0-${ws.suffix}@cust.test`;
    const known = await askLink(ctx(), slug, email.toUpperCase());
    const answers = [
      known,
      await askLink(ctx(), slug, `nobody-${unique()}@cust.test`),
      await askLink(ctx(), `no-such-${unique()}`, email),
      await askLink(ctx(), 2_000_000_000, email),
    ];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(202);
      expect(answer.json()).toEqual(known.json());
    }
    const link = await emailedLink(ctx(), transport, email);
    expect(link?.url).toBe(`http://patchbay.test/portal/${slug}/sign-in`);
    expect(link!.mail.subject).toContain(`Workspace ${ws.suffix}`);
    expect(link!.mail.html).toContain(`#token=${link!.token}`);
    // One e-mail: the unknown workspace and the unknown address sent nothing.
    expect(transport.sent.filter((m) => m.to === email)).toHaveLength(1);
    // Neither the link table nor the queue keeps the token or the requested address.
    const stored = JSON.stringify(await ctx().database.db.selectFrom('customer_portal_sign_in_links').selectAll().execute());
    expect(stored).not.toContain(link!.token);
    const jobs = JSON.stringify((await listJobs(ctx().database.db)).map(({ payload, result }) => ({ payload, result })));
    expect(jobs).not.toContain(link!.token);
    expect(jobs).not.toContain(email);

    const session = await signIn(ctx(), link!.token);
    expect(session.statusCode, session.body).toBe(201);
    expect(session.json()).toEqual({
      token: expect.stringMatching(/^pcs_[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
      customer: { email, firstName: 'Ada', lastName: 'Lovelace' },
      workspace: { id: ws.workspaceId, name: `Workspace ${ws.suffix}`, slug, portalUrl: `http://patchbay.test/portal/${slug}` },
    });
    const hours = (Date.parse(session.json().expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);
    const cookie = String(session.headers['set-cookie']);
    expect(cookie).toMatch(/patchbay_customer_session=pcs_/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/api\/customer-portal/);
    // Single use.
    expect((await signIn(ctx(), link!.token)).statusCode).toBe(401);

    const token = session.json().token as string;
    const viaCookie = await ctx().app.inject({ method: 'GET', url: `${PORTAL}/session`, headers: { cookie: `patchbay_customer_session=${token}` } });
    expect(viaCookie.statusCode).toBe(200);
    expect(viaCookie.headers['cache-control']).toBe('no-store');
    expect(viaCookie.json()).toMatchObject({ customer: { email }, workspace: { id: ws.workspaceId } });
    const out = await ctx().app.inject({ method: 'DELETE', url: `${PORTAL}/session`, headers: bearer(token) });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/patchbay_customer_session=;/);
    expect((await get(ctx(), token, '/orders')).statusCode).toBe(401);
  });

  it('accepts the workspace id as well as its slug, and links carry the id while the workspace has no slug', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const email = `c0-${ws.suffix}@cust.test`;
    expect((await askLink(ctx(), ws.workspaceId, email)).statusCode).toBe(202);
    const link = await emailedLink(ctx(), transport, email);
    expect(link?.url).toBe(`http://patchbay.test/portal/${ws.workspaceId}/sign-in`);
    expect((await signIn(ctx(), link!.token)).statusCode).toBe(201);
  });

  it('refuses expired, unknown and malformed tokens', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const email = `c0-${ws.suffix}@cust.test`;
    await askLink(ctx(), ws.workspaceId, email);
    const link = await emailedLink(ctx(), transport, email);
    await ctx().database.db.updateTable('customer_portal_sign_in_links').set({ expires_at: new Date(Date.now() - 1000) }).where('workspace_id', '=', ws.workspaceId).execute();
    for (const token of [link!.token, `pcl_${'A'.repeat(43)}`, 'not-a-token', `psl_${'A'.repeat(43)}`]) {
      const res = await signIn(ctx(), token);
      expect(res.statusCode, token).toBe(401);
      expect(res.json().code).toBe('UNAUTHENTICATED');
    }
    expect((await signIn(ctx(), 'x'.repeat(101))).statusCode).toBe(400);
    expect((await askLink(ctx(), ws.workspaceId, 'not-an-email')).statusCode).toBe(400);
    expect((await askLink(ctx(), 'has space', email)).statusCode).toBe(400);
  });

  it('keeps the same address at two workspaces apart: a session of one never reaches the other', async () => {
    const email = `both-${unique()}@cust.test`;
    const a = await seedWorkspace(ctx(), { customers: [{ key: 'c', email }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p1' }] }] });
    const b = await seedWorkspace(ctx(), { customers: [{ key: 'c', email }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p2' }] }] });
    await askLink(ctx(), a.workspaceId, email);
    const link = await emailedLink(ctx(), transport, email);
    const token = (await signIn(ctx(), link!.token)).json().token as string;
    const orders = (await get(ctx(), token, '/orders')).json();
    expect(orders.rows.map((o: { order_id: number }) => o.order_id)).toEqual([a.ids.orders.o]);
    expect((await get(ctx(), token, `/orders/${b.ids.orders.o}`)).statusCode).toBe(404);
    const info = (await get(ctx(), token, '/session')).json();
    expect(info.workspace).toMatchObject({ id: a.workspaceId, name: `Workspace ${a.suffix}` });
    expect(JSON.stringify(info)).not.toContain(b.suffix);
  });

  it('signs a removed customer out at once', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const token = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);
    expect((await get(ctx(), token, '/orders')).statusCode).toBe(200);
    const removed = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${ws.ids.customers.c}`, headers: bearer(ws.owner), payload: { confirm: true } });
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await get(ctx(), token, '/orders')).statusCode).toBe(401);
  });

  it('answers 404 on every portal route of a workspace whose portal is off, and sends no link', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const email = `c0-${ws.suffix}@cust.test`;
    const token = await buyerToken(ctx(), ws.workspaceId, email);
    await askLink(ctx(), ws.workspaceId, email);
    const pending = await emailedLink(ctx(), transport, email);
    const off = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { enabled: false } });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toEqual({ enabled: false, slug: null, url: `http://patchbay.test/portal/${ws.workspaceId}` });

    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'customer')) {
      const res = await ctx().app.inject({ method: route.method as 'GET', url: route.url.replace(/:\w+/g, '1'), headers: bearer(token), ...(route.method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    // A link e-mailed before the switch opens nothing; a new request sends nothing.
    expect((await signIn(ctx(), pending!.token)).statusCode).toBe(404);
    const before = transport.sent.length;
    expect((await askLink(ctx(), ws.workspaceId, email)).statusCode).toBe(202);
    await ctx().app.jobs.idle();
    await ctx().app.jobs.idle();
    expect(transport.sent.length).toBe(before);

    await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { enabled: true } });
    expect((await get(ctx(), token, '/orders')).statusCode).toBe(200);
  });

  it('rate-limits link requests per workspace and address', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const email = `c0-${ws.suffix}@cust.test`;
    for (let i = 0; i < 5; i += 1) expect((await askLink(ctx(), ws.workspaceId, email)).statusCode).toBe(202);
    const limited = await askLink(ctx(), ws.workspaceId, email);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBeDefined();
    // The same address at another workspace is another identity with its own allowance.
    expect((await askLink(ctx(), `other-${unique()}`, email)).statusCode).toBe(202);
  });
});

describe('customer portal settings (developer API)', () => {
  it('shows every member the address to share, and lets a workspace manager set the slug', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'viewer', permissions: [], products: 'all' }] });
    const shown = await ctx().app.inject({ method: 'GET', url: '/api/developer/customer-portal', headers: bearer(ws.tokens.viewer!) });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toEqual({ enabled: true, slug: null, url: `http://patchbay.test/portal/${ws.workspaceId}` });
    const slug = `acme-${unique()}`;
    const denied = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.tokens.viewer!), payload: { slug } });
    expect(denied.statusCode).toBe(403);
    const set = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { slug } });
    expect(set.json()).toEqual({ enabled: true, slug, url: `http://patchbay.test/portal/${slug}` });
    const other = await seedWorkspace(ctx());
    const taken = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(other.owner), payload: { slug } });
    expect(taken.statusCode).toBe(409);
    for (const bad of ['12345', 'Upper', 'two--hyphens', '-edge', 'a'.repeat(64)]) {
      const res = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { slug: bad } });
      expect(res.statusCode, bad).toBe(400);
    }
    const cleared = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { slug: null } });
    expect(cleared.json().slug).toBeNull();
  });
});
