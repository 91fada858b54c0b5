import path from 'node:path';
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type pg from 'pg';
import { acquireDirLock, DataDirLockedError } from './dir-lock.js';
import { PGliteThread } from './pglite-thread.js';
import type { DB } from './schema.js';

// Kysely, pg and the migrations are imported when a database is opened, not with this module: the embedded
// database's worker thread starts first and they load while PGlite boots (start-up of every CLI command and the
// server; docs/performance.md, "Start-up").

export { DataDirLockedError };

export type Db = Kysely<DB>;

/** What the database layer reports: connection faults are logged, never thrown at the process. */
export interface DbLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** The PostgreSQL pool (server mode), for pool metrics. */
  pool?: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  poolSize?: number;
  /** PostgreSQL: name the statements a process repeats (prepared-statements.ts). Default true. */
  preparedStatements?: boolean;
  /** Embedded database directory; `null` keeps it in memory (tests). */
  dataDir: string | null;
  /**
   * In memory only: start from this dump of a data directory (PGlite's dumpDataDir, uncompressed) instead of an
   * empty database. The tests migrate one template per run rather than one database per test file.
   */
  template?: string;
  log?: DbLogger;
  /** Sees the SQL of every statement (diagnostics and tests). */
  onQuery?: (sql: string) => void;
}

// Our ids are `integer`; bigint only appears in counts and the audit log, always far below 2^53.
const parseBigint = (value: string) => Number(value);

async function openPglite(dataDir: string | null, template: string | undefined, onQuery?: (sql: string) => void): Promise<Database> {
  let release: (() => void) | undefined;
  let location = 'memory://';
  if (dataDir !== null) {
    const dir = path.resolve(dataDir);
    release = acquireDirLock(dir);
    location = path.join(dir, 'pgdata');
  }
  const starting = PGliteThread.start({ location, ...(template && dataDir === null ? { template } : {}) });
  let thread: PGliteThread;
  let layer: [typeof import('kysely'), typeof import('./pglite-dialect.js')];
  try {
    [thread, ...layer] = await Promise.all([starting, import('kysely'), import('./pglite-dialect.js')]);
  } catch (error) {
    // Whichever failed, the worker is not left running behind a released lock.
    await starting.then((t) => t.close(), () => undefined);
    release?.();
    throw error;
  }
  const [{ Kysely }, { PGliteThreadDialect }] = layer;
  const db = new Kysely<DB>({ dialect: new PGliteThreadDialect(thread), ...queryLog(onQuery) });
  return {
    db,
    kind: 'pglite',
    async close() {
      await db.destroy();
      release?.();
    },
  };
}

/** A client-side description of a connection error: no backend pid, keys or packet internals. */
export function describeDbError(error: unknown): { code?: string; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return typeof e?.code === 'string' ? { code: e.code, message } : { message };
}

async function openPostgres(
  url: string,
  poolSize: number,
  preparedStatements: boolean,
  log: DbLogger | undefined,
  onQuery?: (sql: string) => void,
): Promise<Database> {
  const [{ default: pg }, { Kysely, PostgresDialect }, { prepareRepeatedStatements }, { trackCopyClients }] = await Promise.all([
    import('pg'),
    import('kysely'),
    import('./prepared-statements.js'),
    import('./copy-in.js'),
  ]);
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // A connection that cannot be made within this time fails the request (503 on /readyz) instead of queueing forever.
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // Our queries are short OLTP statements; JIT compilation only ever added latency to them.
    // Random reads cost about what sequential ones do on SSD storage; with the default (4) the
    // planner chose sequential scans of 1,000,000-row tables over index lookups during imports.
    options: '-c jit=off -c random_page_cost=1.1',
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? parseBigint : pg.types.getTypeParser(oid, format as 'text'),
    } as pg.CustomTypesConfig,
  });
  // A server restart, failover, pg_terminate_backend or a proxy's idle timeout ends connections.
  // pg reports that as an 'error' event, which would end the process if nobody listened: log it;
  // the broken client is discarded (an idle one by the pool, a busy one when it is released, because
  // it is no longer queryable) and the next request opens a fresh connection.
  const onError = (error: unknown) => log?.warn({ db: describeDbError(error) }, 'database connection lost; it will be replaced');
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  if (preparedStatements) prepareRepeatedStatements(pool);
  // Large imports COPY into staging tables on their transaction's client (copy-in.ts).
  trackCopyClients(pool);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...queryLog(onQuery) });
  return { db, kind: 'postgres', pool, close: () => db.destroy() };
}

const queryLog = (onQuery: ((sql: string) => void) | undefined) =>
  onQuery ? { log: (event: { query: { sql: string } }) => onQuery(event.query.sql) } : {};

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.preparedStatements ?? true, options.log, options.onQuery)
    : openPglite(options.dataDir, options.template, options.onQuery);
}

/** The names in Kysely's migration table, or null before the first migration run created it. */
async function appliedMigrations(db: Db): Promise<Set<string> | null> {
  const { sql } = await import('kysely');
  const table = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!table.rows[0]?.present) return null;
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return new Set(rows.rows.map((r) => r.name));
}

/** Applies pending migrations; throws with the failing migration's error. */
export async function migrate(db: Db): Promise<string[]> {
  // Every start after the first finds nothing to do: two small queries say so, where the migrator would first
  // introspect the whole catalogue (about a second of every CLI command and server start on the embedded
  // database). Anything else (a pending migration, an unknown one) goes through the migrator as before.
  const [applied, { migrations }, { Migrator }] = await Promise.all([appliedMigrations(db), import('../../migrations/index.js'), import('kysely')]);
  const known = Object.keys(migrations);
  if (applied && applied.size === known.length && known.every((name) => applied.has(name))) return [];
  const provider: MigrationProvider = {
    async getMigrations(): Promise<Record<string, Migration>> {
      return migrations;
    },
  };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
