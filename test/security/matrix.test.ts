import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { RouteEntry } from '../../src/platform/auth/policy.js';
import { bearer, seedWorkspace, TEST_JWT, useTestApp, type SeededWorkspace, type TestContext } from '../helpers/app.js';

const ctx = useTestApp();
const secret = new TextEncoder().encode(TEST_JWT.secret);

const sign = (claims: Record<string, unknown>, opts: { exp?: number; iss?: string; aud?: string; key?: Uint8Array } = {}) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(opts.iss ?? TEST_JWT.issuer)
    .setAudience(opts.aud ?? TEST_JWT.audience)
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 600)
    .sign(opts.key ?? secret);

/**
 * A record of `other` for every route with a path parameter, so the matrix can
 * prove that a caller of another workspace gets 404. A new route with a
 * parameter must add an entry here or this test fails.
 */
type Params = Record<string, string | number>;
const foreignRecords: Record<string, (other: SeededWorkspace) => Params | Promise<Params>> = {
  // An import of the other workspace, queued through the API.
  'GET /api/developer/imports/:importId': async (other) => {
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: { ...bearer(other.owner), prefer: 'respond-async' },
      payload: { customers: [{ email: `matrix-${other.suffix}@x.test` }] },
    });
    return { importId: Number(String(res.headers.location).split('/').pop()) };
  },
  'DELETE /api/developer/customers/:customerId': (other) => ({ customerId: other.ids.customers.c! }),
  ...Object.fromEntries(
    [
      'GET /api/developer/products/:productId',
      'PATCH /api/developer/products/:productId',
      'GET /api/developer/products/:productId/dashboard',
      'GET /api/developer/products/:productId/plugin-package/status',
      'GET /api/developer/products/:productId/plugin-package',
      'POST /api/developer/products/:productId/plugin-package/generate',
      'POST /api/developer/products/:productId/plugin-package/regenerate',
      'GET /api/developer/products/:productId/rest-config',
      'GET /api/developer/products/:productId/files',
      'POST /api/developer/products/:productId/files',
      'GET /api/developer/products/:productId/versions',
      'POST /api/developer/products/:productId/versions',
      'GET /api/developer/products/:productId/reviews',
      'POST /api/developer/products/:productId/reviews/import',
    ].map((key) => [key, (other: SeededWorkspace) => ({ productId: other.ids.products.p1! })]),
  ),
  // Records of another workspace under that workspace's product (the product alone already answers 404).
  'DELETE /api/developer/products/:productId/files/:fileId': (other) => ({ productId: other.ids.products.p1!, fileId: other.ids.files.f! }),
  'POST /api/developer/products/:productId/files/:fileId/link': (other) => ({ productId: other.ids.products.p1!, fileId: other.ids.files.f! }),
  'PATCH /api/developer/products/:productId/versions/:versionId': async (other) => {
    const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${other.ids.products.p1}/versions`, headers: bearer(other.owner), payload: { version: `m-${other.suffix}` } });
    return { productId: other.ids.products.p1!, versionId: res.json().id };
  },
  'POST /api/developer/products/:productId/reviews/:reviewId/status': async (other) => {
    await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${other.ids.products.p1}/reviews/import`, headers: bearer(other.owner), payload: { reviews: [{ rating: 4 }] } });
    const [review] = (await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${other.ids.products.p1}/reviews`, headers: bearer(other.owner) })).json().rows;
    return { productId: other.ids.products.p1!, reviewId: review.id };
  },
  ...Object.fromEntries(
    [
      ...['activate', 'reactivate', 'deactivate', 'suspend', 'unsuspend', 'revoke', 'customer-portal-order/hide', 'customer-portal-order/show'].map(
        (action) => `POST /api/developer/serials/:serialId/${action}`,
      ),
      'GET /api/developer/serials/:serialId/events',
      'GET /api/developer/serials/:serialId/activations',
    ].map((key) => [key, (other: SeededWorkspace) => ({ serialId: other.ids.serials.s! })]),
  ),
  // A seat of the workspace's serial, taken through the licensing runtime (the same machine again is the same seat).
  'DELETE /api/developer/serials/:serialId/activations/:activationId': async (other) => {
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/licensing/v1/activate',
      payload: { productAppId: other.appIds.p1!, serial: other.serialCodes.s!, machineId: 'matrix-machine' },
    });
    return { serialId: other.ids.serials.s!, activationId: res.json().activation.id };
  },
  ...Object.fromEntries(
    ['PATCH /api/developer/partners/programs/:id', ...['status', 'invite', 'live-consent'].map((a) => `POST /api/developer/partners/programs/:id/${a}`)].map((key) => [
      key,
      (other: SeededWorkspace) => ({ id: other.ids.programs.pr! }),
    ]),
  ),
};

const fill = (url: string, params: Record<string, string | number>) => url.replace(/:(\w+)/g, (_, name: string) => String(params[name] ?? 1));

/** Bodies that pass the schema, for routes whose schema refuses the generic one (so the scope check is what answers). */
const validBodies: Record<string, object> = {
  'POST /api/developer/products/:productId/files': { filename: 'a.zip', url: 'https://cdn.example/a.zip' },
  'POST /api/developer/products/:productId/versions': { version: '9.9.9' },
  'PATCH /api/developer/products/:productId/versions/:versionId': { changelog: 'x' },
  'POST /api/developer/products/:productId/reviews/import': { reviews: [{ rating: 4 }] },
  'POST /api/developer/products/:productId/reviews/:reviewId/status': { status: 'hidden' },
  'PATCH /api/developer/products/:productId': { name: 'Renamed' },
  'POST /api/developer/products': { name: 'New' },
  'DELETE /api/developer/serials/:serialId/activations/:activationId': { reason: 'security matrix' },
  'POST /api/developer/products/:productId/plugin-package/generate': { variant: 'native' },
  'POST /api/developer/products/:productId/plugin-package/regenerate': { variant: 'native' },
  'POST /api/developer/partners/programs': { kind: 'affiliate', recipient_email: 'p@partner.test', name: 'P', rate_bps: 100, send_email: false },
  'PATCH /api/developer/partners/programs/:id': { rate_bps: 200, send_email: false },
  'POST /api/developer/partners/programs/:id/status': { status: 'paused' },
  'POST /api/developer/partners/programs/:id/invite': { send_email: false },
  'POST /api/developer/partners/programs/:id/live-consent': { accept: true, terms_version: 1, policy_version: 'patchbay-managed-live-v1' },
  'POST /api/partner-portal/programs/:id/live-consent': { accept: true, terms_version: 1, policy_version: 'patchbay-managed-live-v1' },
  'POST /api/partner-portal/programs/invitations/accept': { token: 'x'.repeat(43), accept_preview_terms: true, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1' },
};
const bodyFor = (route: RouteEntry) =>
  validBodies[`${route.method} ${route.url}`] ?? (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method) ? { confirm: true } : undefined);

// Routes whose query has a required parameter get a valid one, so the answer shows the access check.
const REQUIRED_QUERY: Record<string, string> = { 'GET /api/developer/products/:productId/plugin-package': '?variant=native' };

function call(c: TestContext, route: RouteEntry, url: string, headers: Record<string, string>) {
  const payload = bodyFor(route);
  const query = REQUIRED_QUERY[`${route.method} ${route.url}`] ?? '';
  return c.app.inject({ method: route.method as 'GET', url: `${url}${query}`, headers, ...(payload ? { payload } : {}) });
}

describe('security matrix over every registered route', () => {
  it('every route declares a policy and the catalogue is not empty', () => {
    const routes = ctx().app.routeCatalog;
    expect(routes.length).toBeGreaterThan(5);
    for (const r of routes) expect(r.policy, `${r.method} ${r.url}`).toBeDefined();
  });

  it('answers 401 to a missing, malformed, forged, unsigned, expired or misaddressed token', async () => {
    const ws = await seedWorkspace(ctx());
    const account = String(ws.ids.accounts.owner);
    const bad: Record<string, string> = {
      malformed: 'Bearer not-a-jwt',
      basic: 'Basic dXNlcjpwYXNz',
      forged: `Bearer ${await sign({ sub: account, wid: ws.workspaceId }, { key: new TextEncoder().encode('x'.repeat(48)) })}`,
      unsigned: `Bearer ${new UnsecuredJWT({ sub: account, wid: ws.workspaceId }).setIssuer(TEST_JWT.issuer).setAudience(TEST_JWT.audience).setExpirationTime('1h').encode()}`,
      expired: `Bearer ${await sign({ sub: account, wid: ws.workspaceId }, { exp: Math.floor(Date.now() / 1000) - 10 })}`,
      wrongIssuer: `Bearer ${await sign({ sub: account, wid: ws.workspaceId }, { iss: 'someone-else' })}`,
      wrongAudience: `Bearer ${await sign({ sub: account, wid: ws.workspaceId }, { aud: 'another-api' })}`,
      noExp: `Bearer ${await new SignJWT({ sub: account, wid: ws.workspaceId }).setProtectedHeader({ alg: 'HS256' }).setIssuer(TEST_JWT.issuer).setAudience(TEST_JWT.audience).sign(secret)}`,
      badSub: `Bearer ${await sign({ sub: 'alice', wid: ws.workspaceId })}`,
    };
    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account')) {
      const url = fill(route.url, {});
      const none = await call(ctx(), route, url, {});
      expect(none.statusCode, `${route.method} ${route.url} without token`).toBe(401);
      expect(none.json().code).toBe('UNAUTHENTICATED');
      for (const [label, authorization] of Object.entries(bad)) {
        const res = await call(ctx(), route, url, { authorization });
        expect(res.statusCode, `${route.method} ${route.url} with ${label} token`).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
    }
  });

  it('answers 403 to an account that is not a member of the token workspace or the picked one', async () => {
    const a = await seedWorkspace(ctx());
    const b = await seedWorkspace(ctx());
    const stranger = await sign({ sub: String(a.ids.accounts.owner), wid: b.workspaceId });
    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account')) {
      const res = await call(ctx(), route, fill(route.url, {}), bearer(stranger));
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(res.json().code).toBe('WORKSPACE_ACCESS_DENIED');
    }
  });

  it('answers 403 to a member without the route permission', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'bare', permissions: [], products: 'all' }],
      customers: [{ key: 'c' }],
      serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }],
      orders: [{ key: 'o', customer: 'c' }],
    });
    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account')) {
      const policy = route.policy as Extract<RouteEntry['policy'], { auth: 'account' }>;
      if (!policy.permission && !policy.recordPermission) continue;
      const url = fill(route.url, (await foreignRecords[`${route.method} ${route.url}`]?.(ws)) ?? {});
      const res = await call(ctx(), route, url, bearer(ws.tokens.bare!));
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
  });

  it('answers 404 for a record of another workspace on every route with a path parameter', async () => {
    const mine = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }],
      orders: [{ key: 'o', customer: 'c' }],
      files: [{ key: 'f', product: 'p1', filename: 'a.zip', url: 'https://cdn.example/a.zip' }],
      programs: [{ key: 'pr', kind: 'affiliate', name: 'P', recipientEmail: `pr-${Date.now()}@partner.test`, rateBps: 100, status: 'active' }],
    });
    const withParams = ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account' && r.url.includes(':'));
    for (const route of withParams) {
      const key = `${route.method} ${route.url}`;
      const foreign = foreignRecords[key];
      expect(foreign, `${key} needs an entry in foreignRecords`).toBeDefined();
      const res = await call(ctx(), route, fill(route.url, await foreign!(other)), bearer(mine.owner));
      expect(res.statusCode, key).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
  });

  it('keeps the two identities apart: portal routes refuse developer tokens, developer routes refuse recipient sessions', async () => {
    const ws = await seedWorkspace(ctx());
    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const recipient = (await new Recipients(ctx().database.db, '').operatorSession(`matrix-${Date.now()}@partner.test`)).token;
    const portalRoutes = ctx().app.routeCatalog.filter((r) => r.policy.auth === 'recipient');
    expect(portalRoutes.length).toBeGreaterThan(3);
    for (const route of portalRoutes) {
      const url = fill(route.url, {});
      const attempts: Array<Record<string, string>> = [{}, bearer(ws.owner), bearer(`pps_${"A".repeat(43)}`), { cookie: `patchbay_partner_session=${ws.owner}` }];
      for (const headers of attempts) {
        const res = await call(ctx(), route, url, headers);
        expect(res.statusCode, `${route.method} ${route.url} with ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
    }
    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account')) {
      for (const headers of [bearer(recipient), { cookie: `patchbay_partner_session=${recipient}` }]) {
        const res = await call(ctx(), route, fill(route.url, {}), headers);
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
      }
    }
    // A recipient of no agreement finds nothing behind an agreement id (someone else's): 404.
    const other = await seedWorkspace(ctx(), { programs: [{ key: 'pr', kind: 'affiliate', name: 'P', recipientEmail: `owner-of-${Date.now()}@partner.test`, rateBps: 1, status: 'active' }] });
    const consent = await ctx().app.inject({
      method: 'POST',
      url: `/api/partner-portal/programs/${other.ids.programs.pr}/live-consent`,
      headers: bearer(recipient),
      payload: { accept: true, terms_version: 1, policy_version: 'patchbay-managed-live-v1' },
    });
    expect(consent.statusCode).toBe(404);
  });

  it('selects another workspace of the same account with X-Workspace-Id', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ email: 'in-a@x.test' }] });
    const b = await seedWorkspace(ctx(), { customers: [{ email: 'in-b@x.test' }] });
    await ctx()
      .database.db.insertInto('memberships')
      .values({ workspace_id: b.workspaceId, account_id: a.ids.accounts.owner!, permissions: ['customers.view'], all_products: true })
      .execute();
    const res = await ctx().app.inject({
      method: 'GET',
      url: '/api/developer/customers',
      headers: { ...bearer(a.owner), 'x-workspace-id': String(b.workspaceId) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().rows.map((r: { email: string }) => r.email)).toEqual(['in-b@x.test']);
    const bad = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: { ...bearer(a.owner), 'x-workspace-id': 'abc' } });
    expect(bad.statusCode).toBe(400);
  });

  it('requires a workspace when the token has none', async () => {
    const ws = await seedWorkspace(ctx());
    const token = await sign({ sub: String(ws.ids.accounts.owner) });
    const res = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(token) });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('WORKSPACE_REQUIRED');
  });
});
