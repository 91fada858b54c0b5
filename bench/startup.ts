/**
 * Start-up of what an operator runs: `patchbay --help`, `patchbay workspace list` on the embedded database, and
 * `npm start` on the embedded database until GET /healthz answers 200 (a warm start: the data directory exists,
 * migrated and seeded by an earlier start, which is not measured). Each is a whole process, started
 * BENCH_STARTUP_RUNS times (default 7); the figure is the median, with the spread and peak RSS in the details.
 *
 * It measures the build output (dist/, built here first), as production runs it, and, for comparison without a
 * goal, the same commands from the TypeScript sources through tsx, as development runs them.
 * Goals: --help and workspace list ≤ 1 s, /healthz ≤ 3 s after `npm start`.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Figure, intEnv, log, onCleanup, printReport, type Report, writeReport } from './lib.js';
import { checkQuiet, machineInfo, revision, withForeignCpu } from './machine.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI_GOAL_MS = 1000;
const HEALTHZ_GOAL_MS = 3000;

interface Sample {
  ms: number;
  /** Peak resident set of the process (GNU time), when /usr/bin/time is there. */
  peakRssMiB?: number;
}

interface Series {
  name: string;
  samples: Sample[];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

function environment(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'JWT_SECRET', 'JWKS_URL', 'NODE_ENV', 'PORT', 'NODE_OPTIONS']) delete env[name];
  return { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
}

/** Runs a command to its end, timing the whole process. */
function runOnce(command: string[], env: NodeJS.ProcessEnv): Sample {
  const [file, ...args] = TIME ? [TIME, '-f', '%M', ...command] : command;
  const started = performance.now();
  const result = spawnSync(file!, args, { cwd: ROOT, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command.join(' ')} exited ${result.status}: ${result.stderr}`);
  const rssKiB = TIME ? Number(result.stderr.trim().split('\n').at(-1)) : NaN;
  return Number.isFinite(rssKiB) ? { ms, peakRssMiB: rssKiB / 1024 } : { ms };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the server, polls GET /healthz every 10 ms until it answers 200, then stops it and waits for its exit. */
async function serverOnce(command: string[], dataDir: string, limitMs = 60_000): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: environment(dataDir, { PORT: String(port) }), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let ms: number | undefined;
  while (ms === undefined) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited ${child.exitCode} before answering: ${stderr}`);
    if (performance.now() - started > limitMs) throw new Error(`${command.join(' ')}: no 200 from /healthz within ${limitMs / 1000} s`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.status === 200) ms = performance.now() - started;
    } catch {
      // Not listening yet.
    }
    if (ms === undefined) await new Promise((r) => setTimeout(r, 10));
  }
  child.kill('SIGTERM');
  await exited;
  return { ms };
}

async function series(name: string, runs: number, once: () => Sample | Promise<Sample>): Promise<Series> {
  await once(); // unrecorded: fills the file cache
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  log(`  ${name}: ${samples.map((s) => Math.round(s.ms)).join(', ')} ms`);
  return { name, samples };
}

function figureOf(s: Series, goalMs?: number): Figure {
  const value = median(s.samples.map((x) => x.ms));
  return { name: s.name, value, unit: 'ms', ...(goalMs ? { goal: { text: `≤ ${goalMs} ms`, pass: value <= goalMs } } : {}) };
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const runs = intEnv('BENCH_STARTUP_RUNS', 7, 1);
  const build = spawnSync(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-bench-startup-'));
  onCleanup(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // The first start creates the database, migrates it and seeds the demo workspace: not what is measured.
  await serverOnce([process.execPath, 'dist/server.js'], dataDir, 600_000);
  const env = environment(dataDir);
  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');

  log(`runs: ${runs} per command (median), after one unrecorded run`);
  const loadAverage = checkQuiet();
  const { result, foreign } = await withForeignCpu(async () => ({
    help: await series('patchbay --help', runs, () => runOnce([process.execPath, 'bin/patchbay.js', '--help'], env)),
    list: await series('patchbay workspace list (embedded)', runs, () => runOnce([process.execPath, 'bin/patchbay.js', 'workspace', 'list'], env)),
    start: await series('npm start → /healthz 200 (embedded, warm)', runs, () => serverOnce(['npm', 'start', '--silent'], dataDir)),
    node: await series('node dist/server.js → /healthz 200', runs, () => serverOnce([process.execPath, 'dist/server.js'], dataDir)),
    tsxHelp: await series('tsx src/cli.ts --help (development)', runs, () => runOnce([tsx, 'src/cli.ts', '--help'], env)),
    tsxList: await series('tsx src/cli.ts workspace list (development)', runs, () => runOnce([tsx, 'src/cli.ts', 'workspace', 'list'], env)),
  }));

  const peak = (s: Series) => Math.max(...s.samples.map((x) => x.peakRssMiB ?? 0));
  const report: Report = {
    target: 'startup',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), loadAverageBefore: loadAverage, otherProcessesCpu: foreign },
    settings: { runs, database: 'embedded PGlite, warm data directory' },
    figures: [
      figureOf(result.help, CLI_GOAL_MS),
      figureOf(result.list, CLI_GOAL_MS),
      figureOf(result.start, HEALTHZ_GOAL_MS),
      figureOf(result.node),
      figureOf(result.tsxHelp),
      figureOf(result.tsxList),
      ...(TIME ? [{ name: 'patchbay workspace list peak RSS', value: peak(result.list), unit: 'MiB' }] : []),
    ],
    details: Object.fromEntries(Object.entries(result).map(([key, s]) => [key, s.samples.map((x) => ({ ms: Math.round(x.ms), ...(x.peakRssMiB ? { peakRssMiB: Math.round(x.peakRssMiB) } : {}) }))])),
  };
  printReport(report);
  if (foreign) log(`other processes used ${(foreign.share * 100).toFixed(1)} % of the CPUs during the measurements`);
  log(`results: ${writeReport(report)}`);
}
