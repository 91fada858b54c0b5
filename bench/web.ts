/**
 * The web front end's initial JavaScript per app: what a browser must download before an app's
 * first page can render. Builds the front end (`npm run build:web`), then follows each app's
 * entry through its static imports in Vite's manifest (lazy route chunks are not initial) and
 * sums the files gzipped at level 9 (the .gz the server sends; brotli, which browsers prefer, is
 * reported beside it). Goals: each app ≤ 250 KB gzipped, the buyers' portal ≤ 150 KB.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { type Figure, log, printReport, type Report, writeReport } from './lib.js';
import { machineInfo, revision } from './machine.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(ROOT, 'web', 'dist');
const KB = 1024;
const GOALS_KB: Record<string, number> = { console: 250, 'partner-portal': 250, portal: 150 };

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

const gzipped = (file: string) => gzipSync(fs.readFileSync(path.join(DIST, file)), { level: 9 }).length;
const brotli = (file: string) =>
  brotliCompressSync(fs.readFileSync(path.join(DIST, file)), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

/** The entry and every chunk it imports statically: the JavaScript loaded before the app renders. */
function initialChunks(manifest: Record<string, ManifestChunk>, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const next of manifest[key]?.imports ?? []) visit(next);
  };
  visit(entry);
  return [...seen];
}

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const built = performance.now();
  const build = spawnSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build:web failed');
  const buildSeconds = (performance.now() - built) / 1000;
  const manifest = JSON.parse(fs.readFileSync(path.join(DIST, '.vite', 'manifest.json'), 'utf8')) as Record<string, ManifestChunk>;

  const figures: Figure[] = [];
  const details: Record<string, unknown> = { buildSeconds: Number(buildSeconds.toFixed(1)) };
  for (const [key, chunk] of Object.entries(manifest).filter(([, c]) => c.isEntry)) {
    const app = key.split('/')[0]!;
    const files = initialChunks(manifest, key).map((k) => manifest[k]!.file);
    const gz = files.reduce((sum, f) => sum + gzipped(f), 0);
    const br = files.reduce((sum, f) => sum + brotli(f), 0);
    const raw = files.reduce((sum, f) => sum + fs.statSync(path.join(DIST, f)).size, 0);
    const css = (chunk.css ?? []).concat(...initialChunks(manifest, key).map((k) => manifest[k]!.css ?? []));
    const lazy = (chunk.dynamicImports ?? []).map((k) => ({ route: k, gz: gzipped(manifest[k]!.file) }));
    const goal = GOALS_KB[app];
    figures.push({
      name: `${app}: initial JavaScript, gzip`,
      value: gz / KB,
      unit: 'KB',
      ...(goal ? { goal: { text: `≤ ${goal} KB`, pass: gz / KB <= goal } } : {}),
    });
    details[app] = {
      files,
      gzipBytes: gz,
      brotliBytes: br,
      minifiedBytes: raw,
      cssGzipBytes: [...new Set(css)].reduce((sum, f) => sum + gzipped(f), 0),
      largestLazyRouteGzipBytes: lazy.sort((a, b) => b.gz - a.gz)[0] ?? null,
    };
    log(`${app}: ${(gz / KB).toFixed(1)} KB gzip, ${(br / KB).toFixed(1)} KB brotli, ${(raw / KB).toFixed(1)} KB minified (${files.join(', ')})`);
  }

  const report: Report = {
    target: 'web',
    startedAt,
    revision: revision(),
    machine: machineInfo(),
    settings: { gzipLevel: 9, brotliQuality: 11, counted: 'entry chunk and its static imports (modulepreload); lazy route chunks and CSS excluded' },
    figures,
    details,
  };
  printReport(report);
  log(`results: ${writeReport(report)}`);
}
