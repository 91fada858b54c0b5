/** Messages between the main thread and the embedded-database worker. */

/** What the worker opens: a directory or `memory://`, optionally starting from a dumped data directory. */
export interface WorkerStart {
  location: string;
  /** A tarball of PGlite's dumpDataDir that an in-memory database starts from. */
  template?: string;
}

export type WorkerRequest =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[] }
  | { id: number; op: 'exec'; sql: string }
  | { id: number; op: 'close' };

export interface SerializedDbError {
  message: string;
  code?: string;
  detail?: string;
  hint?: string;
  constraint?: string;
  table?: string;
  column?: string;
  schema?: string;
  severity?: string;
  position?: string;
  where?: string;
}

export type WorkerResponse =
  | { id: number; ok: true }
  | { id: number; rows: Record<string, unknown>[]; affectedRows: number | null }
  | { id: number; error: SerializedDbError };
