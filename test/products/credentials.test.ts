import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProductCredentials } from '../../src/modules/products/product-credentials.service.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, type SeededWorkspace, TEST_LICENSE_KEY, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const MEMBERS = [
  { key: 'viewer', permissions: ['products.view'], products: 'all' as const },
  { key: 'creds', permissions: ['products.view', 'credentials.view'], products: ['p1'] },
];
const restConfig = (ws: SeededWorkspace, token = ws.owner, product = ws.ids.products.p1, query = '') =>
  ctx().app.inject({ method: 'GET', url: `/api/developer/products/${product}/rest-config${query}`, headers: bearer(token) });
const status = (ws: SeededWorkspace, token = ws.owner, product = ws.ids.products.p1) =>
  ctx().app.inject({ method: 'GET', url: `/api/developer/products/${product}/plugin-package/status`, headers: bearer(token) });

/** The product key in clear, read the way a package build will read it. */
async function revealKey(ws: SeededWorkspace, environment: 'live' | 'test' = 'live'): Promise<string> {
  const credentials = new ProductCredentials(ctx().database.db, TEST_LICENSE_KEY);
  const state = await credentials.read(operatorScope(ws.workspaceId, 0), ws.ids.products.p1!, environment);
  return credentials.reveal(state.key!)!;
}

describe('GET /api/developer/products/{productId}/rest-config', () => {
  it('creates the missing credential once, and never returns the secret', async () => {
    const ws = await seedWorkspace(ctx());
    const first = await restConfig(ws);
    expect(first.statusCode).toBe(200);
    const { restApi } = first.json();
    expect(restApi).toMatchObject({
      status: 'ready',
      apiBaseUrl: 'http://patchbay.test/api/licensing/v1',
      productId: ws.ids.products.p1,
      appId: ws.appIds.p1,
      environment: 'live',
      apiStatus: 'never_used',
      lastRequestAt: null,
      secretReturned: false,
      created: true,
      rotationRequired: false,
    });
    expect(restApi.productKey).toMatch(/^pk_live_….{4}$/);
    expect(restApi.productKeyPreview).toBe(restApi.productKey);
    const again = (await restConfig(ws)).json().restApi;
    expect(again).toMatchObject({ created: false, productKeyPreview: restApi.productKeyPreview });
    const key = await revealKey(ws);
    expect(key).toMatch(/^pk_live_[A-Za-z0-9_-]{43}$/);
    expect(first.body).not.toContain(key);
    expect(first.body).not.toContain(key.slice(8, 30));
  });

  it('gives the test environment its own appId and key', async () => {
    const ws = await seedWorkspace(ctx());
    const test = (await restConfig(ws, ws.owner, ws.ids.products.p1, '?environment=test')).json().restApi;
    expect(test.appId).toMatch(/^app_test_[a-z0-9]{20}$/);
    expect(test.productKey).toMatch(/^pk_test_/);
    expect(test.environment).toBe('test');
    expect((await restConfig(ws, ws.owner, ws.ids.products.p1, '?environment=prod')).statusCode).toBe(400);
  });

  it('needs credentials.view; 404 for a foreign or unassigned product; 401 without a token', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    expect((await restConfig(ws, ws.tokens.viewer!)).statusCode).toBe(403);
    expect((await restConfig(ws, ws.tokens.creds!, ws.ids.products.p2)).statusCode).toBe(404);
    expect((await restConfig(ws, ws.owner, other.ids.products.p1)).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/rest-config` })).statusCode).toBe(401);
  });

  it('is not a developer credential: a product key as a bearer token answers 401', async () => {
    const ws = await seedWorkspace(ctx());
    await restConfig(ws);
    const key = await revealKey(ws);
    for (const url of ['/api/developer/products', `/api/developer/products/${ws.ids.products.p1}/rest-config`, '/api/developer/customers']) {
      const res = await ctx().app.inject({ method: 'GET', url, headers: bearer(key) });
      expect(res.statusCode, url).toBe(401);
    }
  });
});

describe('GET /api/developer/products/{productId}/plugin-package/status', () => {
  it('reports the credential and package status, provisioning only for a caller with credentials.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const hidden = await status(ws, ws.tokens.viewer!);
    expect(hidden.statusCode).toBe(200);
    expect(hidden.json()).toMatchObject({ credentialStatus: null, packageReady: false, lastGeneratedAt: null, lastPluginConnectionAt: null, supportedModes: ['validation-only', 'storefront-only', 'storefront-validation'] });
    const keys = await ctx().database.db.selectFrom('product_keys').where('workspace_id', '=', ws.workspaceId).select('id').execute();
    expect(keys).toEqual([]);
    const shown = (await status(ws, ws.tokens.creds!)).json();
    expect(shown.credentialStatus).toMatchObject({ status: 'active', ready: true, isActive: true, appId: ws.appIds.p1, created: true, skipped: false });
    expect(shown.credentialStatus.productKeyPreview).toMatch(/^pk_live_/);
    expect((await status(ws, ws.tokens.creds!)).json().credentialStatus.created).toBe(false);
  });

  it('reports rotationRequired, and never rotates, when the key cannot be recovered (another key-encryption key)', async () => {
    const ws = await seedWorkspace(ctx());
    await restConfig(ws);
    const elsewhere = await buildTestApp({ databaseUrl: process.env.DATABASE_URL, encryptionKey: randomBytes(32) });
    try {
      if (onPostgres) {
        const res = await elsewhere.app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package/status`, headers: bearer(ws.owner) });
        expect(res.json()).toMatchObject({ status: 'rotation_required', credentialStatus: { status: 'rotation_required', ready: false, rotationRequired: true } });
      }
    } finally {
      await elsewhere.app.close();
      await elsewhere.database.close();
    }
    // The same check without a second database: mark the key as sealed under another key.
    await ctx().database.db.updateTable('product_keys').set({ sealed_with: 'another-kek' }).where('workspace_id', '=', ws.workspaceId).execute();
    const res = (await status(ws)).json();
    expect(res.credentialStatus).toMatchObject({ status: 'rotation_required', rotationRequired: true, ready: false });
    const keys = await ctx().database.db.selectFrom('product_keys').where('workspace_id', '=', ws.workspaceId).select('status').execute();
    expect(keys).toEqual([{ status: 'active' }]);
  });

  it('says how long a rotated key stays accepted in each environment: the configured overlap on live, none on test', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const live = (await status(ws, ws.tokens.viewer!)).json();
    expect(live).toMatchObject({ environment: 'live', rotationOverlapSeconds: 7 * 86_400 });
    const test = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package/status?environment=test`, headers: bearer(ws.owner) });
    expect(test.json()).toMatchObject({ environment: 'test', rotationOverlapSeconds: 0 });
    const configured = await buildTestApp({ databaseUrl: process.env.DATABASE_URL, packages: { liveRotationOverlapDays: 3 } });
    try {
      const other = await seedWorkspace(configured);
      const res = await configured.app.inject({ method: 'GET', url: `/api/developer/products/${other.ids.products.p1}/plugin-package/status`, headers: bearer(other.owner) });
      expect(res.json().rotationOverlapSeconds).toBe(3 * 86_400);
    } finally {
      await configured.app.close();
      await configured.database.close();
    }
  });

  it.runIf(onPostgres)('creates one credential and one key when ten first calls race (PostgreSQL)', async () => {
    const ws = await seedWorkspace(ctx());
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? status(ws) : restConfig(ws, ws.owner, ws.ids.products.p1, '?environment=test'))));
    for (const a of answers) expect(a.statusCode).toBe(200);
    const rows = await ctx().database.db.selectFrom('product_keys').where('workspace_id', '=', ws.workspaceId).select('credential_id').execute();
    expect(rows).toHaveLength(2);
    const creds = await ctx().database.db.selectFrom('product_credentials').where('workspace_id', '=', ws.workspaceId).where('product_id', '=', ws.ids.products.p1!).select('environment').execute();
    expect(creds.map((c) => c.environment).sort()).toEqual(['live', 'test']);
  });
});

describe('product keys in the licensing runtime', () => {
  const validate = (appId: string, serial: string, key?: string) =>
    ctx().app.inject({
      method: 'POST',
      url: '/api/licensing/v1/validate',
      headers: key ? { 'x-product-key': key } : {},
      payload: { productAppId: appId, serial, machineId: 'm-1' },
    });

  it('accepts the key of the appId, refuses another product’s or environment’s key with 401, and works without a key', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    await restConfig(ws);
    const testAppId = (await restConfig(ws, ws.owner, ws.ids.products.p1, '?environment=test')).json().restApi.appId;
    await restConfig(ws, ws.owner, ws.ids.products.p2);
    const live = await revealKey(ws, 'live');
    const test = await revealKey(ws, 'test');
    expect((await validate(ws.appIds.p1!, ws.serialCodes.s!, live)).statusCode).toBe(200);
    expect((await validate(ws.appIds.p1!, ws.serialCodes.s!)).statusCode).toBe(200);
    expect((await validate(testAppId, ws.serialCodes.s!, test)).statusCode).toBe(200);
    for (const [appId, key] of [
      [ws.appIds.p1!, test],
      [testAppId, live],
      [ws.appIds.p2!, live],
      [ws.appIds.p1!, 'pk_live_not-a-real-key'],
    ] as const) {
      const res = await validate(appId, ws.serialCodes.s!, key);
      expect(res.statusCode, `${appId} ${key.slice(0, 8)}`).toBe(401);
      expect(res.json().code).toBe('INVALID_PRODUCT_KEY');
    }
  });

  it('records the REST and plugin connection status in batches, without a write per request', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    await restConfig(ws);
    const key = await revealKey(ws);
    await validate(ws.appIds.p1!, ws.serialCodes.s!, key);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const { restApi } = (await restConfig(ws)).json();
    expect(restApi.apiStatus).toBe('active');
    expect(Date.now() - Date.parse(restApi.lastRequestAt)).toBeLessThan(10_000);
    const shown = (await status(ws)).json();
    expect(shown.lastPluginConnectionAt).toEqual(expect.any(String));
  });
});
