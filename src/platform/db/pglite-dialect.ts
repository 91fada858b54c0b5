import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { PGliteThread } from './pglite-thread.js';

// Kysely over the embedded database's worker thread (pglite-thread.ts): one logical connection, statements as messages.

/** One logical connection: PGlite has exactly one session, so callers take turns. */
class Turnstile {
  private tail: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  async enter(): Promise<void> {
    let open!: () => void;
    const next = new Promise<void>((resolve) => (open = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    this.release = open;
  }

  leave(): void {
    const open = this.release;
    this.release = null;
    open?.();
  }
}

class ThreadConnection implements DatabaseConnection {
  constructor(private readonly thread: PGliteThread) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, affectedRows } = await this.thread.query(compiledQuery.sql, compiledQuery.parameters);
    return { rows: rows as R[], ...(affectedRows !== null ? { numAffectedRows: BigInt(affectedRows) } : {}) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported by the embedded database; read in keyset batches');
  }
}

class ThreadDriver implements Driver {
  private readonly turnstile = new Turnstile();
  private readonly connection: ThreadConnection;

  constructor(private readonly thread: PGliteThread) {
    this.connection = new ThreadConnection(thread);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.turnstile.enter();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const parts = ['start transaction'];
    if (settings.isolationLevel) parts.push(`isolation level ${settings.isolationLevel}`);
    if (settings.accessMode) parts.push(settings.accessMode);
    await connection.executeQuery(CompiledQuery.raw(parts.join(' ')));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    this.turnstile.leave();
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}

class ThreadAdapter extends PostgresAdapter {
  // The migrator holds the only connection for its whole run: nothing else can interleave.
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

export class PGliteThreadDialect implements Dialect {
  constructor(private readonly thread: PGliteThread) {}
  createAdapter(): DialectAdapter {
    return new ThreadAdapter();
  }
  createDriver(): Driver {
    return new ThreadDriver(this.thread);
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}
