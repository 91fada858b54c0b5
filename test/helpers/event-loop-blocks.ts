import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

// On a loaded machine a timer fires late although the event loop was free: the process waited for
// a core. The kernel counts the main thread's own CPU time (/proc/<pid>/task/<pid>/schedstat, in
// ns), so the CPU time spent between two timer ticks is the length of what held the event loop,
// whatever the machine's load.
const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;

function mainThreadCpuNs(): number | null {
  try {
    return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

export const canMeasureBlocks = mainThreadCpuNs() !== null;

export interface EventLoopReport {
  /** The longest stretch of main-thread CPU between two timer ticks (ms): the longest block. */
  longestBlockMs: number;
  /** Blocks of at least 20 ms, as [CPU ms, wall ms] (for the failure message). */
  longBlocks: Array<[number, number]>;
  /** monitorEventLoopDelay over the same time (wall clock, includes waiting for a core), ms. */
  delay: { max: number; p99: number; p50: number };
}

/** Watches the event loop until `stop()`; ticks every millisecond. */
export function watchEventLoop(): { stop(): EventLoopReport } {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let lastCpu = mainThreadCpuNs() ?? 0;
  let lastWall = performance.now();
  let longest = 0;
  const longBlocks: Array<[number, number]> = [];
  const timer = setInterval(() => {
    const cpu = mainThreadCpuNs() ?? 0;
    const wall = performance.now();
    const blockMs = (cpu - lastCpu) / 1e6;
    longest = Math.max(longest, blockMs);
    if (blockMs >= 20) longBlocks.push([Math.round(blockMs), Math.round(wall - lastWall)]);
    lastCpu = mainThreadCpuNs() ?? 0;
    lastWall = performance.now();
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
      return {
        longestBlockMs: longest,
        longBlocks,
        delay: { max: histogram.max / 1e6, p99: histogram.percentile(99) / 1e6, p50: histogram.percentile(50) / 1e6 },
      };
    },
  };
}
