import { Worker } from 'node:worker_threads';
import type { SerializedDbError, WorkerRequest, WorkerResponse, WorkerStart } from './pglite-protocol.js';

// No Kysely here (the dialect is pglite-dialect.ts): the worker starts before the query layer has loaded.

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

  static async start(start: WorkerStart): Promise<PGliteThread> {
    // Under tsx (how the service runs) the worker source is TypeScript: a two-line bootstrap loads it
    // through tsx's loader, because workers do not inherit the parent's module hooks.
    const typescript = import.meta.url.endsWith('.ts');
    const entry = new URL(`./pglite-worker.${typescript ? 'ts' : 'js'}`, import.meta.url);
    const worker = typescript
      ? new Worker(`import('tsx/esm/api').then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(import.meta.url)}))`, {
          eval: true,
          workerData: start,
        })
      : new Worker(entry, { workerData: start });
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
