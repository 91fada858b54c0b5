import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, type SeededWorkspace, type TestContext, useTestApp } from '../helpers/app.js';

const storage = () => new LocalStorage(mkdtempSync(path.join(os.tmpdir(), 'patchbay-packages-')));
const ctx = useTestApp({ storage: storage(), packages: { downloadsPerMinute: 1000 } });

const MEMBERS = [
  { key: 'viewer', permissions: ['product_files.view'], products: 'all' as const },
  { key: 'scoped', permissions: ['product_files.view', 'product_files.manage', 'storefront.manage'], products: ['p1'] },
  { key: 'none', permissions: ['products.view', 'credentials.view'], products: 'all' as const },
  { key: 'store', permissions: ['storefront.manage'], products: 'all' as const },
];

const base = (ws: SeededWorkspace, product = ws.ids.products.p1) => `/api/developer/products/${product}/plugin-package`;
const getPackage = (c: TestContext, ws: SeededWorkspace, query: string, token = ws.owner, product = ws.ids.products.p1) =>
  c.app.inject({ method: 'GET', url: `${base(ws, product)}${query}`, headers: bearer(token) });
const post = (c: TestContext, ws: SeededWorkspace, action: 'generate' | 'regenerate', body: object, token = ws.owner, product = ws.ids.products.p1) =>
  c.app.inject({ method: 'POST', url: `${base(ws, product)}/${action}`, headers: bearer(token), payload: body });

async function fetchArchive(c: TestContext, url: string) {
  const res = await c.app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(res.headers['content-type']).toBe('application/zip');
  expect(res.headers['cache-control']).toBe('private, no-store');
  const files = unzipSync(new Uint8Array(res.rawPayload));
  return { bytes: res.rawPayload, files, text: (name: string) => strFromU8(files[name]!) };
}

const keyIn = (files: Record<string, Uint8Array>) => {
  for (const content of Object.values(files)) {
    const m = /pk_(?:live|test)_[A-Za-z0-9_-]{43}/.exec(strFromU8(content));
    if (m) return m[0];
  }
  return null;
};

const validate = (c: TestContext, appId: string, serial: string, key: string) =>
  c.app.inject({ method: 'POST', url: '/api/licensing/v1/validate', headers: { 'x-product-key': key }, payload: { productAppId: appId, serial, machineId: 'machine-1' } });

describe('GET …/plugin-package', () => {
  it.each(['pluginscript', 'native'])('builds a %s package once, answers a private link, and reuses it for the same settings', async (variant) => {
    const ws = await seedWorkspace(ctx());
    const res = await getPackage(ctx(), ws, `?variant=${variant}&uiWidth=800&uiHeight=500&experienceMode=storefront-validation`);
    expect(res.statusCode, res.body).toBe(200);
    const link = res.json();
    expect(link).toEqual({ url: expect.stringMatching(/^http:\/\/patchbay\.test\/api\/private-links\/packages\/pkg_/), filename: expect.stringMatching(new RegExp(`-${variant}-live-[0-9a-f]{12}\\.zip$`)), expiresIn: 300 });
    const archive = await fetchArchive(ctx(), link.url);
    const root = `patchbay-${variant}`;
    const manifest = JSON.parse(archive.text(`${root}/patchbay-manifest.json`));
    expect(manifest).toMatchObject({
      packageFormat: 1,
      variant,
      product: { id: ws.ids.products.p1, appId: ws.appIds.p1, environment: 'live' },
      settings: { experienceMode: 'storefront-validation', uiWidth: 800, uiHeight: 500, releaseChannel: 'stable' },
      licensing: { baseUrl: 'http://patchbay.test/api/licensing/v1', offlineGraceDays: 14, keyIds: [expect.stringMatching(/^lk_/)] },
    });
    // Every file is listed with its checksum, and nothing is left unfilled.
    for (const f of manifest.files) {
      const content = archive.files[`${root}/${f.path}`]!;
      expect(createHash('sha256').update(content).digest('hex')).toBe(f.sha256);
      expect(strFromU8(content)).not.toMatch(/\{\{/);
    }
    expect(manifest.files.length).toBeGreaterThan(1);
    expect(keyIn(archive.files)).toMatch(/^pk_live_/);

    // The download is recorded once its last byte is sent, which can be after the client has the whole answer.
    const actions = async () => (await ctx().database.db.selectFrom('package_activity').where('workspace_id', '=', ws.workspaceId).select('action').orderBy('id').execute()).map((a) => a.action);
    await expect.poll(actions, { timeout: 10_000, interval: 20 }).toEqual(['built', 'downloaded']);

    // The same request again: the stored package, no new build.
    const again = (await getPackage(ctx(), ws, `?variant=${variant}&uiWidth=800&uiHeight=500&experienceMode=storefront-validation`)).json();
    expect(again.url.split('?')[0]).toBe(link.url.split('?')[0]);
    const builds = await ctx().database.db.selectFrom('package_builds').where('workspace_id', '=', ws.workspaceId).select('id').execute();
    expect(builds).toHaveLength(1);
    expect(await actions()).toEqual(['built', 'downloaded', 'reused']);
  });

  it('embeds a product key that the licensing runtime accepts for the product', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's1', product: 'p1' }] });
    const { url } = (await getPackage(ctx(), ws, '?variant=pluginscript')).json();
    const key = keyIn((await fetchArchive(ctx(), url)).files)!;
    const res = await validate(ctx(), ws.appIds.p1!, ws.serialCodes.s1!, key);
    expect(res.statusCode).toBe(200);
    // Another product's appId with this key: 401.
    expect((await validate(ctx(), ws.appIds.p2!, ws.serialCodes.s1!, key)).statusCode).toBe(401);
  });

  it('names each bad setting with 400', async () => {
    const ws = await seedWorkspace(ctx());
    const cases: Array<[string, string]> = [
      ['', 'variant'],
      ['?variant=vst3', 'variant'],
      ['?variant=native&releaseChannel=beta', 'releaseChannel'],
      ['?variant=native&experienceMode=fullscreen', 'experienceMode'],
      ['?variant=native&uiWidth=0', 'uiWidth'],
      ['?variant=native&uiHeight=5000', 'uiHeight'],
      ['?variant=native&uiWidth=abc', 'uiWidth'],
      ['?variant=native&environment=staging', 'environment'],
      ['?variant=native&colour=red', 'colour'],
    ];
    for (const [query, field] of cases) {
      const res = await getPackage(ctx(), ws, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(JSON.stringify(res.json()), query).toContain(field);
    }
    const channel = await getPackage(ctx(), ws, '?variant=native&releaseChannel=beta');
    expect(JSON.stringify(channel.json())).toContain('stable');
    expect((await post(ctx(), ws, 'generate', { variant: 'native', uiWidth: -3 })).statusCode).toBe(400);
    expect((await post(ctx(), ws, 'generate', {})).statusCode).toBe(400);
  });

  it('enforces 401, 403 and 404 on every package route; a product key is no developer credential', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    const q = '?variant=pluginscript';
    expect((await ctx().app.inject({ method: 'GET', url: `${base(ws)}${q}` })).statusCode).toBe(401);
    expect((await getPackage(ctx(), ws, q, 'not-a-token')).statusCode).toBe(401);
    expect((await getPackage(ctx(), ws, q, ws.tokens.none!)).statusCode).toBe(403);
    expect((await getPackage(ctx(), ws, q, ws.tokens.viewer!)).statusCode).toBe(200);
    expect((await post(ctx(), ws, 'generate', { variant: 'native' }, ws.tokens.viewer!)).statusCode).toBe(403);
    expect((await post(ctx(), ws, 'regenerate', { variant: 'native' }, ws.tokens.viewer!)).statusCode).toBe(403);
    expect((await getPackage(ctx(), ws, q, ws.tokens.scoped!, ws.ids.products.p2)).statusCode).toBe(404);
    expect((await post(ctx(), ws, 'generate', { variant: 'native' }, ws.tokens.scoped!, ws.ids.products.p2)).statusCode).toBe(404);
    expect((await post(ctx(), ws, 'generate', { variant: 'native' }, ws.tokens.scoped!)).statusCode).toBe(200);
    expect((await getPackage(ctx(), ws, q, ws.owner, other.ids.products.p1)).statusCode).toBe(404);
    expect((await post(ctx(), ws, 'regenerate', { variant: 'native' }, ws.owner, other.ids.products.p1)).statusCode).toBe(404);

    const { url } = (await getPackage(ctx(), ws, q)).json();
    const key = keyIn((await fetchArchive(ctx(), url)).files)!;
    expect((await getPackage(ctx(), ws, q, key)).statusCode).toBe(401);
    expect((await post(ctx(), ws, 'generate', { variant: 'native' }, key)).statusCode).toBe(401);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/storefront/plugin-package', headers: bearer(key) })).statusCode).toBe(401);
  });

  it('answers 404 for a tampered link and 410 for an expired one', async () => {
    const ws = await seedWorkspace(ctx());
    const { url } = (await getPackage(ctx(), ws, '?variant=native')).json();
    const tampered = url.replace(/signature=./, (m: string) => `${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`);
    expect((await ctx().app.inject({ method: 'GET', url: tampered })).statusCode).toBe(404);
    const expired = ctx().app.privateLinks.signer.sign(new URL(url).pathname, -1);
    const gone = await ctx().app.inject({ method: 'GET', url: expired });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().code).toBe('LINK_EXPIRED');
  });
});

describe('POST …/plugin-package/generate and regenerate', () => {
  it('generates with the saved settings; the same inputs give the same bytes', async () => {
    const ws = await seedWorkspace(ctx());
    const first = await post(ctx(), ws, 'generate', { variant: 'pluginscript', uiWidth: 720, uiHeight: 480, experienceMode: 'validation-only' });
    expect(first.statusCode, first.body).toBe(200);
    const a = await fetchArchive(ctx(), first.json().url);
    // Only the variant: the saved settings are used.
    const second = await post(ctx(), ws, 'generate', { variant: 'pluginscript' });
    const b = await fetchArchive(ctx(), second.json().url);
    expect(createHash('sha256').update(b.bytes).digest('hex')).toBe(createHash('sha256').update(a.bytes).digest('hex'));
    expect(JSON.parse(b.text('patchbay-pluginscript/patchbay-manifest.json')).settings).toEqual({ experienceMode: 'validation-only', uiWidth: 720, uiHeight: 480, releaseChannel: 'stable' });
    // GET without settings uses the saved ones too.
    const got = await getPackage(ctx(), ws, '?variant=pluginscript');
    expect(got.json().url.split('?')[0]).toBe(second.json().url.split('?')[0]);

    const status = (await ctx().app.inject({ method: 'GET', url: `${base(ws)}/status`, headers: bearer(ws.owner) })).json();
    expect(status).toMatchObject({ packageReady: true, lastGeneratedAt: expect.any(String) });
    const dashboard = (await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/dashboard`, headers: bearer(ws.owner) })).json();
    expect(dashboard.pluginPackage).toMatchObject({ packageReady: true });
  });

  it('rotates the key on regenerate: a test key stops at once, a live key keeps working through the overlap', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's1', product: 'p1' }] });
    for (const environment of ['test', 'live'] as const) {
      const before = keyIn((await fetchArchive(ctx(), (await getPackage(ctx(), ws, `?variant=native&environment=${environment}`)).json().url)).files)!;
      const rotated = await post(ctx(), ws, 'regenerate', { variant: 'native', environment });
      expect(rotated.statusCode, rotated.body).toBe(200);
      const after = keyIn((await fetchArchive(ctx(), rotated.json().url)).files)!;
      expect(after).not.toBe(before);
      const manifest = JSON.parse((await fetchArchive(ctx(), rotated.json().url)).text('patchbay-native/patchbay-manifest.json'));
      const appId = manifest.product.appId as string;
      expect((await validate(ctx(), appId, ws.serialCodes.s1!, after)).statusCode).toBe(200);
      expect((await validate(ctx(), appId, ws.serialCodes.s1!, before)).statusCode).toBe(environment === 'test' ? 401 : 200);
    }
  });

  it('answers 409 PACKAGE_CREDENTIAL_ROTATION_REQUIRED when the key cannot be recovered, never rotating by itself; regenerate recovers', async () => {
    const ws = await seedWorkspace(ctx());
    expect((await getPackage(ctx(), ws, '?variant=native')).statusCode).toBe(200);
    await ctx().database.db.updateTable('product_keys').set({ sealed_with: 'another-kek' }).where('workspace_id', '=', ws.workspaceId).execute();
    for (const res of [await getPackage(ctx(), ws, '?variant=native'), await post(ctx(), ws, 'generate', { variant: 'native' })]) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'PACKAGE_CREDENTIAL_ROTATION_REQUIRED', rotationRequired: true });
    }
    const keys = await ctx().database.db.selectFrom('product_keys').where('workspace_id', '=', ws.workspaceId).select('status').execute();
    expect(keys).toEqual([{ status: 'active' }]);
    expect((await post(ctx(), ws, 'regenerate', { variant: 'native' })).statusCode).toBe(200);
    expect((await getPackage(ctx(), ws, '?variant=native')).statusCode).toBe(200);
  });
});

describe('GET /api/developer/storefront/plugin-package', () => {
  it('packages the workspace catalogue; needs storefront.manage and all-products access', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const url = '/api/developer/storefront/plugin-package?uiWidth=900';
    const res = await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.store!) });
    expect(res.statusCode, res.body).toBe(200);
    const archive = await fetchArchive(ctx(), res.json().url);
    const catalogue = JSON.parse(archive.text('patchbay-storefront/storefront.json'));
    expect(catalogue.uiWidth).toBe(900);
    expect(catalogue.products.map((p: { id: number }) => p.id).sort()).toEqual([ws.ids.products.p1, ws.ids.products.p2, ws.ids.products.p3].sort());
    expect(keyIn(archive.files)).toBeNull();
    expect((await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.scoped!) })).statusCode).toBe(403);
    expect((await ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.viewer!) })).statusCode).toBe(403);
    expect((await ctx().app.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/storefront/plugin-package?uiHeight=0', headers: bearer(ws.owner) })).statusCode).toBe(400);
  });
});

describe('package limits and storage', () => {
  it('answers 503 PRIVATE_PACKAGE_STORAGE_REQUIRED without storage, provisioning or rotating nothing', { timeout: 180_000 }, async () => {
    const bare = await buildTestApp();
    try {
      const ws = await seedWorkspace(bare);
      const keys = () => bare.database.db.selectFrom('product_keys').where('workspace_id', '=', ws.workspaceId).select(['id', 'status']).orderBy('id').execute();
      const before = await keys();
      for (const res of [
        await getPackage(bare, ws, '?variant=native'),
        await post(bare, ws, 'generate', { variant: 'native' }),
        await post(bare, ws, 'regenerate', { variant: 'native' }),
        await bare.app.inject({ method: 'GET', url: '/api/developer/storefront/plugin-package', headers: bearer(ws.owner) }),
      ]) {
        expect(res.statusCode).toBe(503);
        expect(res.json().code).toBe('PRIVATE_PACKAGE_STORAGE_REQUIRED');
      }
      expect(await keys()).toEqual(before);
      expect(await bare.database.db.selectFrom('package_builds').where('workspace_id', '=', ws.workspaceId).select('id').execute()).toEqual([]);
    } finally {
      await bare.app.close();
      await bare.database.close();
    }
  });

  it('limits GET plugin-package per product with 429 RATE_LIMITED', { timeout: 180_000 }, async () => {
    const limited = await buildTestApp({ storage: storage(), packages: { downloadsPerMinute: 2 } });
    try {
      const ws = await seedWorkspace(limited);
      expect((await getPackage(limited, ws, '?variant=native')).statusCode).toBe(200);
      expect((await getPackage(limited, ws, '?variant=native')).statusCode).toBe(200);
      const refused = await getPackage(limited, ws, '?variant=native');
      expect(refused.statusCode).toBe(429);
      expect(refused.json().code).toBe('RATE_LIMITED');
      expect((await getPackage(limited, ws, '?variant=native', ws.owner, ws.ids.products.p2)).statusCode).toBe(200);
    } finally {
      await limited.app.close();
      await limited.database.close();
    }
  });

  it('answers 429 PACKAGE_BUILD_BUSY with Retry-After when every slot is busy, and the same request succeeds later', { timeout: 180_000 }, async () => {
    const dir = storage();
    // Each build holds its slot at least 4 s: time enough for the second request to reach the slots on a loaded machine.
    const slow = await buildTestApp({ storage: dir, packages: { buildSlots: 1, minBuildMs: 4_000 } });
    // On PostgreSQL a second instance shares the slots through the database.
    const second = onPostgres ? await buildTestApp({ storage: dir, packages: { buildSlots: 1, minBuildMs: 4_000 } }) : slow;
    try {
      const ws = await seedWorkspace(slow);
      let settled = false;
      const first = post(slow, ws, 'generate', { variant: 'native' }).finally(() => (settled = true));
      // The second request is sent once the first holds the slot, however long the first took to get there.
      const held = async () =>
        (await sql<{ n: number }>`select count(*)::int as n from package_build_slots where slot = 1 and lease_until > now()`.execute(slow.database.db)).rows[0]!.n > 0;
      while (!settled && !(await held())) await new Promise((resolve) => setTimeout(resolve, 20));
      const busy = await post(second, ws, 'generate', { variant: 'pluginscript' });
      const answers = [await first, busy];
      expect(answers.map((a) => a.statusCode)).toEqual([200, 429]);
      expect(answers[1]!.json().code).toBe('PACKAGE_BUILD_BUSY');
      expect(Number(answers[1]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const retried = await post(second, ws, 'generate', { variant: 'pluginscript' });
      expect(retried.statusCode).toBe(200);
    } finally {
      for (const app of new Set([slow, second])) {
        await app.app.close();
        await app.database.close();
      }
    }
  });
});
