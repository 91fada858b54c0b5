import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import { migrations } from '../../migrations/index.js';
import type { DB } from './schema.js';

export type Db = Kysely<DB>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

export class DataDirLockedError extends Error {
  constructor(dir: string) {
    super(
      `The embedded database in "${dir}" is in use by another Patchbay process. ` +
        'PGlite is single-process: stop the other process (server or CLI) or point DATA_DIR elsewhere.',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  poolSize?: number;
  /** Embedded database directory; `null` keeps it in memory (tests). */
  dataDir: string | null;
}

// Our ids are `integer`; bigint only appears in counts and the audit log, always far below 2^53.
const parseBigint = (value: string) => Number(value);

async function openPglite(dataDir: string | null): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  let release: (() => Promise<void>) | undefined;
  let location = 'memory://';
  if (dataDir !== null) {
    const dir = path.resolve(dataDir);
    fs.mkdirSync(dir, { recursive: true });
    try {
      release = await lockfile.lock(dir, { lockfilePath: path.join(dir, '.patchbay.lock'), stale: 15_000, update: 5_000 });
    } catch (error) {
      if ((error as { code?: string }).code === 'ELOCKED') throw new DataDirLockedError(dir);
      throw error;
    }
    location = path.join(dir, 'pgdata');
  }
  const pglite = await PGlite.create(location, { extensions: { pg_trgm }, parsers: { 20: parseBigint } });
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: 'pglite',
    async close() {
      await db.destroy();
      await release?.();
    },
  };
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Our queries are short OLTP statements; JIT compilation only ever added latency to them.
    // Random reads cost about what sequential ones do on SSD storage; with the default (4) the
    // planner chose sequential scans of 1,000,000-row tables over index lookups during imports.
    options: '-c jit=off -c random_page_cost=1.1',
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? parseBigint : pg.types.getTypeParser(oid, format as 'text'),
    } as pg.CustomTypesConfig,
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', close: () => db.destroy() };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10)
    : openPglite(options.dataDir);
}

const provider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  },
};

/** Applies pending migrations; throws with the failing migration's error. */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
