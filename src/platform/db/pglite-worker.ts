/**
 * Runs the embedded database (PGlite, PostgreSQL compiled to WebAssembly) in a
 * worker thread. PGlite executes synchronously on the thread that owns it, so
 * in the main thread one long statement (an import, an export batch) would
 * stop every other request, `/healthz` included. Here the main thread only
 * posts messages; see `pglite-thread.ts` for the other side.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite as PGliteType } from '@electric-sql/pglite';
import type { WorkerRequest, WorkerResponse, SerializedDbError, WorkerStart } from './pglite-protocol.js';

const port = parentPort;
if (!port) throw new Error('pglite-worker must run in a worker thread');

/**
 * PostgreSQL's default (128 MB) costs every start about 0.3 s on a quiet machine and 0.8 s on a
 * loaded one: WebAssembly has no lazily zeroed shared memory, so Emscripten's mmap clears all of it
 * with memset before the first statement (a CPU profile of PGlite.create: memset was 800 of its
 * 2,000 ms). The embedded database is the development and small-install default; its working set
 * fits, and what does not is read from the operating system's page cache.
 */
const EMBEDDED_SHARED_BUFFERS = '32MB';

// Ids are `integer`; bigint only appears in counts and sums that the code casts where it needs exactness.
const parseBigint = (value: string) => Number(value);

function serializeError(error: unknown): SerializedDbError {
  const e = (error ?? {}) as Record<string, unknown>;
  const out: SerializedDbError = { message: error instanceof Error ? error.message : String(error) };
  for (const key of ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position', 'where'] as const) {
    if (typeof e[key] === 'string') out[key] = e[key] as string;
  }
  return out;
}

async function main(): Promise<void> {
  // While PGlite starts, nothing holds this thread's event loop open: it runs out between two steps of the start
  // (V8 hands back the compiled WebAssembly through tasks, not handles), and Node then waits for every background
  // task of the isolate before it goes on — here the optimising compilation of PostgreSQL's hot functions, about
  // 0.25 s on a quiet machine, during which no message is read. A timer that never fires keeps the loop open until
  // the request handler below does (docs/performance.md, "Start-up").
  const keepOpen = setInterval(() => undefined, 1 << 30);
  try {
    await start();
  } finally {
    clearInterval(keepOpen);
  }
}

async function start(): Promise<void> {
  const { location, template } = workerData as WorkerStart;
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  let pglite: PGliteType;
  try {
    const loadDataDir = template ? new Blob([await readFile(template)]) : undefined;
    pglite = await PGlite.create(location, {
      extensions: { pg_trgm },
      parsers: { 20: parseBigint },
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
      ...(loadDataDir ? { loadDataDir } : {}),
    });
  } catch (error) {
    port!.postMessage({ id: 0, error: serializeError(error) } satisfies WorkerResponse);
    return;
  }
  port!.postMessage({ id: 0, ok: true } satisfies WorkerResponse);

  // Requests are serialised by the main thread (one logical connection), but
  // run them in arrival order here too so nothing can interleave.
  let chain = Promise.resolve();
  port!.on('message', (request: WorkerRequest) => {
    chain = chain.then(async () => {
      let response: WorkerResponse;
      try {
        if (request.op === 'query') {
          const result = await pglite.query(request.sql, request.params as unknown[], { rowMode: 'object' });
          response = { id: request.id, rows: result.rows as Record<string, unknown>[], affectedRows: result.affectedRows ?? null };
        } else if (request.op === 'exec') {
          await pglite.exec(request.sql);
          response = { id: request.id, ok: true };
        } else {
          await pglite.close();
          response = { id: request.id, ok: true };
          port!.postMessage(response);
          port!.close();
          return;
        }
      } catch (error) {
        response = { id: request.id, error: serializeError(error) };
      }
      port!.postMessage(response);
    });
  });
}

void main();
