import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_VERSION, type TemplateFile } from '../../src/modules/packages/package-templates.js';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';
import { APT_LINE, buildConsole, juceObjects, missingPackages, REQUIRED, run, RUN_IT, SKIP } from './native-build.js';
import { closedOrigin, downloadPackage, packageSecrets, uploadMachineRequest, withClaims } from './package-helpers.js';

/*
 * The native package, proven by compiling it (see native-build.ts for the toolchain, and how the file is skipped
 * without it): the generated C++ sources and the patchbay_juce module, built against real JUCE into a console
 * program (native-console/main.cpp) that plays the plugin against this service over real HTTP.
 */

const GRACE_DAYS = 3;
const UI = { width: 640, height: 420 };
const PUBLIC_BASE_URL = 'http://patchbay.test/api/licensing/v1';

const ctx = useTestApp({ storage: new LocalStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-native-storage-'))) });

// ---------------------------------------------------------------------------------------------------------------
// The package and the live service

interface Setup {
  ws: SeededWorkspace;
  /** The service's origin, and its licensing runtime there. */
  origin: string;
  live: string;
  closed: string;
  productKey: string;
  jwks: { keys: Array<{ kid: string; x: string }> };
  files: TemplateFile[];
  binary: string;
  workDir: string;
}
let setup: Setup;

/** The files of product p1's native package: downloaded through the API (private link, zip) as a developer would. */
async function obtainPackageFiles(ws: SeededWorkspace): Promise<TemplateFile[]> {
  const files = await downloadPackage(ctx(), ws, `variant=native&experienceMode=storefront-validation&uiWidth=${UI.width}&uiHeight=${UI.height}&releaseChannel=stable`);
  return [...files].map(([name, content]) => ({ path: name, content }));
}

type Output = Record<string, unknown> & { licensed?: boolean; code?: string; expiresAt?: number; httpStatus?: number };

/** One run of the "plugin": the console with its license file, machine and network. */
async function plugin(
  command: string,
  options: {
    serial?: string;
    machine?: string;
    file: string;
    baseUrl?: string;
    now?: number;
    later?: number;
    transport?: 'juce' | 'curl';
    /** Offline activation: where `request` writes the machine request file, what `load-license` and `gate-load` read. */
    out?: string;
    in?: string;
    machineName?: string;
  },
): Promise<Output> {
  const args = [command, '--base-url', options.baseUrl ?? setup.live, '--license-file', options.file];
  if (options.serial) args.push('--serial', options.serial);
  if (options.machine) args.push('--machine-id', options.machine);
  if (options.now !== undefined) args.push('--now', String(options.now));
  if (options.later !== undefined) args.push('--later', String(options.later));
  if (options.transport) args.push('--transport', options.transport);
  if (options.out) args.push('--out', options.out);
  if (options.in) args.push('--in', options.in);
  if (options.machineName) args.push('--machine-name', options.machineName);
  const { stdout } = await run(setup.binary, args, { timeoutMs: 30_000 });
  const line = stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as Output;
}

let fileCount = 0;
const licenseFile = () => path.join(setup.workDir, `license-${++fileCount}`, 'license.dat');
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function seatsInUse(serialKey: string): Promise<number> {
  const res = await ctx().app.inject({ method: 'GET', url: `/api/developer/serials?search=${setup.ws.serialCodes[serialKey]}`, headers: bearer(setup.ws.owner) });
  expect(res.statusCode).toBe(200);
  return res.json().rows[0].active_activation_count;
}

// Probed while the file is collected, so a machine without the toolchain skips the file instead of failing it.
const probed = Date.now();
const missing = SKIP && !REQUIRED ? [] : await missingPackages();
const probeMs = Date.now() - probed;
const skipReason = REQUIRED ? null : SKIP ? 'PATCHBAY_SKIP_NATIVE=1' : missing.length > 0 ? `missing ${missing.join(', ')}` : null;
if (skipReason) console.warn(`The native plugin package proof is skipped (${skipReason}). Run it with: ${RUN_IT}`);

describe.skipIf(skipReason !== null)('native package: compiled against real JUCE, run against the live service', () => {
  beforeAll(async () => {
    if (missing.length > 0) {
      throw new Error(
        `The native package test needs a C++ toolchain with JUCE, libsodium and libcurl (PATCHBAY_REQUIRE_NATIVE=1). Missing: ${missing.join(', ')}.\n` +
          `Install them with scripts/native-toolchain.sh (or: ${APT_LINE}).`,
      );
    }

    const origin = await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    const live = `${origin}/api/licensing/v1`;
    const ws = await seedWorkspace(ctx(), {
      productSettings: { maxActivations: 2, offlineGraceDays: GRACE_DAYS },
      customers: [{ key: 'buyer' }],
      serials: [
        ...['s1', 's2', 's3', 's4', 's5', 's6', 's7'].map((key) => ({ key, product: 'p1' })),
        // Offline activation: serials the buyer owns, of p1 and of another product.
        ...['o1', 'o2'].map((key) => ({ key, product: 'p1', customer: 'buyer' })),
        { key: 'op2', product: 'p2', customer: 'buyer' },
      ],
    });
    const files = await obtainPackageFiles(ws);
    const { productKey, jwksJson } = await packageSecrets(ctx(), ws);

    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-native-'));
    const packageDir = path.join(workDir, 'patchbay-native');
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(packageDir, file.path)), { recursive: true });
      fs.writeFileSync(path.join(packageDir, file.path), file.content);
    }

    const started = Date.now();
    const juce = await juceObjects();
    const juceMs = Date.now() - started;
    const { binary, panelChecked } = await buildConsole(packageDir, workDir, juce);
    const totalMs = Date.now() - started;
    console.log(
      `native build: JUCE ${juce.version} objects ${juce.compiled ? `compiled in ${(juceMs / 1000).toFixed(1)}s` : 'from cache'}, ` +
        `package + console in ${((totalMs - juceMs) / 1000).toFixed(1)}s (license panel check ${panelChecked ? 'run' : 'cached'}), total ${(totalMs / 1000).toFixed(1)}s ` +
        `(toolchain check ${(probeMs / 1000).toFixed(1)}s)`,
    );

    setup = { ws, origin, live, closed: `${await closedOrigin()}/api/licensing/v1`, productKey, jwks: JSON.parse(jwksJson), files, binary, workDir };
  }, 900_000);

  afterAll(() => {
    if (setup && !process.env.KEEP_NATIVE_BUILD) fs.rmSync(setup.workDir, { recursive: true, force: true });
  });

  it('renders every placeholder, pins the product values and the JWKS, and keeps the product key out of the README', async () => {
    const paths = setup.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['README.md', 'patchbay_juce/patchbay_juce.h', 'patchbay_juce/patchbay_juce.cpp', 'patchbay_licensing/PatchbayConfig.h', 'patchbay_licensing/CMakeLists.txt']));
    for (const file of setup.files) expect(file.content.toString('utf8'), file.path).not.toMatch(/\{\{(json )?[A-Za-z]/);
    const readme = setup.files.find((f) => f.path === 'README.md')!.content.toString('utf8');
    expect(readme).toContain(setup.ws.appIds.p1!);
    expect(readme).toContain(`${GRACE_DAYS} days`);
    expect(readme).not.toContain(setup.productKey);

    const info = await plugin('info', { file: licenseFile() });
    expect(info).toMatchObject({
      appId: setup.ws.appIds.p1,
      baseUrl: PUBLIC_BASE_URL,
      pinnedKeys: setup.jwks.keys.length,
      templateVersion: TEMPLATE_VERSION,
      experienceMode: 'storefront-validation',
      uiWidth: UI.width,
      uiHeight: UI.height,
      offlineGraceDays: GRACE_DAYS,
      releaseChannel: 'stable',
    });
    expect(setup.jwks.keys.length).toBeGreaterThan(0);
    expect(info.juce).toMatch(/^JUCE v\d+\.\d+\.\d+$/);
  });

  it('computes a stable machine id that is a hash, not the raw host identifier', async () => {
    const first = await plugin('info', { file: licenseFile() });
    const second = await plugin('info', { file: licenseFile() });
    expect(first.computedMachineId).toMatch(/^[0-9a-f]{64}$/);
    expect(second.computedMachineId).toBe(first.computedMachineId);
    for (const raw of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
      if (fs.existsSync(raw)) expect(first.computedMachineId).not.toContain(fs.readFileSync(raw, 'utf8').trim());
    }
  });

  it('activates over juce::URL with the product key, validates, and verifies the token offline against the pinned key', async () => {
    const file = licenseFile();
    const serial = setup.ws.serialCodes.s1!;
    // The computed machine id, as a real plugin would send it.
    const activated = await plugin('activate', { serial, file });
    expect(activated, JSON.stringify(activated)).toMatchObject({ licensed: true, code: 'VALID', httpStatus: 201, serial });
    const graceEnd = nowSeconds() + GRACE_DAYS * 86_400;
    expect(activated.expiresAt).toBeGreaterThan(graceEnd - 60);
    expect(activated.expiresAt).toBeLessThanOrEqual(graceEnd + 1);
    expect(await seatsInUse('s1')).toBe(1);

    // Offline: no server to ask, the pinned key decides.
    const offline = await plugin('check', { file, baseUrl: setup.closed });
    expect(offline).toMatchObject({ licensed: true, code: 'OFFLINE_VALID', expiresAt: activated.expiresAt, httpStatus: 0 });

    const validated = await plugin('validate', { file });
    expect(validated).toMatchObject({ licensed: true, code: 'VALID', httpStatus: 200 });

    // The processor's path: decide from the stored token, then validate on the gate's thread.
    const gate = await plugin('gate', { file });
    expect(gate).toMatchObject({ licensedAtStart: true, licensedAfterValidate: true, idle: true, code: 'VALID' });

    // X-Product-Key was sent and accepted: the REST status counts only calls with a valid key.
    await expect
      .poll(async () => (await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${setup.ws.ids.products.p1}/rest-config`, headers: bearer(setup.ws.owner) })).json().restApi.apiStatus, {
        timeout: 5_000,
      })
      .toBe('active');
  });

  it('refuses the token with any one character changed, a license file edited by hand, and a file copied to another machine', async () => {
    const file = licenseFile();
    expect(await plugin('activate', { serial: setup.ws.serialCodes.s2!, machine: 'machine-tamper', file })).toMatchObject({ licensed: true });

    const tampered = await plugin('tamper', { machine: 'machine-tamper', file });
    expect(tampered.original).toBe('TOKEN_VALID');
    expect(tampered.variants).toBe(tampered.tokenLength);
    expect(tampered.accepted).toBe(0);
    expect(Object.keys(tampered.codes as object)).toContain('TOKEN_BAD_SIGNATURE');

    const copied = await plugin('check', { machine: 'another-machine', file, baseUrl: setup.closed });
    expect(copied).toMatchObject({ licensed: false, code: 'STORAGE_TAMPERED' });

    const bytes = fs.readFileSync(file);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    fs.writeFileSync(file, bytes);
    expect(await plugin('check', { machine: 'machine-tamper', file, baseUrl: setup.closed })).toMatchObject({ licensed: false, code: 'STORAGE_TAMPERED' });
  });

  it('stays licensed without network until the token expires, and not after', async () => {
    const file = licenseFile();
    const activated = await plugin('activate', { serial: setup.ws.serialCodes.s3!, machine: 'machine-offline', file, transport: 'curl' });
    expect(activated).toMatchObject({ licensed: true, code: 'VALID' });
    const exp = activated.expiresAt!;

    const offlineValidate = await plugin('validate', { machine: 'machine-offline', file, baseUrl: setup.closed });
    expect(offlineValidate).toMatchObject({ licensed: true, code: 'OFFLINE_VALID', httpStatus: 0, expiresAt: exp });
    expect(await plugin('check', { machine: 'machine-offline', file, baseUrl: setup.closed, now: exp - 60 })).toMatchObject({ licensed: true, code: 'OFFLINE_VALID' });
    expect(await plugin('validate', { machine: 'machine-offline', file, baseUrl: setup.closed, now: exp + 600 })).toMatchObject({ licensed: false, code: 'TOKEN_EXPIRED' });
    // A clock set back before the token was issued does not extend it either.
    expect(await plugin('check', { machine: 'machine-offline', file, baseUrl: setup.closed, now: nowSeconds() - 3 * 86_400 })).toMatchObject({ licensed: false, code: 'TOKEN_NOT_YET_VALID' });

    // Back online, one validation slides the window forward again.
    expect(await plugin('validate', { machine: 'machine-offline', file })).toMatchObject({ licensed: true, code: 'VALID' });
  });

  it('locks a gate left running offline once its clock passes the grace, and its status says so (not VALID)', async () => {
    const file = licenseFile();
    const activated = await plugin('activate', { serial: setup.ws.serialCodes.s7!, machine: 'machine-left-running', file });
    expect(activated).toMatchObject({ licensed: true, code: 'VALID' });
    const exp = activated.expiresAt!;

    const gate = await plugin('gate-grace', { machine: 'machine-left-running', file, baseUrl: setup.closed, now: exp - 60, later: exp + 600 });
    expect(gate).toMatchObject({ licensedBefore: true, codeBefore: 'OFFLINE_VALID', expiresAtBefore: exp });
    expect(gate).toMatchObject({ licensedAfter: false, licensed: false, code: 'TOKEN_EXPIRED', detail: expect.stringContaining('offline period is over') });
  });

  it('deactivates: the seat is free on the server and the local license is gone', async () => {
    const file = licenseFile();
    const serial = setup.ws.serialCodes.s4!;
    expect(await plugin('activate', { serial, machine: 'machine-leaving', file })).toMatchObject({ licensed: true });
    expect(await seatsInUse('s4')).toBe(1);

    // Without network nothing is released, and nothing is forgotten.
    expect(await plugin('deactivate', { machine: 'machine-leaving', file, baseUrl: setup.closed })).toMatchObject({ code: 'NETWORK_ERROR', licensed: true, released: false });
    expect(await seatsInUse('s4')).toBe(1);

    expect(await plugin('deactivate', { machine: 'machine-leaving', file })).toMatchObject({ code: 'RELEASED', released: true, licensed: false, httpStatus: 200 });
    expect(await seatsInUse('s4')).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
    expect(await plugin('check', { machine: 'machine-leaving', file })).toMatchObject({ licensed: false, code: 'NO_LICENSE' });
  });

  it('refuses a machine over the seat limit with MACHINE_LIMIT_EXCEEDED', async () => {
    const serial = setup.ws.serialCodes.s5!;
    expect(await plugin('activate', { serial, machine: 'seat-1', file: licenseFile() })).toMatchObject({ licensed: true, httpStatus: 201 });
    expect(await plugin('activate', { serial, machine: 'seat-2', file: licenseFile(), transport: 'curl' })).toMatchObject({ licensed: true, httpStatus: 201 });
    expect(await plugin('activate', { serial, machine: 'seat-3', file: licenseFile() })).toMatchObject({ licensed: false, httpStatus: 422, code: 'MACHINE_LIMIT_EXCEEDED' });
    expect(await plugin('activate', { serial: 'NOPE-NOPE-NOPE', machine: 'seat-3', file: licenseFile() })).toMatchObject({ licensed: false, httpStatus: 404, code: 'LICENSE_NOT_FOUND' });
  });

  it('drops the token when the server says the license was revoked, but keeps the serial', async () => {
    const file = licenseFile();
    expect(await plugin('activate', { serial: setup.ws.serialCodes.s6!, machine: 'machine-revoked', file })).toMatchObject({ licensed: true });
    const revoked = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${setup.ws.ids.serials.s6}/revoke`, headers: bearer(setup.ws.owner), payload: {} });
    expect(revoked.statusCode, revoked.body).toBe(200);

    expect(await plugin('validate', { machine: 'machine-revoked', file })).toMatchObject({ licensed: false, code: 'REVOKED', httpStatus: 200 });
    // Offline afterwards, the old token is not brought back.
    expect(await plugin('check', { machine: 'machine-revoked', file, baseUrl: setup.closed })).toMatchObject({
      licensed: false,
      code: 'NO_LICENSE',
      serial: setup.ws.serialCodes.s6,
    });
  });

  // ---- offline activation: a machine request file out, the portal's license file in ----

  const buyer = () => ({ workspaceId: setup.ws.workspaceId, email: `c0-${setup.ws.suffix}@cust.test` });
  const offlineFile = (name: string, content: string) => {
    const file = path.join(setup.workDir, 'offline', `${++fileCount}-${name}`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return file;
  };

  /** The plugin on `machine` (never online) writes a request for `serialKey`; the buyer uploads it; the license file's path. */
  async function offlineLicense(machine: string, file: string, serialKey: string): Promise<{ path: string; license: string; status: number }> {
    const out = offlineFile('request.patchbay-request', '');
    const request = await plugin('request', { serial: setup.ws.serialCodes[serialKey]!, machine, file, baseUrl: setup.closed, out });
    expect(request, JSON.stringify(request)).toMatchObject({ code: 'REQUEST_READY', written: true });
    const answer = await uploadMachineRequest(ctx(), setup.origin, buyer(), setup.ws.ids.serials[serialKey]!, fs.readFileSync(out, 'utf8'), String(request.filename));
    expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status);
    return { path: offlineFile('studio.patchbay-license', answer.body.license), license: answer.body.license, status: answer.status };
  }

  it('offline activation: writes the machine request file, loads the license file the portal answered, and runs offline until its exp', async () => {
    const file = licenseFile();
    const serial = setup.ws.serialCodes.o1!;
    const out = offlineFile('request.patchbay-request', '');
    const request = await plugin('request', { serial: ` ${serial} `, machine: 'studio-native', file, baseUrl: setup.closed, out, machineName: 'Studio Native' });
    expect(request).toMatchObject({ code: 'REQUEST_READY', licensed: false, written: true, filename: `machine-request-${setup.ws.appIds.p1}.patchbay-request`, httpStatus: 0 });
    const written = fs.readFileSync(out, 'utf8');
    expect(JSON.parse(written)).toEqual({
      format: 'patchbay-machine-request/1',
      productAppId: setup.ws.appIds.p1,
      serial,
      machineId: 'studio-native',
      machineName: 'Studio Native',
      platform: 'linux',
      appVersion: '1.0.0-console',
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });

    const answer = await uploadMachineRequest(ctx(), setup.origin, buyer(), setup.ws.ids.serials.o1!, written, String(request.filename));
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const exp = Math.floor(Date.parse(answer.body.expiresAt) / 1000);
    const licensePath = offlineFile('studio.patchbay-license', answer.body.license);

    expect(await plugin('load-license', { machine: 'studio-native', file, baseUrl: setup.closed, in: licensePath })).toMatchObject({
      licensed: true,
      code: 'VALID',
      serial,
      expiresAt: exp,
      httpStatus: 0,
    });
    expect(await seatsInUse('o1')).toBe(1);

    // From now on it is the stored token of an online activation: offline until exp, then locked with the same codes.
    expect(await plugin('check', { machine: 'studio-native', file, baseUrl: setup.closed })).toMatchObject({ licensed: true, code: 'OFFLINE_VALID', expiresAt: exp });
    expect(await plugin('check', { machine: 'studio-native', file, baseUrl: setup.closed, now: exp + 600 })).toMatchObject({ licensed: false, code: 'TOKEN_EXPIRED' });
    const gate = await plugin('gate-grace', { machine: 'studio-native', file, baseUrl: setup.closed, now: exp - 60, later: exp + 600 });
    expect(gate).toMatchObject({ licensedBefore: true, codeBefore: 'OFFLINE_VALID', licensedAfter: false, code: 'TOKEN_EXPIRED' });

    // Its request is answered: the same file again is refused, and changes nothing.
    expect(await plugin('load-license', { machine: 'studio-native', file, baseUrl: setup.closed, in: licensePath })).toMatchObject({ licensed: true, code: 'TOKEN_REPLAYED' });

    // Online one day, the runtime knows this machine: validation takes over, on the same seat.
    expect(await plugin('validate', { machine: 'studio-native', file })).toMatchObject({ licensed: true, code: 'VALID', httpStatus: 200 });
    expect(await seatsInUse('o1')).toBe(1);
  });

  it('offline activation: refuses a file for another machine, another product, a tampered, expired or unreadable one, and keeps the license it has', async () => {
    const fileA = licenseFile();
    const fileB = licenseFile();
    const forA = await offlineLicense('studio-A', fileA, 'o2');
    const forB = await offlineLicense('studio-B', fileB, 'o2');
    const load = (text: string, options: { now?: number } = {}) =>
      plugin('load-license', { machine: 'studio-A', file: fileA, baseUrl: setup.closed, in: offlineFile('tried.patchbay-license', text), ...options });

    expect(await load(forB.license)).toMatchObject({ licensed: false, code: 'TOKEN_WRONG_MACHINE' });

    // Another product's license for this very machine, answering one of its pending requests.
    const out = offlineFile('request.patchbay-request', '');
    await plugin('request', { serial: setup.ws.serialCodes.o2!, machine: 'studio-A', file: fileA, baseUrl: setup.closed, out });
    const p2Request = JSON.stringify({ ...JSON.parse(fs.readFileSync(out, 'utf8')), productAppId: setup.ws.appIds.p2, serial: setup.ws.serialCodes.op2 });
    const p2 = await uploadMachineRequest(ctx(), setup.origin, buyer(), setup.ws.ids.serials.op2!, p2Request);
    expect(p2.status).toBe(201);
    expect(await load(p2.body.license)).toMatchObject({ licensed: false, code: 'TOKEN_WRONG_PRODUCT' });
    expect(await load(JSON.stringify({ ...JSON.parse(p2.body.license), productAppId: setup.ws.appIds.p1 }))).toMatchObject({ licensed: false, code: 'TOKEN_WRONG_PRODUCT' });

    // Tampered: claims changed under the signature, or an algorithm that is not EdDSA.
    expect(await load(withClaims(forA.license, { payload: { exp: nowSeconds() + 365 * 86_400 } }))).toMatchObject({ code: 'TOKEN_BAD_SIGNATURE' });
    expect(await load(withClaims(forB.license, { payload: { mid: 'studio-A' } }))).toMatchObject({ code: 'TOKEN_BAD_SIGNATURE' });
    expect(await load(withClaims(forA.license, { header: { alg: 'none' } }))).toMatchObject({ code: 'TOKEN_UNSUPPORTED_ALGORITHM' });
    for (const garbage of ['', 'not json', '{"format":"patchbay-license/2","token":"a.b.c"}']) {
      expect(await load(garbage)).toMatchObject({ licensed: false, code: 'LICENSE_FILE_UNREADABLE' });
    }

    // Expired by the computer's clock.
    const exp = JSON.parse(Buffer.from((JSON.parse(forA.license).token as string).split('.')[1]!, 'base64url').toString('utf8')).exp as number;
    expect(await load(forA.license, { now: exp + 600 })).toMatchObject({ licensed: false, code: 'TOKEN_EXPIRED' });

    // Its own file loads (with a byte order mark, as some editors save it); a refused file afterwards changes nothing.
    expect(await load(`\uFEFF${forA.license}`)).toMatchObject({ licensed: true, code: 'VALID', serial: setup.ws.serialCodes.o2 });
    expect(await load(forB.license)).toMatchObject({ licensed: true, code: 'TOKEN_WRONG_MACHINE' });
    expect(await plugin('check', { machine: 'studio-A', file: fileA, baseUrl: setup.closed })).toMatchObject({ licensed: true, code: 'OFFLINE_VALID' });
  });

  it('offline activation through the LicenseGate, as the license panel loads the file the user picked', async () => {
    const file = licenseFile();
    const { path: licensePath } = await offlineLicense('studio-gate', file, 'o1');
    const gate = await plugin('gate-load', { machine: 'studio-gate', file, baseUrl: setup.closed, in: licensePath });
    expect(gate).toMatchObject({ licensedNow: true, licensed: true, code: 'VALID', idle: true });
  });
});
