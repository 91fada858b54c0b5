import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { askLink, linkTokenFor, someClient } from './accounts-helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport, outbox: true }, trustProxy: true });

describe('the development outbox', () => {
  it('shows a workspace owner the e-mails sent, newest first, with their links', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'lead', permissions: ['*'], products: 'all' }] });
    const email = `lead-${ws.suffix}@dev.test`;
    await askLink(ctx(), email, someClient());
    const token = await linkTokenFor(ctx(), transport, email);
    const res = await ctx().app.inject({ method: 'GET', url: '/api/developer/outbox', headers: bearer(ws.owner) });
    expect(res.statusCode, res.body).toBe(200);
    const [newest] = res.json().rows;
    expect(newest).toEqual({
      id: expect.any(Number),
      to: email,
      subject: 'Your Patchbay console sign-in link',
      text: expect.stringContaining(token!),
      links: [`http://patchbay.test/console/sign-in#token=${token}`],
      sentAt: expect.any(String),
    });
    // The configured transport still got it.
    expect(transport.sent.at(-1)!.to).toBe(email);
  });

  it('is the owners’ alone: a teammate with every permission gets 403, an API token 403, no credential 401', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'lead', permissions: ['*'], products: 'all' }] });
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/outbox', headers: bearer(ws.tokens.lead!) }), 403, 'OWNER_REQUIRED');
    const apiToken = (await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(ws.owner), payload: { name: 'x' } })).json().token;
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/outbox', headers: bearer(apiToken) }), 403, 'API_TOKEN_NOT_ALLOWED');
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/outbox' }), 401, 'UNAUTHENTICATED');
  });
});

describe('without the outbox (production, or SMTP)', () => {
  const quiet = useTestApp();

  it('has no such route: 404', async () => {
    const ws = await seedWorkspace(quiet());
    expectProblem(await quiet().app.inject({ method: 'GET', url: '/api/developer/outbox', headers: bearer(ws.owner) }), 404, 'ROUTE_NOT_FOUND');
    expect(quiet().app.routeCatalog.some((r) => r.url === '/api/developer/outbox')).toBe(false);
  });
});
