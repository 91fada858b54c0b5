import { createHmac } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { RouteEntry } from '../../src/platform/auth/policy.js';
import { bearer, seedWorkspace, TEST_JWT, TEST_LICENSE_KEY, useTestApp, type SeededWorkspace, type TestContext } from '../helpers/app.js';

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
  // The team of the other workspace: a member, an API token, a payout run.
  'PATCH /api/developer/members/:memberId': (other) => ({ memberId: other.ids.accounts.owner! }),
  'DELETE /api/developer/members/:memberId': (other) => ({ memberId: other.ids.accounts.owner! }),
  'DELETE /api/developer/api-tokens/:tokenId': async (other) => {
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(other.owner), payload: { name: 'matrix' } });
    return { tokenId: res.json().id };
  },
  // A webhook endpoint of the other workspace, and the delivery of its test event.
  ...Object.fromEntries(
    [
      'GET /api/developer/webhooks/endpoints/:endpointId',
      'PATCH /api/developer/webhooks/endpoints/:endpointId',
      'DELETE /api/developer/webhooks/endpoints/:endpointId',
      ...['rotate-secret', 'test', 'redeliver-failed'].map((a) => `POST /api/developer/webhooks/endpoints/:endpointId/${a}`),
      'GET /api/developer/webhooks/endpoints/:endpointId/deliveries',
    ].map((key) => [key, async (other: SeededWorkspace) => ({ endpointId: (await webhookOf(other)).endpointId })]),
  ),
  'POST /api/developer/webhooks/deliveries/:deliveryId/redeliver': async (other) => ({ deliveryId: (await webhookOf(other)).deliveryId }),
  // A checkout connection of the other workspace, and a failed event of its log.
  ...Object.fromEntries(
    ['GET', 'PATCH', 'DELETE'].map((m) => `${m} /api/developer/checkout-connections/:connectionId`).concat('GET /api/developer/checkout-connections/:connectionId/events').map((key) => [
      key,
      async (other: SeededWorkspace) => ({ connectionId: (await checkoutConnectionOf(other)).connectionId }),
    ]),
  ),
  'POST /api/developer/checkout-connections/:connectionId/events/:eventId/reprocess': (other) => checkoutConnectionOf(other),
  'GET /api/developer/partners/payouts/runs/:runId': async (other) => {
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/partners/payouts/runs', headers: bearer(other.owner), payload: {} });
    return { runId: res.json().id };
  },
  ...Object.fromEntries(
    ['PATCH /api/developer/partners/programs/:id', ...['status', 'invite', 'live-consent'].map((a) => `POST /api/developer/partners/programs/:id/${a}`)].map((key) => [
      key,
      (other: SeededWorkspace) => ({ id: other.ids.programs.pr! }),
    ]),
  ),
};

/** A webhook endpoint of the workspace (https to a name that never resolves: its deliveries fail at once) and its test delivery. */
async function webhookOf(ws: SeededWorkspace): Promise<{ endpointId: number; deliveryId: number }> {
  const created = await ctx().app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url: 'https://hooks.invalid/patchbay', events: ['*'] } });
  const endpointId = created.json().id as number;
  const test = await ctx().app.inject({ method: 'POST', url: `/api/developer/webhooks/endpoints/${endpointId}/test`, headers: bearer(ws.owner) });
  return { endpointId, deliveryId: test.json().id as number };
}

/** A Lemon Squeezy connection of the workspace and the failed event of an unmapped order (signed as Lemon Squeezy signs). */
async function checkoutConnectionOf(ws: SeededWorkspace): Promise<{ connectionId: number; eventId: number }> {
  const secret = `matrix-secret-${ws.suffix}`;
  const created = await ctx().app.inject({ method: 'POST', url: '/api/developer/checkout-connections', headers: bearer(ws.owner), payload: { provider: 'lemonsqueezy', signingSecret: secret } });
  const connectionId = created.json().id as number;
  const at = new Date().toISOString();
  const order = { status: 'paid', currency: 'USD', user_email: `buyer-${ws.suffix}@x.test`, subtotal: 100, discount_total: 0, total: 100, created_at: at, first_order_item: { product_id: 1, variant_id: 1 } };
  const payload = JSON.stringify({ meta: { event_name: 'order_created' }, data: { type: 'orders', id: ws.suffix, attributes: order } });
  await ctx().app.inject({ method: 'POST', url: `/api/checkout/lemonsqueezy/${connectionId}/events`, headers: { 'content-type': 'application/json', 'x-signature': createHmac('sha256', secret).update(payload).digest('hex') }, payload });
  const [event] = (await ctx().app.inject({ method: 'GET', url: `/api/developer/checkout-connections/${connectionId}/events`, headers: bearer(ws.owner) })).json().rows;
  return { connectionId, eventId: event.id as number };
}

const fill = (url: string, params: Record<string, string | number>) => url.replace(/:(\w+)/g, (_, name: string) => String(params[name] ?? 1));

/** A workspace with a record of every kind a path parameter names (the keys foreignRecords reads). */
const workspaceWithRecords = (extra: Parameters<typeof seedWorkspace>[1] = {}) =>
  seedWorkspace(ctx(), {
    customers: [{ key: 'c' }],
    serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }],
    orders: [{ key: 'o', customer: 'c' }],
    files: [{ key: 'f', product: 'p1', filename: 'a.zip', url: 'https://cdn.example/a.zip' }],
    programs: [{ key: 'pr', kind: 'affiliate', name: 'P', recipientEmail: `pr-${Date.now()}-${Math.random()}@partner.test`, rateBps: 100, status: 'active' }],
    ...extra,
  });

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
  'POST /api/developer/members': { email: 'matrix@team.test', permissions: [], products: 'all' },
  'PATCH /api/developer/members/:memberId': { permissions: [] },
  'POST /api/developer/api-tokens': { name: 'matrix' },
  'POST /api/developer/partners/payouts/runs': {},
  'PATCH /api/developer/workspace': { name: 'Matrix' },
  'POST /api/developer/session': { token: `dsl_${'A'.repeat(43)}` },
  'PATCH /api/developer/webhooks/endpoints/:endpointId': { enabled: false },
  'POST /api/developer/webhooks/endpoints': { url: 'https://hooks.invalid/patchbay', events: ['*'] },
  'POST /api/developer/webhooks/endpoints/:endpointId/redeliver-failed': { since: '2026-01-01T00:00:00Z' },
  'PATCH /api/developer/checkout-connections/:connectionId': { enabled: true },
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
      unknownSession: `Bearer pds_${'A'.repeat(43)}`,
      unknownApiToken: `Bearer pat_${'A'.repeat(43)}`,
      shortSession: 'Bearer pds_short',
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
    const ws = await workspaceWithRecords({ members: [{ key: 'bare', permissions: [], products: 'all' }] });
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
    const other = await workspaceWithRecords();
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

  it('keeps the two identities apart: portal routes refuse developer credentials, developer routes refuse recipient sessions', async () => {
    const ws = await seedWorkspace(ctx());
    const dev = await developerCredentials(ws);
    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const recipient = (await new Recipients(ctx().database.db).operatorSession(`matrix-${Date.now()}@partner.test`)).token;
    const portalRoutes = ctx().app.routeCatalog.filter((r) => r.policy.auth === 'recipient');
    expect(portalRoutes.length).toBeGreaterThan(3);
    for (const route of portalRoutes) {
      const url = fill(route.url, {});
      const attempts: Array<Record<string, string>> = [
        {},
        bearer(ws.owner),
        bearer(`pps_${'A'.repeat(43)}`),
        { cookie: `patchbay_partner_session=${ws.owner}` },
        bearer(dev.session),
        bearer(dev.apiToken),
        { cookie: `patchbay_developer_session=${dev.session}` },
      ];
      for (const headers of attempts) {
        const res = await call(ctx(), route, url, headers);
        expect(res.statusCode, `${route.method} ${route.url} with ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
    }
    for (const route of ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account' || r.policy.auth === 'developer')) {
      for (const headers of [bearer(recipient), { cookie: `patchbay_partner_session=${recipient}` }, { cookie: `patchbay_developer_session=${recipient}` }]) {
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

/** A console session and an API token of a workspace's member (the owner unless named). */
async function developerCredentials(ws: SeededWorkspace, member = 'owner'): Promise<{ session: string; apiToken: string }> {
  const { createAccounts } = await import('../../src/modules/accounts/index.js');
  const { LinkTokens } = await import('../../src/platform/mail/link-tokens.js');
  const accounts = createAccounts(ctx().database.db, new LinkTokens(TEST_LICENSE_KEY));
  const link = await accounts.sessions.bannerLink(ws.ids.accounts[member]!, 60_000);
  const session = (await accounts.sessions.signIn(link)).token;
  const jwt = member === 'owner' ? ws.owner : ws.tokens[member]!;
  const apiToken = (await ctx().app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(jwt), payload: { name: 'matrix' } })).json().token as string;
  return { session, apiToken };
}

describe('security matrix: console sessions and API tokens', () => {
  const accountRoutes = () => ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account');

  it('answers every account route for a console session or an API token as for the member’s JWT: 403 in a workspace they are not a member of', async () => {
    const mine = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const { session, apiToken } = await developerCredentials(other);
    for (const route of accountRoutes()) {
      const key = `${route.method} ${route.url}`;
      const picked = { 'x-workspace-id': String(mine.workspaceId) };
      for (const [label, headers] of Object.entries({ session: { ...bearer(session), ...picked }, cookie: { cookie: `patchbay_developer_session=${session}`, ...picked }, apiToken: { ...bearer(apiToken), ...picked } })) {
        const res = await call(ctx(), route, fill(route.url, {}), headers);
        const expected = label === 'apiToken' && route.policy.auth === 'account' && route.policy.apiTokens === false ? 'API_TOKEN_NOT_ALLOWED' : 'WORKSPACE_ACCESS_DENIED';
        expect(res.statusCode, `${key} with ${label}`).toBe(403);
        expect(res.json().code, `${key} with ${label}`).toBe(expected);
      }
    }
  });

  it('answers 404 for another workspace’s records to a console session and an API token, on every route with a path parameter', async () => {
    const mine = await seedWorkspace(ctx());
    const { session, apiToken } = await developerCredentials(mine);
    const other = await workspaceWithRecords();
    for (const route of accountRoutes().filter((r) => r.url.includes(':'))) {
      const key = `${route.method} ${route.url}`;
      const url = fill(route.url, await foreignRecords[key]!(other));
      const tokenRefused = route.policy.auth === 'account' && route.policy.apiTokens === false;
      for (const [label, headers] of Object.entries({ session: { cookie: `patchbay_developer_session=${session}` }, apiToken: bearer(apiToken) })) {
        const res = await call(ctx(), route, url, headers);
        const [status, code] = label === 'apiToken' && tokenRefused ? [403, 'API_TOKEN_NOT_ALLOWED'] : [404, 'NOT_FOUND'];
        expect(res.statusCode, `${key} with ${label}`).toBe(status);
        expect(res.json().code, `${key} with ${label}`).toBe(code);
      }
    }
  });

  it('answers 403 to a console session or an API token of a member without the route permission', async () => {
    const ws = await workspaceWithRecords({ members: [{ key: 'bare', permissions: [], products: 'all' }] });
    const { session, apiToken } = await developerCredentials(ws, 'bare');
    for (const route of accountRoutes()) {
      const policy = route.policy as Extract<RouteEntry['policy'], { auth: 'account' }>;
      if (!policy.permission && !policy.recordPermission) continue;
      const url = fill(route.url, (await foreignRecords[`${route.method} ${route.url}`]?.(ws)) ?? {});
      for (const [label, headers] of Object.entries({ session: bearer(session), apiToken: bearer(apiToken) })) {
        const res = await call(ctx(), route, url, headers);
        const code = label === 'apiToken' && policy.apiTokens === false ? 'API_TOKEN_NOT_ALLOWED' : 'FORBIDDEN';
        expect(res.statusCode, `${route.method} ${route.url} with ${label}`).toBe(403);
        expect(res.json().code, `${route.method} ${route.url} with ${label}`).toBe(code);
      }
    }
  });

  it('keeps the console session routes for sessions: no credential, a JWT, an API token or a partner session answers 401', async () => {
    const ws = await seedWorkspace(ctx());
    const { apiToken } = await developerCredentials(ws);
    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const recipient = (await new Recipients(ctx().database.db).operatorSession(`matrix-dev-${Date.now()}@partner.test`)).token;
    const routes = ctx().app.routeCatalog.filter((r) => r.policy.auth === 'developer');
    expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(['DELETE /api/developer/session', 'GET /api/developer/session']);
    for (const route of routes) {
      for (const headers of [{}, bearer(ws.owner), bearer(apiToken), bearer(recipient), { cookie: `patchbay_partner_session=${recipient}` }, { cookie: `patchbay_developer_session=${ws.owner}` }]) {
        const res = await call(ctx(), route, route.url, headers as Record<string, string>);
        expect(res.statusCode, `${route.method} ${route.url} with ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
        expect(res.json().code).toBe('UNAUTHENTICATED');
      }
    }
  });
});

describe('security matrix: the buyers’ portal, a third kind of caller', () => {
  const PORTAL_ROUTE = /^\/api\/customer-portal\//;
  const customerRoutes = () => ctx().app.routeCatalog.filter((r) => r.policy.auth === 'customer');

  /** A store with two buyers: `me` (whose session calls) and `other` (whose records must stay out of reach). */
  async function twoBuyers() {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'me' }, { key: 'other' }],
      orders: [
        { key: 'mine', customer: 'me', items: [{ product: 'p1', serial: 'mine' }] },
        { key: 'theirs', customer: 'other', items: [{ product: 'p2', serial: 'theirs' }] },
      ],
      serials: [
        { key: 'mine', product: 'p1', customer: 'me', order: 'mine' },
        { key: 'theirs', product: 'p2', customer: 'other', order: 'theirs' },
      ],
    });
    const { CustomerSessions } = await import('../../src/modules/customer-portal/index.js');
    const sessions = new CustomerSessions(ctx().database.db, 'http://patchbay.test');
    const me = (await sessions.operatorSession(String(ws.workspaceId), `c0-${ws.suffix}@cust.test`))!.token;
    const theirSeat = await ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/activate', payload: { productAppId: ws.appIds.p2, serial: ws.serialCodes.theirs, machineId: 'their-machine' } });
    // A stored file of the product only the other buyer is entitled to.
    const fileId = `file_matrix${ws.suffix}`;
    await ctx()
      .database.db.insertInto('product_files')
      .values({ id: fileId, workspace_id: ws.workspaceId, product_id: ws.ids.products.p2!, filename: 'theirs.zip', platform: 'any', type: 'installer', version: null, managed: true, storage_key: 'matrix/theirs.zip', external_url: null, content_type: null, size_bytes: 1, sha256: null, uploaded_by: null })
      .execute();
    return { ws, me, theirActivation: theirSeat.json().activation.id as number, fileId };
  }

  it('covers every portal route, and every portal route takes a buyer session and nothing else', () => {
    const routes = ctx().app.routeCatalog.filter((r) => PORTAL_ROUTE.test(r.url));
    expect(routes.length).toBeGreaterThan(8);
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      const signIn = ['POST /api/customer-portal/session/link', 'POST /api/customer-portal/session'].includes(key);
      expect(route.policy.auth, key).toBe(signIn ? 'public' : 'customer');
    }
  });

  it('refuses with 401 every credential that is not a buyer session on every portal route', async () => {
    const ws = await seedWorkspace(ctx());
    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const { ProductCredentials } = await import('../../src/modules/products/product-credentials.service.js');
    const { operatorScope } = await import('../../src/platform/auth/scope.js');
    const recipient = (await new Recipients(ctx().database.db).operatorSession(`matrix-${Date.now()}@partner.test`)).token;
    const credentials = new ProductCredentials(ctx().database.db, TEST_LICENSE_KEY);
    const state = await credentials.ensure(ctx().database.db, operatorScope(ws.workspaceId, 0), { id: ws.ids.products.p1!, app_id: ws.appIds.p1! }, 'live');
    const productKey = credentials.reveal(state.key!)!;
    expect(productKey).toMatch(/^pk_live_/);
    const attempts: Record<string, Record<string, string>> = {
      none: {},
      developerJwt: bearer(ws.owner),
      developerJwtAsCookie: { cookie: `patchbay_customer_session=${ws.owner}` },
      recipientBearer: bearer(recipient),
      recipientCookie: { cookie: `patchbay_partner_session=${recipient}` },
      productKeyBearer: bearer(productKey),
      productKeyHeader: { 'x-product-key': productKey },
      forgedSession: bearer(`pcs_${'A'.repeat(43)}`),
      forgedCookie: { cookie: `patchbay_customer_session=pcs_${'A'.repeat(43)}` },
      basic: { authorization: 'Basic dXNlcjpwYXNz' },
    };
    for (const route of customerRoutes()) {
      for (const [label, headers] of Object.entries(attempts)) {
        const res = await call(ctx(), route, fill(route.url, {}), headers);
        expect(res.statusCode, `${route.method} ${route.url} with ${label}`).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.json().code).toBe('UNAUTHENTICATED');
      }
    }
  });

  it('refuses a buyer session (bearer or cookie) on every developer, console and partner route', async () => {
    const { me } = await twoBuyers();
    const others = ctx().app.routeCatalog.filter((r) => r.policy.auth === 'account' || r.policy.auth === 'recipient' || r.policy.auth === 'developer');
    expect(others.length).toBeGreaterThan(40);
    for (const route of others) {
      for (const headers of [bearer(me), { cookie: `patchbay_customer_session=${me}` }, { cookie: `patchbay_partner_session=${me}` }, { cookie: `patchbay_developer_session=${me}` }]) {
        const res = await call(ctx(), route, fill(route.url, {}), headers);
        expect(res.statusCode, `${route.method} ${route.url} with ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
      }
    }
  });

  it('answers 404 for another buyer’s order, serial, seat and file on every portal route that takes an id', async () => {
    const { ws, me, theirActivation, fileId } = await twoBuyers();
    const foreign: Record<string, { params: Params; body?: object }> = {
      'GET /api/customer-portal/orders/:orderId': { params: { orderId: ws.ids.orders.theirs! } },
      'DELETE /api/customer-portal/licenses/:serialId/activations/:activationId': { params: { serialId: ws.ids.serials.theirs!, activationId: theirActivation } },
      'POST /api/customer-portal/licenses/:serialId/offline-activations': {
        params: { serialId: ws.ids.serials.theirs! },
        body: { productAppId: ws.appIds.p2, serial: ws.serialCodes.theirs, machineId: 'matrix-machine', nonce: 'matrix-nonce-1' },
      },
      'POST /api/customer-portal/downloads/:fileId/link': { params: { fileId } },
    };
    for (const route of customerRoutes().filter((r) => r.url.includes(':'))) {
      const key = `${route.method} ${route.url}`;
      const record = foreign[key];
      expect(record, `${key} needs an entry here`).toBeDefined();
      const res = await ctx().app.inject({ method: route.method as 'GET', url: fill(route.url, record!.params), headers: bearer(me), ...(record!.body ? { payload: record!.body } : {}) });
      expect(res.statusCode, key).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    // Nothing of the other buyer changed.
    const seat = await ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/validate', payload: { productAppId: ws.appIds.p2, serial: ws.serialCodes.theirs, machineId: 'their-machine' } });
    expect(seat.json().valid).toBe(true);
    const seats = await ctx().database.db.selectFrom('serial_activations').where('serial_id', '=', ws.ids.serials.theirs!).select('machine_id').execute();
    expect(seats.map((s) => s.machine_id)).toEqual(['their-machine']);
  });

  it('refuses a cookie-authenticated change from another site (the central cross-site guard)', async () => {
    const { me } = await twoBuyers();
    const res = await ctx().app.inject({
      method: 'DELETE',
      url: '/api/customer-portal/session',
      headers: { cookie: `patchbay_customer_session=${me}`, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('CROSS_SITE_REQUEST_REFUSED');
    const own = await ctx().app.inject({ method: 'DELETE', url: '/api/customer-portal/session', headers: { cookie: `patchbay_customer_session=${me}`, 'sec-fetch-site': 'same-origin' } });
    expect(own.statusCode).toBe(200);
  });
});
