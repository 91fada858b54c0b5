#!/usr/bin/env node
// Builds what `npm start` and `bin/patchbay.js` run: every file under src/ transpiled one to one into dist/
// (esbuild, the transpiler tsx uses in development, so both run the same JavaScript; `tsc --noEmit` stays the
// type check), and every other file under src/ (package templates, migration checksums) copied beside it, so code
// that reads files next to itself finds them in dist/ too.
//
// The build takes well under a second and writes only files whose content changed, each through a temporary file
// and a rename: the test suite builds before every run, and a server or CLI already running from dist/ (another
// test run in the same checkout) never reads a half-written file. Files whose source is gone are removed.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const OUT = path.join(ROOT, 'dist');

/** Builds dist/ from src/; returns how many files it wrote and removed. */
export async function buildServer({ quiet = false } = {}) {
  const started = performance.now();
  const sources = fs.readdirSync(SRC, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  const scripts = sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const assets = sources.filter((f) => !f.endsWith('.ts'));

  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: scripts,
    outbase: SRC,
    outdir: OUT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    write: false,
    logLevel: 'error',
  });

  const wanted = new Map(result.outputFiles.map((f) => [f.path, f.contents]));
  for (const asset of assets) wanted.set(path.join(OUT, path.relative(SRC, asset)), fs.readFileSync(asset));

  let written = 0;
  for (const [file, contents] of wanted) {
    if (sameContent(file, contents)) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
    fs.writeFileSync(temp, contents);
    fs.renameSync(temp, file);
    written++;
  }

  let removed = 0;
  if (fs.existsSync(OUT)) {
    for (const entry of fs.readdirSync(OUT, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      // Another build's temporary file is that build's business.
      if (entry.isFile() && !wanted.has(file) && !file.endsWith('.tmp')) {
        fs.rmSync(file, { force: true });
        removed++;
      }
    }
  }

  if (!quiet) {
    const ms = Math.round(performance.now() - started);
    process.stderr.write(`build:server: ${scripts.length} modules, ${assets.length} other files -> dist/ (${written} written, ${removed} removed) in ${ms} ms\n`);
  }
  return { written, removed };
}

function sameContent(file, contents) {
  try {
    return Buffer.compare(fs.readFileSync(file), contents) === 0;
  } catch {
    return false;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await buildServer();
}
