/**
 * The machine a benchmark ran on, the code it measured, and how much of the
 * CPUs other processes took meanwhile: figures from a shared machine are not
 * comparable, so every report says how shared it was.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export function machineInfo(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

/** The commit measured, and whether src/ had uncommitted changes. */
export function revision(): { commit: string; srcDirty: boolean } {
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  return { commit: git(['rev-parse', 'HEAD']) || 'unknown', srcDirty: git(['status', '--porcelain', '--', 'src']) !== '' };
}

const TICK = 100; // USER_HZ on Linux

interface ProcTimes {
  /** utime + stime, and the same for reaped children (cutime + cstime), in seconds. */
  own: number;
  reaped: number;
  ppid: number;
  comm: string;
}

function readProc(pid: number): ProcTimes | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { comm, ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) / TICK, reaped: (Number(f[13]) + Number(f[14])) / TICK };
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine, and of this benchmark: this process, its children and a local PostgreSQL. */
function cpuSnapshot(): { total: number; ours: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!; // idle + iowait
  const total = (fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle) / TICK;

  const procs = new Map<number, ProcTimes>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = readProc(Number(entry));
    if (p) procs.set(Number(entry), p);
  }
  // Roots whose whole tree is ours: this process, and the postmaster (a postgres process whose parent is not one).
  const roots = new Set<number>([process.pid]);
  for (const [pid, p] of procs) if (p.comm === 'postgres' && procs.get(p.ppid)?.comm !== 'postgres') roots.add(pid);
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid, hops = 0; at && hops < 64; at = procs.get(at)?.ppid, hops += 1) if (roots.has(at)) return true;
    return false;
  };
  let ours = 0;
  for (const [pid, p] of procs) if (inTree(pid)) ours += p.own + (roots.has(pid) ? p.reaped : 0);
  return { total, ours };
}

export interface ForeignCpu {
  /** CPU seconds used by other processes while the benchmark ran. */
  seconds: number;
  /** The same as a share of the machine's capacity over that time. */
  share: number;
}

/** Measures how much CPU other processes took while `work` ran (Linux; elsewhere it reports nothing). */
export async function withForeignCpu<T>(work: () => Promise<T>): Promise<{ result: T; foreign: ForeignCpu | null }> {
  if (!fs.existsSync('/proc/stat')) return { result: await work(), foreign: null };
  const started = performance.now();
  const before = cpuSnapshot();
  const result = await work();
  const after = cpuSnapshot();
  const seconds = Math.max(0, after.total - before.total - (after.ours - before.ours));
  const capacity = ((performance.now() - started) / 1000) * os.cpus().length;
  const foreign = { seconds: Number(seconds.toFixed(1)), share: Number((seconds / capacity).toFixed(3)) };
  if (foreign.share > 0.05) {
    process.stderr.write(`warning: other processes used ${(foreign.share * 100).toFixed(0)} % of the CPUs during the measurements; the figures are skewed\n`);
  }
  return { result, foreign };
}

/** The 1-minute load average, with a warning when the machine is busy before the benchmark starts. */
export function checkQuiet(): number {
  const load = os.loadavg()[0]!;
  if (load > os.cpus().length * 0.5) {
    process.stderr.write(`warning: load average ${load.toFixed(2)} on ${os.cpus().length} CPUs before the measurements; other processes may skew the figures\n`);
  }
  return Number(load.toFixed(2));
}
