import { sql } from 'kysely';
import type { Scope } from '../auth/scope.js';
import type { ImportKind } from '../db/schema.js';
import type { Executor, Tx } from '../db/transaction.js';
import type { RowError } from './errors.js';
import type { RawImport } from './import-request.js';

export interface ImportRecord {
  id: number;
  workspace_id: number;
  account_id: number;
  kind: ImportKind;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  total_rows: number;
  processed_rows: number;
  imported_count: number | null;
  inserted_count: number | null;
  failed_count: number | null;
  errors: unknown;
  failure: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const COLUMNS = [
  'id', 'workspace_id', 'account_id', 'kind', 'state', 'total_rows', 'processed_rows', 'imported_count', 'inserted_count', 'failed_count',
  'errors', 'failure', 'created_at', 'started_at', 'finished_at',
] as const;

/** `upload` is the upload as it came; a CSV's productMappings are kept beside it (`readStoredUpload` reads both). */
export async function createImport(tx: Tx, scope: Scope, kind: ImportKind, source: RawImport['source'], totalRows: number, upload: Buffer, csvMappings: unknown): Promise<ImportRecord> {
  return tx
    .insertInto('imports')
    .values({
      workspace_id: scope.workspaceId,
      account_id: scope.accountId,
      kind,
      source,
      total_rows: totalRows,
      // Sent as text and converted by the server: a bytea parameter of 10 MB took the embedded database about 5 s
      // to take in (hex text in its worker). An upload is UTF-8 (one that is not was refused when it came).
      upload: sql<Buffer>`convert_to(${upload.toString('utf8')}, 'UTF8')`,
      upload_mappings: source === 'csv' ? JSON.stringify(csvMappings === undefined ? {} : { value: csvMappings }) : null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow() as Promise<ImportRecord>;
}

/** An import of the caller's workspace (the service decides who may see it). */
export async function findImport(db: Executor, scope: Scope, id: number): Promise<ImportRecord | undefined> {
  return db.selectFrom('imports').where('workspace_id', '=', scope.workspaceId).where('id', '=', id).select(COLUMNS).executeTakeFirst() as Promise<
    ImportRecord | undefined
  >;
}

/**
 * For the job that runs it: the record with its upload (and a CSV's mappings), or, for an import queued before
 * uploads were kept (migration 0031), its rows as JSON text; the caller parses either without blocking.
 */
export async function findForJob(db: Executor, id: number) {
  return db
    .selectFrom('imports')
    .where('id', '=', id)
    // The upload as text: bytea comes as hex, which the driver decodes in JavaScript (0.7 s for 10 MB). What is
    // stored is UTF-8 (a JSON body or a CSV file that is not was refused when it came).
    .select([...COLUMNS, 'source', sql<string | null>`convert_from(upload, 'UTF8')`.as('upload'), 'upload_mappings', sql<string | null>`input::text`.as('input')])
    .executeTakeFirst() as Promise<
    (ImportRecord & { source: RawImport['source']; upload: string | null; upload_mappings: unknown; input: string | null }) | undefined
  >;
}

export async function markRunning(db: Executor, id: number): Promise<void> {
  await db.updateTable('imports').set({ state: 'running', started_at: new Date(), processed_rows: 0 }).where('id', '=', id).execute();
}

export async function markQueued(db: Executor, id: number): Promise<void> {
  await db.updateTable('imports').set({ state: 'queued', processed_rows: 0 }).where('id', '=', id).where('state', '=', 'running').execute();
}

export async function recordProgress(db: Executor, id: number, processed: number): Promise<void> {
  await db.updateTable('imports').set({ processed_rows: processed }).where('id', '=', id).where('state', '=', 'running').execute();
}

/** The outcome is kept; the upload is dropped (it may be large and is no longer needed). */
export async function markSucceeded(
  db: Executor,
  id: number,
  body: { importedCount: number; insertedCount: number; failedCount: number; errors: RowError[] },
): Promise<void> {
  await sql`
    update imports set state = 'succeeded', finished_at = now(), processed_rows = total_rows, input = null, upload = null, upload_mappings = null,
      imported_count = ${body.importedCount}, inserted_count = ${body.insertedCount}, failed_count = ${body.failedCount},
      errors = ${JSON.stringify(body.errors)}::jsonb
    where id = ${id}`.execute(db);
}

export async function markFailed(db: Executor, id: number, outcome: { failure: string; errors?: RowError[]; failedCount?: number | null }): Promise<void> {
  await sql`
    update imports set state = 'failed', finished_at = now(), input = null, upload = null, upload_mappings = null, failure = ${outcome.failure},
      imported_count = 0, inserted_count = 0, failed_count = ${outcome.failedCount ?? null}, errors = ${JSON.stringify(outcome.errors ?? [])}::jsonb
    where id = ${id}`.execute(db);
}

/** The import resource of the API (camelCase, as the import answers are). */
export function toResource(r: ImportRecord, running: ReadonlyMap<number, number>) {
  const finished = r.state === 'succeeded' || r.state === 'failed';
  return {
    id: r.id,
    kind: r.kind,
    state: r.state,
    totalRows: r.total_rows,
    processedRows: finished ? r.total_rows : Math.max(r.processed_rows, running.get(r.id) ?? 0),
    importedCount: r.imported_count,
    insertedCount: r.inserted_count,
    failedCount: r.failed_count,
    errors: (r.errors as RowError[] | null) ?? [],
    failure: r.failure,
    createdAt: r.created_at.toISOString(),
    startedAt: r.started_at?.toISOString() ?? null,
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}
