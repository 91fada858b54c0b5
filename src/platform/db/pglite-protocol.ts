/** Messages between the main thread and the embedded-database worker. */
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
