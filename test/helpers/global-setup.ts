import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../../src/platform/db/database.js';
import { buildServer } from './build.js';

// Runs once per test run, before any test file (vitest.config.ts, globalSetup).

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated embedded data directory (dumped) that each test file's in-memory database starts from; null on PostgreSQL. */
    pgliteTemplate: string | null;
    /**
     * A migrated embedded data directory (its `pgdata`) that server and CLI processes of the tests start from, when
     * what they test is not the first start; null on PostgreSQL. test/helpers/process.ts copies it (migratedDataDir).
     */
    pgliteDataDir: string | null;
    /** dist/ was built for this run (test/helpers/process.ts builds it otherwise). */
    serverBuilt: boolean;
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Initialising an embedded database and applying every migration took about 3.5 s of each test file; loading a
 * dump of a migrated one takes a fifth of that. The dump is kept in node_modules/.cache between runs, named by
 * what it depends on: PGlite's version, the migrations and the worker that opens it.
 */
async function pgliteTemplate(): Promise<{ dump: string; dataDir: string }> {
  const hash = createHash('sha256');
  hash.update(JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  const inputs = [
    ...fs.readdirSync(path.join(ROOT, 'src/migrations')).sort().map((f) => path.join('src/migrations', f)),
    'src/platform/db/pglite-worker.ts',
  ];
  for (const file of inputs) hash.update(file).update(fs.readFileSync(path.join(ROOT, file)));
  const dir = path.join(ROOT, 'node_modules/.cache/patchbay-tests');
  const name = `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`;
  const file = path.join(dir, name);
  // The same database as a directory, for processes that open DATA_DIR themselves (a first start initialises and
  // migrates it, about 5 s on a quiet machine; a copy takes a fraction of a second).
  const dataDir = file.replace(/\.tar$/, '-datadir');
  if (fs.existsSync(file) && fs.existsSync(dataDir)) return { dump: file, dataDir };

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-template-'));
  try {
    const database = await openDatabase({ dataDir: work });
    try {
      await migrate(database.db);
    } finally {
      await database.close();
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    const pglite = await PGlite.create(path.join(work, 'pgdata'), { extensions: { pg_trgm } });
    const dump = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
    await pglite.close();
    fs.mkdirSync(dir, { recursive: true });
    // Another run may be writing the same template: each writes its own file and renames it into place.
    const temp = path.join(dir, `${name}.${process.pid}.tmp`);
    fs.writeFileSync(temp, dump);
    fs.renameSync(temp, file);
    const tempDir = `${dataDir}.${process.pid}.tmp`;
    fs.cpSync(path.join(work, 'pgdata'), path.join(tempDir, 'pgdata'), { recursive: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.renameSync(tempDir, dataDir);
    // Older templates go once no run can still be reading them (a run started before a migration was added).
    for (const old of fs.readdirSync(dir)) {
      const oldFile = path.join(dir, old);
      const current = old === name || old === path.basename(dataDir);
      if (!current && Date.now() - fs.statSync(oldFile).mtimeMs > 3600_000) fs.rmSync(oldFile, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { dump: file, dataDir };
}

export default async function setup(project: TestProject): Promise<void> {
  buildServer();
  project.provide('serverBuilt', true);
  // PATCHBAY_TEST_TEMPLATE=0: every file migrates its own database, as before the template.
  const useTemplate = !process.env.DATABASE_URL && process.env.PATCHBAY_TEST_TEMPLATE !== '0';
  const template = useTemplate ? await pgliteTemplate() : null;
  project.provide('pgliteTemplate', template?.dump ?? null);
  project.provide('pgliteDataDir', template?.dataDir ?? null);
}
