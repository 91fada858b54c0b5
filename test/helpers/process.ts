import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, inject, it } from 'vitest';
import { buildServer } from './build.js';

// The server and the CLI as real child processes, on a temporary DATA_DIR, with none of the
// test run's own configuration leaking in. Every child is stopped and every directory removed
// after the file's tests.

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What `npm start` and `bin/patchbay.js` run: the build, never the TypeScript sources. */
export const SERVER_ENTRY = 'dist/server.js';
export const CLI_ENTRY = 'bin/patchbay.js';
const CONFIG_VARS = [
  'DATABASE_URL', 'JWT_SECRET', 'JWKS_URL', 'JWT_ISSUER', 'JWT_AUDIENCE', 'PORT', 'HOST', 'DEMO', 'LOG_LEVEL', 'DB_POOL_SIZE', 'DB_PREPARED_STATEMENTS', 'NODE_ENV', 'REDIS_URL',
];
/**
 * Tests whose processes open an embedded database of their own in a temporary DATA_DIR (the child's environment drops
 * DATABASE_URL), so they run the same thing whichever database the suite runs on: the PostgreSQL suite skips them
 * instead of running them twice (docs/testing.md). Tests that hand the child the suite's DATABASE_URL do not use these.
 */
const suiteOnPostgres = Boolean(process.env.DATABASE_URL);
export const describeOwnEmbeddedDatabase = describe.skipIf(suiteOnPostgres);
export const itOwnEmbeddedDatabase = it.skipIf(suiteOnPostgres);

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

export function childEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of CONFIG_VARS) delete env[name];
  return { ...env, DATA_DIR: dataDir, ...extra };
}

export async function tempDataDir(prefix = 'patchbay-'): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Tracked {
  child: ChildProcess;
  outcome: Promise<Outcome>;
  output: () => Outcome;
}

let built = false;

/** vitest.config.ts's global set-up builds dist/ for the run; a run without it (test/e2e) builds here, once. */
export function ensureBuilt(): void {
  if (built) return;
  if (!inject('serverBuilt')) buildServer();
  built = true;
}

/**
 * A temporary DATA_DIR holding an embedded database with every migration applied (a copy of the run's template,
 * test/helpers/global-setup.ts), for tests of a process that is not about its first start: a first start initialises
 * and migrates the database, several seconds each. Empty, as tempDataDir, when the run has no template (PostgreSQL).
 */
export async function migratedDataDir(prefix = 'patchbay-'): Promise<string> {
  const dir = await tempDataDir(prefix);
  const template = inject('pgliteDataDir');
  if (template) await fs.cp(path.join(template, 'pgdata'), path.join(dir, 'pgdata'), { recursive: true });
  return dir;
}

/** Spawns `command args` (default: node) in the repository and collects its output. */
export function spawnTracked(args: string[], env: NodeJS.ProcessEnv, command = process.execPath): Tracked {
  ensureBuilt();
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const out: Outcome = { code: null, signal: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk) => (out.stdout += chunk));
  child.stderr!.on('data', (chunk) => (out.stderr += chunk));
  const outcome = new Promise<Outcome>((resolve) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      out.code = code;
      out.signal = signal;
      resolve({ ...out });
    }),
  );
  return { child, outcome, output: () => ({ ...out }) };
}

export interface Server extends Tracked {
  stdout: string;
  address: string;
}

/** Starts the server (or `command args`, e.g. npm start) and resolves once it has printed its start-up block. */
export function startServer(dataDir: string, extra: Record<string, string> = {}, command?: { command: string; args: string[] }): Promise<Server> {
  const env = childEnv(dataDir, { PORT: '0', LOG_LEVEL: 'warn', ...extra });
  const tracked = command ? spawnTracked(command.args, env, command.command) : spawnTracked([SERVER_ENTRY], env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in time\n${JSON.stringify(tracked.output())}`)), 150_000);
    tracked.child.stdout!.on('data', () => {
      const { stdout } = tracked.output();
      const started = /Patchbay API listening on (\S+)\n[\s\S]*\n\n/.exec(stdout);
      if (started) {
        clearTimeout(timer);
        resolve({ ...tracked, stdout, address: started[1]! });
      }
    });
    void tracked.outcome.then((result) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${result.code}\n${result.stdout}\n${result.stderr}`));
    });
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await closed;
  clearTimeout(timer);
}

/**
 * Stops every child this file started and removes its directories. Registered after each file by
 * test/helpers/per-file.ts (and by test/e2e/harness.ts): files share their worker's modules (isolate: false), so a
 * hook registered when this module is first imported would run after the first file only, and the servers of every
 * later file would outlive the run.
 */
export async function stopChildrenAndRemoveDirs(): Promise<void> {
  await Promise.all([...children].map((child) => stop(child)));
  await Promise.all(tempDirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
}
