import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The native package, proven by compiling it: the generated C++ sources and the patchbay_juce module are built
 * with g++ against real JUCE (Debian's JUCE 7 module sources), libsodium and libcurl into a console program
 * (native-console/main.cpp) that plays the plugin against this service over real HTTP.
 *
 * Needs g++ (C++17), JUCE's module sources, libsodium, libcurl and zlib headers: scripts/native-toolchain.sh installs
 * them on Debian/Ubuntu (`apt-get install -y --no-install-recommends g++ juce-modules-source-data libsodium-dev
 * libcurl4-openssl-dev zlib1g-dev`; juce-modules-source would add JUCE's CMake support and GTK/WebKit development
 * packages the test does not need). Without them the file is skipped with a notice naming that command, so `npm test`
 * passes on a fresh machine; PATCHBAY_REQUIRE_NATIVE=1 (set by .ci/run) turns the skip into a failure, and
 * PATCHBAY_SKIP_NATIVE=1 skips it where the toolchain exists. JUCE_MODULES_DIR points at another JUCE modules folder; the compiled JUCE objects
 * are cached in PATCHBAY_NATIVE_CACHE (default: <tmp>/patchbay-native-cache), keyed by JUCE version, compiler and
 * flags, so only the first run pays for juce_core.
 */

export const SKIP = process.env.PATCHBAY_SKIP_NATIVE === '1';
export const REQUIRED = process.env.PATCHBAY_REQUIRE_NATIVE === '1';
export const RUN_IT = 'scripts/native-toolchain.sh && npx vitest run test/packages/native.test.ts';
const JUCE_MODULES = process.env.JUCE_MODULES_DIR ?? '/usr/share/juce/modules';
const CACHE_ROOT = process.env.PATCHBAY_NATIVE_CACHE ?? path.join(os.tmpdir(), 'patchbay-native-cache');
const CONSOLE_SOURCE = fileURLToPath(new URL('./native-console/main.cpp', import.meta.url));
export const APT_LINE = 'apt-get install -y --no-install-recommends juce-modules-source-data libsodium-dev libcurl4-openssl-dev zlib1g-dev';


/** Runs a program without blocking the event loop (the console talks to this process's server). */
export function run(file: string, args: string[], options: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd: options.cwd, timeout: options.timeoutMs ?? 600_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`${path.basename(file)} ${args.join(' ')} failed: ${error.message}\n${stderr.slice(-4000)}`), { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** One header per apt package: does the compiler find it? */
export async function missingPackages(): Promise<string[]> {
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
export async function juceObjects(): Promise<{ objects: string[]; dir: string; compiled: boolean; version: string }> {
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
export async function buildConsole(packageDir: string, buildDir: string, juce: { objects: string[]; dir: string }): Promise<{ binary: string; panelChecked: boolean }> {
  const strict = ['-Wall', '-Wextra', '-Werror', '-isystem', JUCE_MODULES, `-I${packageDir}`, '-DPATCHBAY_WITH_CURL=1'];
  const core = ['Base64', 'CurlTransport', 'Json', 'License', 'Machine', 'Offline', 'Store', 'Token'].map((n) => path.join(packageDir, `patchbay_licensing/core/Patchbay${n}.cpp`));
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

export function listFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}
