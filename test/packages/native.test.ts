import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { TEMPLATE_VERSION, type TemplateFile } from '../../src/modules/packages/package-templates.js';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { ProductCredentials } from '../../src/modules/products/product-credentials.service.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { bearer, seedWorkspace, type SeededWorkspace, TEST_LICENSE_KEY, useTestApp } from '../helpers/app.js';

/*
 * The native package, proven by compiling it: the generated C++ sources and the patchbay_juce module are built
 * with g++ against real JUCE (Debian's JUCE 7 module sources), libsodium and libcurl into a console program
 * (native-console/main.cpp) that plays the plugin against this service over real HTTP.
 *
 * Needs g++ (C++17) and, on Debian/Ubuntu, `apt-get install -y --no-install-recommends juce-modules-source-data
 * libsodium-dev libcurl4-openssl-dev zlib1g-dev` (JUCE's module sources are all juce-modules-source-data holds;
 * juce-modules-source adds JUCE's CMake support and pulls GTK/WebKit development packages the test does not need).
 * A machine without a C++ toolchain sets PATCHBAY_SKIP_NATIVE=1 to skip this file; otherwise a missing piece fails
 * it with the package to install. JUCE_MODULES_DIR points at another JUCE modules folder; the compiled JUCE objects
 * are cached in PATCHBAY_NATIVE_CACHE (default: <tmp>/patchbay-native-cache), keyed by JUCE version, compiler and
 * flags, so only the first run pays for juce_core.
 */

const SKIP = process.env.PATCHBAY_SKIP_NATIVE === '1';
const JUCE_MODULES = process.env.JUCE_MODULES_DIR ?? '/usr/share/juce/modules';
const CACHE_ROOT = process.env.PATCHBAY_NATIVE_CACHE ?? path.join(os.tmpdir(), 'patchbay-native-cache');
const CONSOLE_SOURCE = fileURLToPath(new URL('./native-console/main.cpp', import.meta.url));
const APT_LINE = 'apt-get install -y --no-install-recommends juce-modules-source-data libsodium-dev libcurl4-openssl-dev zlib1g-dev';
const GRACE_DAYS = 3;
const UI = { width: 640, height: 420 };
const PUBLIC_BASE_URL = 'http://patchbay.test/api/licensing/v1';

const ctx = useTestApp({ storage: new LocalStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-native-storage-'))) });

// ---------------------------------------------------------------------------------------------------------------
// Toolchain

/** Runs a program without blocking the event loop (the console talks to this process's server). */
function run(file: string, args: string[], options: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd: options.cwd, timeout: options.timeoutMs ?? 600_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`${path.basename(file)} ${args.join(' ')} failed: ${error.message}\n${stderr.slice(-4000)}`), { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** One header per apt package: does the compiler find it? */
async function missingPackages(): Promise<string[]> {
  try {
    await run('g++', ['--version']);
  } catch {
    return ['g++ (apt-get install -y g++)'];
  }
  const probes: Array<[string, string, string[]]> = [
    ['juce-modules-source-data', 'juce_core/juce_core.h', [`-I${JUCE_MODULES}`, '-DJUCE_GLOBAL_MODULE_SETTINGS_INCLUDED=1']],
    ['libsodium-dev', 'sodium.h', []],
    ['libcurl4-openssl-dev', 'curl/curl.h', []],
    ['zlib1g-dev', 'zlib.h', []],
  ];
  const missing = await Promise.all(
    probes.map(async ([pkg, header, flags]) => {
      try {
        await run('g++', ['-x', 'c++', '-std=c++17', '-fsyntax-only', ...flags, '-'], { input: `#include <${header}>\n`, timeoutMs: 60_000 });
        return null;
      } catch {
        return `${pkg} (no <${header}>)`;
      }
    }),
  );
  return missing.filter((m): m is string => m !== null);
}

const JUCE_DEFINES = [
  '-DNDEBUG',
  '-DLINUX=1',
  '-DJUCE_GLOBAL_MODULE_SETTINGS_INCLUDED=1',
  '-DJUCE_STANDALONE_APPLICATION=1',
  '-DJUCE_USE_CURL=1',
  '-DJUCE_MODULE_AVAILABLE_juce_core=1',
  '-DJUCE_MODULE_AVAILABLE_juce_events=1',
  '-DJUCE_MODULE_AVAILABLE_patchbay_juce=1',
];
const CXX = ['-std=c++17', '-O0', '-g0', '-pipe', ...JUCE_DEFINES];
const LIBS = ['-lsodium', '-lcurl', '-lz', '-lpthread', '-ldl', '-lrt'];

function juceVersion(): string {
  const header = fs.readFileSync(path.join(JUCE_MODULES, 'juce_core/system/juce_StandardHeader.h'), 'utf8');
  const part = (name: string) => /#define\s+JUCE_\w+\s+(\d+)/.exec(header.split('\n').find((l) => l.includes(`JUCE_${name}`) && l.includes('#define')) ?? '')?.[1] ?? '?';
  return `${part('MAJOR_VERSION')}.${part('MINOR_VERSION')}.${part('BUILDNUMBER')}`;
}

/** Runs the jobs at most `width` at a time. */
async function pool<T>(jobs: Array<() => Promise<T>>, width = Math.max(2, Math.min(4, os.availableParallelism()))): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

/** juce_core.o and juce_events.o, compiled once per JUCE version, compiler and flags (written atomically). */
async function juceObjects(): Promise<{ objects: string[]; dir: string; compiled: boolean; version: string }> {
  const version = juceVersion();
  const compiler = (await run('g++', ['--version'])).stdout.split('\n')[0]!;
  const key = createHash('sha256').update(JSON.stringify([version, compiler, CXX, JUCE_MODULES])).digest('hex').slice(0, 12);
  const dir = path.join(CACHE_ROOT, `juce-${version}-${key}`);
  fs.mkdirSync(dir, { recursive: true });
  const modules = ['juce_core', 'juce_events'];
  const objects = modules.map((m) => path.join(dir, `${m}.o`));
  const todo = modules.filter((_, i) => !fs.existsSync(objects[i]!));
  await pool(
    todo.map((m) => async () => {
      const target = path.join(dir, `${m}.o`);
      const partial = `${target}.${process.pid}.tmp`;
      await run('g++', [...CXX, '-w', `-I${JUCE_MODULES}`, '-c', path.join(JUCE_MODULES, m, `${m}.cpp`), '-o', partial]);
      fs.renameSync(partial, target);
    }),
  );
  return { objects, dir, compiled: todo.length > 0, version };
}

/**
 * Compiles the package: the module (core + juce::URL transport + LicenseGate, with the libcurl transport too) and
 * the console into one program; the core alone without JUCE under strict warnings; and the license panel against
 * juce_gui_basics (syntax only: a console has no window to open). Our code builds with -Werror. The panel check
 * does not depend on the product's values, so it is skipped when these exact sources passed it before.
 */
async function buildConsole(packageDir: string, buildDir: string, juce: { objects: string[]; dir: string }): Promise<{ binary: string; panelChecked: boolean }> {
  const strict = ['-Wall', '-Wextra', '-Werror', '-isystem', JUCE_MODULES, `-I${packageDir}`, '-DPATCHBAY_WITH_CURL=1'];
  const core = ['Base64', 'CurlTransport', 'Json', 'License', 'Machine', 'Store', 'Token'].map((n) => path.join(packageDir, `patchbay_licensing/core/Patchbay${n}.cpp`));
  const gui = [...['juce_graphics', 'juce_data_structures', 'juce_gui_basics'].map((m) => `-DJUCE_MODULE_AVAILABLE_${m}=1`), ...CXX, ...strict];

  const sources = createHash('sha256').update(JSON.stringify(gui.filter((flag) => !flag.includes(packageDir))));
  for (const file of listFiles(packageDir).filter((f) => f.endsWith('.h') || f.endsWith('.cpp')).filter((f) => !f.endsWith('PatchbayConfig.h'))) {
    sources.update(file).update(fs.readFileSync(path.join(packageDir, file)));
  }
  const panelMarker = path.join(juce.dir, `panel-ok-${sources.digest('hex').slice(0, 16)}`);
  const panelChecked = !fs.existsSync(panelMarker);

  await pool<unknown>([
    () => run('g++', [...CXX, ...strict, '-c', path.join(packageDir, 'patchbay_juce/patchbay_juce.cpp'), '-o', path.join(buildDir, 'patchbay_juce.o')]),
    () => run('g++', [...CXX, ...strict, '-c', CONSOLE_SOURCE, '-o', path.join(buildDir, 'main.o')]),
    () => run('g++', ['-std=c++17', '-fsyntax-only', '-Wall', '-Wextra', '-Wpedantic', '-Wshadow', '-Wconversion', '-Werror', '-DPATCHBAY_WITH_CURL=1', ...core]),
    async () => {
      if (!panelChecked) return;
      await run('g++', [...gui, '-fsyntax-only', path.join(packageDir, 'patchbay_juce/patchbay_juce.cpp')]);
      fs.writeFileSync(panelMarker, new Date().toISOString());
    },
  ]);
  const binary = path.join(buildDir, 'patchbay-console');
  await run('g++', ['-o', binary, path.join(buildDir, 'main.o'), path.join(buildDir, 'patchbay_juce.o'), ...juce.objects, ...LIBS]);
  return { binary, panelChecked };
}

function listFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

// ---------------------------------------------------------------------------------------------------------------
// The package and the live service

interface Setup {
  ws: SeededWorkspace;
  live: string;
  closed: string;
  productKey: string;
  jwks: { keys: Array<{ kid: string; x: string }> };
  files: TemplateFile[];
  binary: string;
  workDir: string;
}
let setup: Setup;

/** A URL on which nothing listens: the plugin without network. */
async function closedOrigin(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The product key in clear and the JWKS, as a package build reads them. */
async function packageSecrets(ws: SeededWorkspace): Promise<{ productKey: string; jwksJson: string }> {
  const { db } = ctx().database;
  const credentials = new ProductCredentials(db, TEST_LICENSE_KEY);
  const state = await credentials.ensure(db, operatorScope(ws.workspaceId, ws.ids.accounts.owner!), { id: ws.ids.products.p1!, app_id: ws.appIds.p1! }, 'live');
  const productKey = credentials.reveal(state.key!);
  if (!productKey) throw new Error('product key cannot be revealed');
  const keys = await ctx().app.inject({ method: 'GET', url: `/api/licensing/v1/keys?productAppId=${ws.appIds.p1}` });
  expect(keys.statusCode, keys.body).toBe(200);
  return { productKey, jwksJson: keys.body };
}

/** The files of product p1's native package, paths relative to the package root. */
/** The files of product p1's native package: downloaded through the API (private link, zip) as a developer would. */
async function obtainPackageFiles(ws: SeededWorkspace): Promise<TemplateFile[]> {
  const query = `variant=native&experienceMode=storefront-validation&uiWidth=${UI.width}&uiHeight=${UI.height}&releaseChannel=stable`;
  const link = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package?${query}`, headers: bearer(ws.owner) });
  expect(link.statusCode, link.body).toBe(200);
  const archive = await ctx().app.inject({ method: 'GET', url: link.json().url });
  expect(archive.statusCode).toBe(200);
  const root = 'patchbay-native/';
  return Object.entries(unzipSync(new Uint8Array(archive.rawPayload)))
    .filter(([name]) => name.startsWith(root) && name !== `${root}patchbay-manifest.json`)
    .map(([name, content]) => ({ path: name.slice(root.length), content: Buffer.from(content) }));
}

type Output = Record<string, unknown> & { licensed?: boolean; code?: string; expiresAt?: number; httpStatus?: number };

/** One run of the "plugin": the console with its license file, machine and network. */
async function plugin(command: string, options: { serial?: string; machine?: string; file: string; baseUrl?: string; now?: number; transport?: 'juce' | 'curl' }): Promise<Output> {
  const args = [command, '--base-url', options.baseUrl ?? setup.live, '--license-file', options.file];
  if (options.serial) args.push('--serial', options.serial);
  if (options.machine) args.push('--machine-id', options.machine);
  if (options.now !== undefined) args.push('--now', String(options.now));
  if (options.transport) args.push('--transport', options.transport);
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

describe.skipIf(SKIP)('native package: compiled against real JUCE, run against the live service', () => {
  beforeAll(async () => {
    const probed = Date.now();
    const missing = await missingPackages();
    const probeMs = Date.now() - probed;
    if (missing.length > 0) {
      throw new Error(
        `The native package test needs a C++ toolchain with JUCE, libsodium and libcurl. Missing: ${missing.join(', ')}.\n` +
          `Install them with: sudo ${APT_LINE}\n` +
          `(or set PATCHBAY_SKIP_NATIVE=1 on a machine without a C++ toolchain).`,
      );
    }

    const live = `${await ctx().app.listen({ port: 0, host: '127.0.0.1' })}/api/licensing/v1`;
    const ws = await seedWorkspace(ctx(), {
      productSettings: { maxActivations: 2, offlineGraceDays: GRACE_DAYS },
      serials: ['s1', 's2', 's3', 's4', 's5', 's6', 's7'].map((key) => ({ key, product: 'p1' })),
    });
    const files = await obtainPackageFiles(ws);
    const { productKey, jwksJson } = await packageSecrets(ws);

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

    setup = { ws, live, closed: `${await closedOrigin()}/api/licensing/v1`, productKey, jwks: JSON.parse(jwksJson), files, binary, workDir };
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
});
