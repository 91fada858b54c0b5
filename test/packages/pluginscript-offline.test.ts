import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { buyerToken, get } from '../customer-portal/portal-helpers.js';
import { seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';
import { closedOrigin, downloadPackage, uploadMachineRequest, withClaims } from './package-helpers.js';
import { FakeHise, type Network, PluginMachine } from './pluginscript-host.js';

/*
 * Offline activation with the script package, end to end: the generated scripts (node:vm) write the machine request
 * file on a computer that never reaches the network, the buyer uploads it to the portal over real HTTP, and the
 * scripts load the license file the portal answered and verify it offline against the pinned keys.
 */

const ctx = useTestApp({ storage: new LocalStorage(mkdtempSync(path.join(os.tmpdir(), 'patchbay-pluginscript-offline-'))) });
const DAY = 86_400_000;
const GRACE_DAYS = 10;

let network: Network;

beforeAll(async () => {
  const live = await ctx().app.listen({ port: 0, host: '127.0.0.1' });
  network = { live, closed: await closedOrigin() };
});

interface Shop {
  ws: SeededWorkspace;
  files: Map<string, string>;
  buyer: { workspaceId: number; email: string };
}

/** A workspace with one buyer owning serials of p1 (`a`, `b`) and of p2 (`other`), and p1's script package. */
async function shop(): Promise<Shop> {
  const ws = await seedWorkspace(ctx(), {
    productSettings: { maxActivations: 3, offlineGraceDays: GRACE_DAYS },
    customers: [{ key: 'buyer' }],
    serials: [
      { key: 'a', product: 'p1', customer: 'buyer' },
      { key: 'b', product: 'p1', customer: 'buyer' },
      { key: 'other', product: 'p2', customer: 'buyer' },
    ],
  });
  const files = await downloadPackage(ctx(), ws, 'variant=pluginscript&experienceMode=validation-only&releaseChannel=stable');
  return { ws, files: new Map([...files].map(([name, content]) => [name, content.toString('utf8')])), buyer: { workspaceId: ws.workspaceId, email: `c0-${ws.suffix}@cust.test` } };
}

/** A studio computer: the package's scripts, never online (every call it tried would be counted in `posts`). */
function studio(s: Shop, machineId: string, nowMs = Date.now()): PluginMachine {
  const plugin = new PluginMachine(s.files, machineId, network, nowMs);
  plugin.online = false;
  plugin.machineName = `Studio ${machineId}`;
  return plugin;
}

/** Request file out of the plugin, license file back from the portal. */
async function licenseFor(s: Shop, plugin: PluginMachine, serialKey: string): Promise<string> {
  const request = await plugin.machineRequest(s.ws.serialCodes[serialKey]!);
  expect(request, request.detail).toMatchObject({ ok: true, code: 'REQUEST_READY' });
  const answer = await uploadMachineRequest(ctx(), network.live, s.buyer, s.ws.ids.serials[serialKey]!, request.request, request.filename);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.license;
}

describe('pluginscript package: offline activation', () => {
  it('writes a machine request, loads the portal’s license file without network, and licenses the computer as an online activation does', async () => {
    const s = await shop();
    const t0 = Date.now();
    const plugin = studio(s, 'studio-1', t0);

    const request = await plugin.machineRequest(` ${s.ws.serialCodes.a} `);
    expect(request).toMatchObject({ ok: true, code: 'REQUEST_READY', licensed: false, filename: `machine-request-${s.ws.appIds.p1}.patchbay-request` });
    const written = JSON.parse(request.request);
    expect(written).toEqual({
      format: 'patchbay-machine-request/1',
      productAppId: s.ws.appIds.p1,
      serial: s.ws.serialCodes.a,
      machineId: 'studio-1',
      machineName: 'Studio studio-1',
      platform: 'linux',
      appVersion: '1.0.0-test',
      nonce: expect.stringMatching(/^pb[a-z0-9]{22}$/),
    });
    expect(plugin.status()).toMatchObject({ licensed: false, code: 'NOT_ACTIVATED', requestsPending: 1 });

    // The buyer uploads the file, as written, in the portal.
    const answer = await uploadMachineRequest(ctx(), network.live, s.buyer, s.ws.ids.serials.a!, request.request, request.filename);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const exp = Date.parse(answer.body.expiresAt);

    expect(await plugin.loadLicenseFile(answer.body.license)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    const status = plugin.status();
    expect(status).toMatchObject({ licensed: true, allowsUse: true, code: 'VALID', serial: s.ws.serialCodes.a, tokenKeyPinned: true, requestsPending: 0, lastValidatedAt: t0 });
    expect(status.licensedUntil).toBeLessThanOrEqual(exp);
    expect(status.licensedUntil).toBeGreaterThan(t0 + GRACE_DAYS * DAY - 60_000);
    expect(plugin.posts).toBe(0);

    // One seat, held by this machine under the name it gave.
    const buyer = await buyerToken(ctx(), s.buyer.workspaceId, s.buyer.email);
    const license = (await get(ctx(), buyer, '/licenses')).json().rows.find((l: { serial_id: number }) => l.serial_id === s.ws.ids.serials.a);
    expect(license).toMatchObject({ active_activation_count: 1, activations: [{ id: answer.body.activation.id, machine_name: 'Studio studio-1' }] });

    // Restarted from its settings, still offline: licensed for the grace, then locked with the online variant's code.
    const restarted = new PluginMachine(s.files, 'studio-1', network, t0 + DAY);
    restarted.settings = plugin.settings;
    restarted.online = false;
    expect(await restarted.start()).toMatchObject({ ok: false, code: 'UNREACHABLE', licensed: true });
    restarted.nowMs = status.licensedUntil - 1;
    expect(restarted.status()).toMatchObject({ licensed: true, code: 'VALID' });
    restarted.nowMs = status.licensedUntil;
    expect(restarted.status()).toMatchObject({ licensed: false, allowsUse: false, code: 'TOKEN_EXPIRED' });

    // The same file again: it answered its request already.
    expect(await plugin.loadLicenseFile(answer.body.license)).toMatchObject({ ok: false, code: 'TOKEN_REPLAYED', licensed: true });

    // Online one day, the runtime knows this machine: validation takes over, on the same seat.
    restarted.online = true;
    restarted.nowMs = Date.now();
    expect(await restarted.validate()).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    expect((await get(ctx(), buyer, '/licenses')).json().rows.find((l: { serial_id: number }) => l.serial_id === s.ws.ids.serials.a).active_activation_count).toBe(1);
  });

  it('renews an expired offline license with a new request file, on the same seat', async () => {
    const s = await shop();
    // The first file is loaded 20 days ago by this computer's clock, so its grace is over today.
    const plugin = studio(s, 'studio-renew', Date.now() - 20 * DAY);
    expect(await plugin.loadLicenseFile(await licenseFor(s, plugin, 'a'))).toMatchObject({ ok: true, licensed: true });
    const until = plugin.status().licensedUntil;
    expect(until).toBeLessThanOrEqual(Date.now() - 10 * DAY);
    plugin.nowMs = Date.now();
    expect(plugin.status()).toMatchObject({ licensed: false, code: 'TOKEN_EXPIRED' });

    // An empty serial takes the stored one; the portal answers 200 with a fresh file for the machine's seat.
    const renewal = await plugin.machineRequest('');
    expect(JSON.parse(renewal.request).serial).toBe(s.ws.serialCodes.a);
    const answer = await uploadMachineRequest(ctx(), network.live, s.buyer, s.ws.ids.serials.a!, renewal.request);
    expect(answer.status).toBe(200);
    expect(await plugin.loadLicenseFile(answer.body.license)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    expect(plugin.status()).toMatchObject({ licensed: true, code: 'VALID' });
  });

  it('refuses a file for another machine, another product, a tampered or expired one, or garbage, and keeps the license it has', async () => {
    const s = await shop();
    const studioA = studio(s, 'studio-A');
    const studioB = studio(s, 'studio-B');
    const forA = await licenseFor(s, studioA, 'a');
    const forB = await licenseFor(s, studioB, 'b');

    // Another computer's file: the token names studio-B.
    expect(await studioA.loadLicenseFile(forB)).toMatchObject({ ok: false, code: 'TOKEN_WRONG_MACHINE', licensed: false });

    // Another product's file, for this very machine and one of its pending requests: refused by the file and by the token.
    const pending = await studioA.machineRequest(s.ws.serialCodes.a!);
    const p2Request = JSON.stringify({ ...JSON.parse(pending.request), productAppId: s.ws.appIds.p2, serial: s.ws.serialCodes.other });
    const p2 = await uploadMachineRequest(ctx(), network.live, s.buyer, s.ws.ids.serials.other!, p2Request);
    expect(p2.status).toBe(201);
    expect(await studioA.loadLicenseFile(p2.body.license)).toMatchObject({ ok: false, code: 'TOKEN_WRONG_PRODUCT' });
    const relabelled = JSON.stringify({ ...JSON.parse(p2.body.license), productAppId: s.ws.appIds.p1 });
    expect(await studioA.loadLicenseFile(relabelled)).toMatchObject({ ok: false, code: 'TOKEN_WRONG_PRODUCT' });

    // Tampered: claims changed under the signature, or the signature itself, or a key this build does not pin.
    const later = Math.floor(Date.now() / 1000) + 365 * 86_400;
    expect(await studioA.loadLicenseFile(withClaims(forA, { payload: { exp: later } }))).toMatchObject({ ok: false, code: 'TOKEN_BAD_SIGNATURE' });
    expect(await studioA.loadLicenseFile(withClaims(forB, { payload: { mid: 'studio-A' } }))).toMatchObject({ ok: false, code: 'TOKEN_BAD_SIGNATURE' });
    expect(await studioA.loadLicenseFile(withClaims(forA, { header: { alg: 'none' } }))).toMatchObject({ ok: false, code: 'TOKEN_UNSUPPORTED_ALGORITHM' });
    const token = JSON.parse(forA).token as string;
    for (const at of [token.length - 1, token.length - 2, token.length - 40, token.lastIndexOf('.') + 1]) {
      const changed = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
      expect(await studioA.loadLicenseFile(JSON.stringify({ ...JSON.parse(forA), token: changed })), `character ${at}`).toMatchObject({ ok: false, code: 'TOKEN_BAD_SIGNATURE' });
    }
    const otherKeys = new PluginMachine(s.files, 'studio-A', network, Date.now());
    otherKeys.settings = studioA.settings;
    otherKeys.online = false;
    await otherKeys.start();
    otherKeys.license.jwks = { keys: [{ ...JSON.parse(JSON.stringify(otherKeys.license.jwks.keys[0])), kid: 'lk_before_rotation' }] };
    expect(await otherKeys.loadLicenseFile(forA)).toMatchObject({ ok: false, code: 'TOKEN_UNKNOWN_KEY' });

    // Expired: the computer's clock is past the token's end.
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).exp as number;
    const lateStudio = new PluginMachine(s.files, 'studio-A', network, exp * 1000 + 1000);
    lateStudio.settings = studioA.settings;
    lateStudio.online = false;
    await lateStudio.start();
    expect(await lateStudio.loadLicenseFile(forA)).toMatchObject({ ok: false, code: 'TOKEN_EXPIRED', licensed: false });

    for (const garbage of ['', 'not json', '{"format":"patchbay-license/2","token":"a.b.c"}', JSON.stringify({ ...JSON.parse(forA), format: undefined })]) {
      expect(await studioA.loadLicenseFile(garbage)).toMatchObject({ ok: false, code: 'LICENSE_FILE_UNREADABLE' });
    }
    expect(await studioA.loadLicenseFile(JSON.stringify({ ...JSON.parse(forA), token: 'x.y' }))).toMatchObject({ ok: false, code: 'TOKEN_MALFORMED' });

    // After all that, its own file still loads; and once licensed, a refused file changes nothing.
    expect(await studioA.loadLicenseFile(forA)).toMatchObject({ ok: true, code: 'VALID', licensed: true });
    const settings = studioA.settings;
    expect(await studioA.loadLicenseFile(forB)).toMatchObject({ ok: false, code: 'TOKEN_WRONG_MACHINE', licensed: true });
    expect(studioA.settings).toBe(settings);
    expect(studioA.posts + studioB.posts).toBe(0);
  });

  it('through the HISE panel: saves the request file where the user chooses, and loads the license file the user picks', async () => {
    const s = await shop();
    const hise = new FakeHise(network, Date.now(), 'hise-studio-1');
    const context = hise.load(s.files) as {
      PatchbayLicense: { licensedNow: boolean };
      PatchbayHise: { serialArea: number[]; buttons: Array<{ id: string; area: number[] }>; message: string; allowsAudio(): boolean };
    };
    const { PatchbayLicense, PatchbayHise } = context;
    const panel = hise.panels.get('PatchbayLicensePanel')!;
    const click = (id: string) => {
      const button = PatchbayHise.buttons.find((b) => b.id === id);
      if (!button) throw new Error(`no ${id} button`);
      panel.click(button.area[0]! + button.area[2]! / 2, button.area[1]! + button.area[3]! / 2);
    };
    expect(panel.paint()).toEqual(expect.arrayContaining(['Offline: save request file...', 'Load license file...']));

    // Without a serial there is nothing to request.
    click('request');
    expect(hise.browsing).toBeNull();
    expect(PatchbayHise.message).toContain('serial number');

    panel.click(PatchbayHise.serialArea[0]! + 5, PatchbayHise.serialArea[1]! + 5);
    hise.textInput!.callback(true, s.ws.serialCodes.a!);
    click('request');
    expect(hise.browsing).toMatchObject({ forSaving: true, wildcard: '*.patchbay-request', start: { path: `folder:5/machine-request-${s.ws.appIds.p1}.patchbay-request` } });
    hise.choose('usb/request.patchbay-request');
    const request = hise.files.get('usb/request.patchbay-request')!;
    expect(JSON.parse(request)).toMatchObject({ format: 'patchbay-machine-request/1', serial: s.ws.serialCodes.a, machineId: 'hise-studio-1', platform: 'LINUX' });
    expect(PatchbayHise.message).toContain('Request file saved');

    const answer = await uploadMachineRequest(ctx(), network.live, s.buyer, s.ws.ids.serials.a!, request);
    expect(answer.status).toBe(201);
    hise.files.set('usb/studio.patchbay-license', answer.body.license);
    click('load');
    expect(hise.browsing).toMatchObject({ forSaving: false, wildcard: '*.patchbay-license' });
    hise.choose('usb/studio.patchbay-license');
    expect(PatchbayLicense.licensedNow).toBe(true);
    expect(PatchbayHise.allowsAudio()).toBe(true);
    expect(panel.visible).toBe(false);
    expect(JSON.parse(hise.files.get(`folder:3/PatchbayLicense-${s.ws.appIds.p1}.json`)!)).toMatchObject({ serial: s.ws.serialCodes.a, status: 'VALID', machineId: 'hise-studio-1' });
  });
});
