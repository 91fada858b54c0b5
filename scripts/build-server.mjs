#!/usr/bin/env node
// Builds what `npm start` and `bin/patchbay.js` run: every file under src/ transpiled one to one into dist/
// (esbuild, the transpiler tsx uses in development, so both run the same JavaScript; `tsc --noEmit` stays the
// type check), and every other file under src/ (package templates, migration checksums) copied beside it, so code
// that reads files next to itself finds them in dist/ too.
//
// Three pure-ESM dependencies that every command and the server load are bundled into dist/vendor/ (one chunk
// graph for all three, code shared between their entry points kept once), and the build's imports of them point
// there: Node resolves, reads and links each file of a package separately, and Kysely alone is 262 files (about
// 0.2 s of every start; bundled, 27 ms). Everything else, our code included, stays one file per source file, so code
// that finds files next to itself (templates, the embedded database's worker) works as in src/.
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
const VENDOR = path.join(OUT, 'vendor');

/** Bare import → the file name of its bundle in dist/vendor/. Only these specifiers are rewritten. */
const VENDORED = {
  kysely: 'kysely.js',
  'kysely/helpers/postgres': 'kysely-helpers-postgres.js',
  jose: 'jose.js',
  '@sinclair/typebox': 'typebox.js',
  '@sinclair/typebox/compiler': 'typebox-compiler.js',
  '@sinclair/typebox/value': 'typebox-value.js',
};
const BARE_IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^"./][^"]*)"/g;
const VENDORED_PACKAGE = /^(kysely|jose|@sinclair\/typebox)(\/|$)/;

/** The vendored bundles, as output files (path → contents). */
async function vendorBundles() {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.entries(VENDORED).map(([specifier, file]) => ({ in: fileURLToPath(import.meta.resolve(specifier)), out: file.replace(/\.js$/, '') })),
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    outdir: VENDOR,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    logLevel: 'error',
    legalComments: 'eof',
  });
  return result.outputFiles;
}

/** Points the module's imports of a vendored package at its bundle; refuses a subpath that has none. */
function useVendored(file, text) {
  return text.replace(BARE_IMPORT, (whole, prefix, specifier) => {
    if (!VENDORED_PACKAGE.test(specifier)) return whole;
    const bundle = VENDORED[specifier];
    if (!bundle) throw new Error(`${path.relative(ROOT, file)} imports "${specifier}": add it to VENDORED in scripts/build-server.mjs`);
    let relative = path.relative(path.dirname(file), path.join(VENDOR, bundle)).split(path.sep).join('/');
    if (!relative.startsWith('.')) relative = `./${relative}`;
    return `${prefix}"${relative}"`;
  });
}

/** Builds dist/ from src/; returns how many files it wrote and removed. */
export async function buildServer({ quiet = false } = {}) {
  const started = performance.now();
  const sources = fs.readdirSync(SRC, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  const scripts = sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const assets = sources.filter((f) => !f.endsWith('.ts'));

  const [result, vendored] = await Promise.all([build({
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
  }), vendorBundles()]);

  const encoder = new TextEncoder();
  const wanted = new Map(result.outputFiles.map((f) => [f.path, f.path.endsWith('.js') ? encoder.encode(useVendored(f.path, f.text)) : f.contents]));
  for (const f of vendored) wanted.set(f.path, f.contents);
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
