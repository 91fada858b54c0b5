import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExperienceMode } from '../../src/modules/packages/package-templates.js';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';
import { closedOrigin, downloadPackage, packageSecrets } from './package-helpers.js';
import { FakeHise, type Network, PluginMachine } from './pluginscript-host.js';

/*
 * The script package, proven by running it: the generated PatchbayLicense.js runs in its own
 * JavaScript realm with the host functions it documents, against this service over real HTTP.
 */

const ctx = useTestApp({ storage: new LocalStorage(mkdtempSync(path.join(os.tmpdir(), 'patchbay-pluginscript-'))) });
const DAY = 86_400_000;
const GRACE_DAYS = 14;
const GRACE_MS = GRACE_DAYS * DAY;
const LICENSE = 'Scripts/PatchbayLicense.js';
const HISE = 'Scripts/PatchbayHise.js';
const UI = { width: 640, height: 420 };
const STORE = 'https://shop.example.com/p1';

let network: Network;

beforeAll(async () => {
  const live = await ctx().app.listen({ port: 0, host: '127.0.0.1' });
  network = { live, closed: await closedOrigin() };
});

/** The files of product p1's script package, by path: downloaded through the API as a developer would. */
async function obtainPackageFiles(ws: SeededWorkspace, experienceMode: ExperienceMode = 'storefront-validation'): Promise<Map<string, string>> {
  const patched = await ctx().app.inject({
    method: 'PATCH',
    url: `/api/developer/products/${ws.ids.products.p1}`,
    headers: bearer(ws.owner),
    payload: { storefrontUrl: STORE },
  });
  expect(patched.statusCode, patched.body).toBe(200);
  const query = `variant=pluginscript&experienceMode=${experienceMode}&uiWidth=${UI.width}&uiHeight=${UI.height}&releaseChannel=stable`;
  const files = await downloadPackage(ctx(), ws, query);
  return new Map([...files].map(([name, content]) => [name, content.toString('utf8')]));
}

/** The grace ends at the last validation plus the grace, or a second earlier when the token's exp (whole seconds) says so. */
const expectNear = (actual: number, expected: number) => {
  expect(actual).toBeLessThanOrEqual(expected);
  expect(actual).toBeGreaterThan(expected - 2000);
};

const developer = (ws: SeededWorkspace, method: 'GET' | 'POST', url: string) =>
  ctx().app.inject({ method, url, headers: bearer(ws.owner), ...(method === 'POST' ? { payload: {} } : {}) });

async function seatsInUse(ws: SeededWorkspace, key: string): Promise<number> {
  const res = await developer(ws, 'GET', `/api/developer/serials?search=${ws.serialCodes[key]}`);
  expect(res.statusCode).toBe(200);
  return res.json().rows[0].active_activation_count;
}

describe('pluginscript package: the rendered files', () => {
  it('fills every placeholder, pins the product settings, and the HISE wiring parses as JavaScript', async () => {
    const ws = await seedWorkspace(ctx());
    const files = await obtainPackageFiles(ws);
    const { productKey, jwksJson } = await packageSecrets(ctx(), ws);
    expect([...files.keys()]).toEqual(['README.md', 'Scripts/PatchbayEd25519.js', HISE, LICENSE, 'Scripts/PatchbayOffline.js']);
    for (const [path, text] of files) expect(text, path).not.toContain('{{');
    expect(() => new vm.Script(files.get(HISE)!, { filename: HISE })).not.toThrow();

    const plugin = new PluginMachine(files, 'machine-A', network, Date.now());
    expect(plugin.config).toMatchObject({
      appId: ws.appIds.p1,
      productKey,
      offlineGraceSeconds: GRACE_DAYS * 86_400,
      experienceMode: 'storefront-validation',
      storefrontUrl: STORE,
    });
    expect(JSON.parse(JSON.stringify(plugin.license.jwks))).toEqual(JSON.parse(jwksJson));

    const readme = files.get('README.md')!;
    expect(readme).toContain(ws.appIds.p1!);
    expect(readme).toContain(`${GRACE_DAYS} days`);
    expect(readme).not.toContain(productKey);
  });
});

describe('pluginscript package: the licensing script against the runtime', () => {
  it('activates, validates, stays licensed offline within the grace and not after, and stops at the next validation once revoked', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const files = await obtainPackageFiles(ws);
    const t0 = Date.now();
    const plugin = new PluginMachine(files, 'machine-A', network, t0);

    expect(await plugin.start()).toMatchObject({ ok: false, code: 'NOT_ACTIVATED', licensed: false });

    // Activate → licensed, with the product key sent and the token stored.
    expect(await plugin.activate(ws.serialCodes.s!)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    expect(plugin.lastHeaders['x-product-key']).toBe(plugin.config.productKey);
    expect(plugin.status()).toMatchObject({ licensed: true, code: 'VALID', serial: ws.serialCodes.s, tokenKeyPinned: true });
    expectNear(plugin.status().licensedUntil, t0 + GRACE_MS);
    expect(JSON.parse(plugin.settings!)).toMatchObject({ appId: ws.appIds.p1, machineId: 'machine-A', status: 'VALID' });
    expect(await seatsInUse(ws, 's')).toBe(1);

    // Validate a day later → still licensed, and the grace restarts from this validation.
    plugin.advance(DAY);
    const validatedAt = plugin.nowMs;
    expect(await plugin.validate()).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    const until = plugin.status().licensedUntil;
    expectNear(until, validatedAt + GRACE_MS);

    // Restart from the stored settings with the server unreachable, within the grace → licensed.
    const restarted = new PluginMachine(files, 'machine-A', network, validatedAt + 13 * DAY);
    restarted.settings = plugin.settings;
    restarted.online = false;
    expect(await restarted.start()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: true });
    restarted.nowMs = until - 1;
    expect(restarted.isLicensed()).toBe(true);

    // The grace ends → not licensed, still unreachable; setting the clock back does not bring it back.
    restarted.nowMs = until;
    expect(restarted.isLicensed()).toBe(false);
    expect(await restarted.validate()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: false });
    restarted.nowMs = validatedAt + DAY;
    expect(restarted.isLicensed()).toBe(false);

    // Reachable again: a successful validation licenses it again.
    restarted.online = true;
    restarted.nowMs = Date.now();
    expect(await restarted.validate()).toMatchObject({ ok: true, code: 'VALID', licensed: true });

    // Revoked through the developer API → not licensed at the next validation, and not offline either.
    expect((await developer(ws, 'POST', `/api/developer/serials/${ws.ids.serials.s}/revoke`)).statusCode).toBe(200);
    expect(restarted.isLicensed()).toBe(true);
    expect(await restarted.validate()).toMatchObject({ ok: false, code: 'REVOKED', licensed: false });
    expect(restarted.status()).toMatchObject({ code: 'REVOKED', licensed: false, licensedUntil: 0 });
    const afterRevocation = new PluginMachine(files, 'machine-A', network, restarted.nowMs + 1000);
    afterRevocation.settings = restarted.settings;
    afterRevocation.online = false;
    expect(await afterRevocation.start()).toMatchObject({ ok: false, licensed: false });
  });

  it('says what the lock says once the clock passes the offline grace: status().code TOKEN_EXPIRED, not VALID', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const files = await obtainPackageFiles(ws);
    const plugin = new PluginMachine(files, 'machine-A', network, Date.now());
    expect(await plugin.activate(ws.serialCodes.s!)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    const until = plugin.status().licensedUntil;

    // No call is made while the clock moves: the status is read, as a panel or a host does.
    plugin.online = false;
    plugin.nowMs = until - 1;
    expect(plugin.status()).toMatchObject({ licensed: true, allowsUse: true, code: 'VALID' });
    plugin.nowMs = until + DAY;
    expect(plugin.isLicensed()).toBe(false);
    expect(plugin.status()).toMatchObject({ licensed: false, allowsUse: false, code: 'TOKEN_EXPIRED', detail: expect.stringContaining('offline period is over') });
    expect(plugin.license.refresh()).toBe(false);
    expect([plugin.license.licensedNow, plugin.license.allowsUseNow]).toEqual([false, false]);

    // Restarted from the stored settings past the grace, still offline: locked, and the status says so.
    const restarted = new PluginMachine(files, 'machine-A', network, until + 2 * DAY);
    restarted.settings = plugin.settings;
    restarted.online = false;
    expect(await restarted.start()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: false });
    expect(restarted.status()).toMatchObject({ licensed: false, code: 'TOKEN_EXPIRED' });

    // One successful validation licenses it again, and the status follows.
    restarted.online = true;
    restarted.nowMs = Date.now();
    expect(await restarted.validate()).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    expect(restarted.status()).toMatchObject({ licensed: true, code: 'VALID', detail: '' });
  });

  it('releases the seat on deactivate: the server counts it free and another computer can take it', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1', maxActivations: 1 }] });
    const files = await obtainPackageFiles(ws);
    const now = Date.now();
    const first = new PluginMachine(files, 'machine-A', network, now);
    const second = new PluginMachine(files, 'machine-B', network, now);
    const serial = ws.serialCodes.s!;

    expect(await first.activate(serial)).toMatchObject({ ok: true, licensed: true });
    expect(await second.activate(serial)).toMatchObject({ ok: false, code: 'MACHINE_LIMIT_EXCEEDED', licensed: false });
    expect(second.settings).toBeNull();

    // Offline, nothing is released: the seat and the local license both stay.
    first.online = false;
    expect(await first.deactivate()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: true });
    expect(await seatsInUse(ws, 's')).toBe(1);

    first.online = true;
    expect(await first.deactivate()).toMatchObject({ ok: true, code: 'DEACTIVATED', licensed: false });
    expect(JSON.parse(first.settings!)).toEqual({});
    expect(await seatsInUse(ws, 's')).toBe(0);
    expect(await first.validate()).toMatchObject({ ok: false, code: 'NOT_ACTIVATED', licensed: false });

    expect(await second.activate(serial)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    expect(await seatsInUse(ws, 's')).toBe(1);
  });

  it('never runs past the token expiry (a serial expiring before the grace ends), and a copied settings file licenses no other computer', async () => {
    const expiresAt = new Date(Date.now() + 2 * DAY).toISOString();
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1', expiresAt }] });
    const files = await obtainPackageFiles(ws);
    const t0 = Date.now();
    const plugin = new PluginMachine(files, 'machine-A', network, t0);
    expect(await plugin.activate(ws.serialCodes.s!)).toMatchObject({ ok: true, licensed: true });
    const until = plugin.status().licensedUntil;
    expect(until).toBeLessThan(t0 + 2 * DAY + 1000);
    expect(until).toBeGreaterThan(t0 + 2 * DAY - 60_000);

    plugin.online = false;
    plugin.nowMs = t0 + DAY;
    expect(plugin.isLicensed()).toBe(true);
    plugin.nowMs = until;
    expect(await plugin.validate()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: false });

    const elsewhere = new PluginMachine(files, 'machine-B', network, t0 + 1000);
    elsewhere.settings = plugin.settings;
    elsewhere.online = false;
    expect(await elsewhere.start()).toMatchObject({ ok: false, code: 'NOT_ACTIVATED', licensed: false });
  });

  it('does not enforce licensing in a storefront-only package', async () => {
    const ws = await seedWorkspace(ctx());
    const files = await obtainPackageFiles(ws, 'storefront-only');
    const plugin = new PluginMachine(files, 'machine-A', network, Date.now());
    expect(plugin.isLicensed()).toBe(false);
    expect(plugin.license.allowsUse()).toBe(true);
    expect(plugin.status()).toMatchObject({ enforced: false, allowsUse: true, licensed: false });
  });
});

describe('pluginscript package: the HISE wiring', () => {
  const centre = (area: number[]) => [area[0]! + area[2]! / 2, area[1]! + area[3]! / 2] as const;

  it('activates through Server.callWithPOST with the product key header, stores the license in AppData, and deactivates from the panel', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const files = await obtainPackageFiles(ws);
    const hise = new FakeHise(network, Date.now());
    const context = hise.load(files) as {
      PatchbayLicense: { licensedNow: boolean; config: { productKey: string; appId: string } };
      PatchbayHise: { serialArea: number[]; buttons: Array<{ id: string; area: number[] }>; show(): void; allowsAudio(): boolean };
    };
    const { PatchbayLicense, PatchbayHise } = context;
    const panel = hise.panels.get('PatchbayLicensePanel')!;
    const button = (id: string) => {
      const found = PatchbayHise.buttons.find((b) => b.id === id);
      if (!found) throw new Error(`no ${id} button`);
      return centre(found.area);
    };

    expect(panel.properties).toMatchObject({ width: UI.width, height: UI.height, allowCallbacks: 'Clicks Only' });
    expect(hise.timer.intervalMs).toBe(60_000);
    await hise.settled();
    expect(hise.posts).toEqual([]);
    expect(panel.visible).toBe(true);
    expect(PatchbayHise.allowsAudio()).toBe(false);
    expect(panel.paint()).toEqual(expect.arrayContaining(['Activate', `Buy Product p1 ${ws.suffix}`]));

    panel.click(...button('buy'));
    expect(hise.opened).toEqual([STORE]);

    panel.click(...centre(PatchbayHise.serialArea));
    expect(hise.textInput?.properties).toMatchObject({ parentComponent: 'PatchbayLicensePanel' });
    hise.textInput!.callback(true, ` ${ws.serialCodes.s} `);
    panel.click(...button('activate'));
    await hise.settled();

    expect(hise.posts).toHaveLength(1);
    expect(hise.posts[0]).toMatchObject({ url: `${network.live}/api/licensing/v1/activate`, status: 201 });
    expect(hise.posts[0]!.headers).toEqual({ 'content-type': 'application/json', 'x-product-key': PatchbayLicense.config.productKey });
    expect(JSON.parse(hise.posts[0]!.body)).toMatchObject({ productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: hise.systemId, platform: 'LINUX' });
    expect(PatchbayLicense.licensedNow).toBe(true);
    expect(PatchbayHise.allowsAudio()).toBe(true);
    expect(panel.visible).toBe(false);
    const stored = hise.files.get(`folder:3/PatchbayLicense-${ws.appIds.p1}.json`);
    expect(JSON.parse(stored!)).toMatchObject({ serial: ws.serialCodes.s, status: 'VALID', machineId: hise.systemId });
    expect(await seatsInUse(ws, 's')).toBe(1);

    PatchbayHise.show();
    expect(panel.visible).toBe(true);
    panel.click(...button('deactivate'));
    await hise.settled();
    expect(hise.posts[1]).toMatchObject({ url: `${network.live}/api/licensing/v1/deactivate`, status: 200 });
    expect(PatchbayLicense.licensedNow).toBe(false);
    expect(panel.visible).toBe(true);
    expect(await seatsInUse(ws, 's')).toBe(0);
  });

  it('shows only the store in storefront-only mode and never calls the runtime', async () => {
    const ws = await seedWorkspace(ctx());
    const files = await obtainPackageFiles(ws, 'storefront-only');
    const hise = new FakeHise(network, Date.now());
    const context = hise.load(files) as { PatchbayHise: { buttons: Array<{ id: string; area: number[] }>; allowsAudio(): boolean } };
    const panel = hise.panels.get('PatchbayLicensePanel')!;
    expect(context.PatchbayHise.buttons.map((b) => b.id)).toEqual(['buy', 'close']);
    expect(context.PatchbayHise.allowsAudio()).toBe(true);
    panel.click(...centre(context.PatchbayHise.buttons[1]!.area));
    expect(panel.visible).toBe(false);
    await hise.settled();
    expect(hise.posts).toEqual([]);
    expect(hise.timer.intervalMs).toBeUndefined();
  });
});
