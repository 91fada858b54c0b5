import { describe, expect, it } from 'vitest';
import { Recipients } from '../../src/modules/recipients/recipients.service.js';
import { crossSiteVerdict } from '../../src/platform/http/csrf.js';
import { RECIPIENT_SESSION_COOKIE } from '../../src/platform/auth/policy.js';
import { type TestContext, unique, useTestApp } from '../helpers/app.js';

// buildTestApp's PUBLIC_BASE_URL is http://patchbay.test; one console origin is allowlisted for CORS.
const ctx = useTestApp({ corsOrigins: ['https://console.example'] });
const OWN = 'http://patchbay.test';

async function browserSession(c: TestContext): Promise<string> {
  return (await new Recipients(c.database.db).operatorSession(`csrf-${unique()}@partner.test`)).token;
}

const signOut = (c: TestContext, token: string, headers: Record<string, string>) =>
  c.app.inject({ method: 'DELETE', url: '/api/partner-portal/session', headers: { cookie: `${RECIPIENT_SESSION_COOKIE}=${token}`, ...headers } });

const programs = (c: TestContext, token: string) =>
  c.app.inject({ method: 'GET', url: '/api/partner-portal/programs', headers: { cookie: `${RECIPIENT_SESSION_COOKIE}=${token}` } });

describe('cross-site request forgery: the verdict', () => {
  const trusted = (origin: string) => origin === OWN || origin === 'https://console.example';
  it.each([
    ['same-origin fetch from our page (Origin withheld by no-referrer)', { secFetchSite: 'same-origin', origin: 'null' }, true],
    ['same-origin fetch with its origin', { secFetchSite: 'same-origin', origin: OWN }, true],
    ['typed into the address bar or a bookmark', { secFetchSite: 'none', origin: undefined }, true],
    ['form on another site', { secFetchSite: 'cross-site', origin: 'https://evil.example' }, false],
    ['form on another port of the same host (same site, other origin)', { secFetchSite: 'same-site', origin: 'http://patchbay.test:8080' }, false],
    ['sandboxed frame (opaque origin)', { secFetchSite: 'cross-site', origin: 'null' }, false],
    ['allowlisted console calling with CORS', { secFetchSite: 'cross-site', origin: 'https://console.example' }, true],
    ['older browser, own origin', { secFetchSite: undefined, origin: OWN }, true],
    ['older browser, another origin', { secFetchSite: undefined, origin: 'https://evil.example' }, false],
    ['older browser, opaque origin', { secFetchSite: undefined, origin: 'null' }, false],
    ['no browser at all (curl, a script)', { secFetchSite: undefined, origin: undefined }, true],
  ])('%s', (_label, request, allowed) => {
    expect(crossSiteVerdict(request, trusted) === null).toBe(allowed);
  });
});

describe('cross-site request forgery: cookie sessions', () => {
  it('refuses a cross-origin form post that carries the session cookie, and the session survives', async () => {
    const token = await browserSession(ctx());
    const boundary = '----form';
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/partner-portal/programs/payouts/wallet-provider',
      headers: {
        cookie: `${RECIPIENT_SESSION_COOKIE}=${token}`,
        origin: 'http://patchbay.test:8080',
        'sec-fetch-site': 'same-site',
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="livemode"\r\n\r\nfalse\r\n--${boundary}--\r\n`,
    });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('CROSS_SITE_REQUEST_REFUSED');
    const del = await signOut(ctx(), token, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(del.json().code).toBe('CROSS_SITE_REQUEST_REFUSED');
    expect((await programs(ctx(), token)).statusCode).toBe(200);
  });

  it('lets the service’s own pages change state with the cookie', async () => {
    const token = await browserSession(ctx());
    const res = await signOut(ctx(), token, { origin: 'null', 'sec-fetch-site': 'same-origin' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ended: true });
    expect((await programs(ctx(), token)).statusCode).toBe(401);
  });

  it('accepts the origin the browser reached the service at, even when PUBLIC_BASE_URL names another', async () => {
    const token = await browserSession(ctx());
    const res = await signOut(ctx(), token, { host: 'localhost:3000', origin: 'http://localhost:3000' });
    expect(res.statusCode).toBe(200);
  });

  it('lets reads through: a cross-site GET changes nothing', async () => {
    const token = await browserSession(ctx());
    const res = await ctx().app.inject({
      method: 'GET',
      url: '/api/partner-portal/programs',
      headers: { cookie: `${RECIPIENT_SESSION_COOKIE}=${token}`, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.statusCode).toBe(200);
  });

  it('does not touch requests without cookies: bearer tokens from any origin', async () => {
    const token = await browserSession(ctx());
    const res = await ctx().app.inject({
      method: 'DELETE',
      url: '/api/partner-portal/session',
      headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.statusCode).toBe(200);
  });
});
