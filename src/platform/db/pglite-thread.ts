import { Worker } from 'node:worker_threads';
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
import type { SerializedDbError, WorkerRequest, WorkerResponse } from './pglite-protocol.js';

/** A database error raised inside the worker, with PostgreSQL's fields (`code` is the SQLSTATE). */
export class EmbeddedDatabaseError extends Error {
  code?: string;
  detail?: string;
  constraint?: string;
  constructor(serialized: SerializedDbError) {
    super(serialized.message);
    this.name = 'EmbeddedDatabaseError';
    Object.assign(this, serialized);
  }
}

export class EmbeddedDatabaseStoppedError extends Error {
  constructor(reason: string) {
    super(`The embedded database is not running (${reason})`);
    this.name = 'EmbeddedDatabaseStoppedError';
  }
}

/**
 * The main-thread end of the embedded database: a worker thread owns PGlite,
 * and every statement is a message. Long statements run while this thread
 * keeps serving requests.
 */
export class PGliteThread {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: WorkerResponse): void; reject(error: Error): void }>();
  private stopped: string | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (response: WorkerResponse) => {
      const waiter = this.pending.get(response.id);
      if (!waiter) return;
      this.pending.delete(response.id);
      waiter.resolve(response);
    });
    const fail = (reason: string) => {
      this.stopped ??= reason;
      for (const waiter of this.pending.values()) waiter.reject(new EmbeddedDatabaseStoppedError(reason));
      this.pending.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`worker exited with code ${code}`));
  }

  static async start(location: string): Promise<PGliteThread> {
    // Under tsx (how the service runs) the worker source is TypeScript: a two-line bootstrap loads it
    // through tsx's loader, because workers do not inherit the parent's module hooks.
    const typescript = import.meta.url.endsWith('.ts');
    const entry = new URL(`./pglite-worker.${typescript ? 'ts' : 'js'}`, import.meta.url);
    const worker = typescript
      ? new Worker(`import('tsx/esm/api').then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(import.meta.url)}))`, {
          eval: true,
          workerData: { location },
        })
      : new Worker(entry, { workerData: { location } });
    const thread = new PGliteThread(worker);
    const ready = await new Promise<WorkerResponse>((resolve, reject) => {
      thread.pending.set(0, { resolve, reject });
    });
    if ('error' in ready) {
      await worker.terminate();
      throw new EmbeddedDatabaseError(ready.error);
    }
    return thread;
  }

  private send(request: WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never): Promise<WorkerResponse> {
    if (this.stopped) return Promise.reject(new EmbeddedDatabaseStoppedError(this.stopped));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id } as WorkerRequest);
    });
  }

  async query(sql: string, params: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; affectedRows: number | null }> {
    const response = await this.send({ op: 'query', sql, params });
    if ('error' in response) throw new EmbeddedDatabaseError(response.error);
    if (!('rows' in response)) throw new Error('unexpected answer from the embedded database');
    return response;
  }

  async exec(sql: string): Promise<void> {
    const response = await this.send({ op: 'exec', sql });
    if ('error' in response) throw new EmbeddedDatabaseError(response.error);
  }

  get running(): boolean {
    return this.stopped === null;
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.send({ op: 'close' });
    } catch {
      // Already gone.
    }
    this.stopped ??= 'closed';
    await this.worker.terminate();
  }
}

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
