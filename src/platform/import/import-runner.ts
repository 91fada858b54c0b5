import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { scopeOfMember } from '../auth/policy.js';
import type { Permission } from '../auth/permissions.js';
import { hasPermission, type Scope } from '../auth/scope.js';
import type { Database, Db } from '../db/database.js';
import type { ImportKind } from '../db/schema.js';
import { inTransaction, type Tx } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { claimIdempotencyKey } from '../http/idempotency.js';
import { Type } from '@sinclair/typebox';
import { defineJob } from '../jobs/define-job.js';
import { PermanentJobError } from '../jobs/runner.js';
import { ImportErrors, type RowError } from './errors.js';
import { readImportRequest, readStoredUpload, type RawImport } from './import-request.js';
import { parseJsonYielding } from '../http/json-body.js';
import * as repo from './imports.repo.js';
import { jsonPieces, stringifyYielding } from './yielding-json.js';

/** The answer of an import that ran: every row accepted (201) or some (207). No valid row throws 422 IMPORT_REJECTED. */
export interface ImportOutcome {
  status: 201 | 207;
  body: { success: boolean; importedCount: number; insertedCount: number; failedCount: number; errors: RowError[] };
}

/** How a queued import ended, for whoever is told in the transaction that records it (webhooks' import.finished). */
export interface ImportFinished {
  importId: number;
  workspaceId: number;
  kind: ImportKind;
  state: 'succeeded' | 'failed';
  importedCount: number;
  insertedCount: number;
  failedCount: number | null;
  failure: string | null;
}
export type ImportFinishedListener = (tx: Tx, finished: ImportFinished) => Promise<void>;

/** Told how many rows are written so far, after each batch. */
export type ProgressReporter = (processedRows: number) => void;

export interface ImportDefinition {
  kind: ImportKind;
  /** The JSON body's array field (and the CSV's meaning). */
  arrayField: string;
  /** Needed to start the import, and checked again when a queued import starts. */
  permission: Permission;
  /** Validates every row, then writes the valid ones in one transaction (all or nothing on failure). */
  run(db: Db, scope: Scope, input: RawImport, progress: ProgressReporter): Promise<ImportOutcome>;
  /** The tables the import writes, whose planner statistics a large import refreshes (see `refreshStatistics`). */
  writes: readonly string[];
}

/**
 * An import that runs after its 202 answer. Its handler is registered by the imports module
 * (`modules/imports/imports.jobs.ts`); the flow it runs is this file's `runQueued`. Its lease comes
 * from configuration (IMPORT_JOB_LEASE_SECONDS) at registration.
 */
export const ImportJob = defineJob('import.run', Type.Object({ importId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), {
  maxAttempts: 3,
  // An import that failed on the database is tried again soon; it committed nothing.
  backoffMs: (attempt) => 5_000 * attempt,
});
/** An import that wrote at least this many rows refreshes the statistics of the tables it writes. */
export const ANALYZE_AFTER_ROWS = 1_000;

/** Imports with more rows than this run as jobs (202) unless configured otherwise. */
export const DEFAULT_ASYNC_IMPORT_THRESHOLD = 10_000;

/** sha256 of JSON.stringify([source, rows, productMappings]), taken in pieces (an import may be 32 MiB). */
async function contentDigest(input: RawImport): Promise<string> {
  const hash = createHash('sha256');
  for await (const piece of jsonPieces([input.source, input.rows, input.productMappings ?? null])) hash.update(piece);
  return hash.digest('hex');
}

const wantsAsync = (request: FastifyRequest) => /(^|[,\s])respond-async\b/i.test(String(request.headers.prefer ?? ''));

/**
 * One import flow for every module: read the rows (JSON or a CSV upload), check the
 * Idempotency-Key of an upload against its content, then either run the import now
 * (201/207/422) or, above the row threshold or with `Prefer: respond-async`, queue it as a job
 * and answer 202 with the import resource to poll (`Location`).
 */
export class ImportRunner {
  private readonly definitions = new Map<ImportKind, ImportDefinition>();
  /** Rows written so far by imports running in this process (exact on the embedded database). */
  private readonly progress = new Map<number, number>();

  constructor(
    private readonly database: Database,
    private readonly options: { asyncThreshold: number; leaseSeconds: number; onFinished?: ImportFinishedListener },
  ) {}

  /** Records how a queued import ended, and tells the listener (the webhooks) in the same transaction. */
  private finish(record: { id: number; workspace_id: number; kind: ImportKind }, outcome: { body: ImportOutcome['body'] } | { failure: string; errors?: RowError[]; failedCount?: number | null }) {
    return inTransaction(this.database.db, async (tx) => {
      if ('body' in outcome) await repo.markSucceeded(tx, record.id, outcome.body);
      else await repo.markFailed(tx, record.id, outcome);
      await this.options.onFinished?.(tx, {
        importId: record.id,
        workspaceId: record.workspace_id,
        kind: record.kind,
        state: 'body' in outcome ? 'succeeded' : 'failed',
        importedCount: 'body' in outcome ? outcome.body.importedCount : 0,
        insertedCount: 'body' in outcome ? outcome.body.insertedCount : 0,
        failedCount: 'body' in outcome ? outcome.body.failedCount : (outcome.failedCount ?? null),
        failure: 'body' in outcome ? null : outcome.failure,
      });
    });
  }

  /**
   * ANALYZE the tables a large import wrote. Until autovacuum samples them (up to a minute later, and only past
   * 10% growth), the planner believes an imported table is as small as before; on a table that grew from nothing
   * to 12,000 rows it chose a nested loop for a product-scoped list that ran for minutes instead of milliseconds.
   * Best effort: a failure leaves the refresh to autovacuum, which would have made it anyway.
   */
  private async refreshStatistics(definition: ImportDefinition, written: number): Promise<void> {
    if (written < ANALYZE_AFTER_ROWS || definition.writes.length === 0) return;
    await sql`analyze ${sql.join(definition.writes.map((table) => sql.table(table)))}`.execute(this.database.db).catch(() => undefined);
  }

  define(definition: ImportDefinition): void {
    this.definitions.set(definition.kind, definition);
  }

  /** Answers an import route for the caller its policy admitted (`importExportRoutes` declares them). */
  async handle(request: FastifyRequest, reply: FastifyReply, scope: Scope, kind: ImportKind): Promise<FastifyReply> {
    const definition = this.definitions.get(kind)!;
    const input = await readImportRequest(request, definition.arrayField);
    // An upload's key is checked against its content (the multipart framing differs per request).
    const digest = await contentDigest(input);
    if ((await claimIdempotencyKey(request, reply, digest)) === 'replayed') return reply;

    if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
    if (input.rows.length > this.options.asyncThreshold || wantsAsync(request)) {
      // The upload as it came; the job reads it again with the same reader (readStoredUpload).
      const upload = input.upload ?? Buffer.from(await stringifyYielding({ [definition.arrayField]: input.rows, productMappings: input.productMappings }));
      const record = await inTransaction(this.database.db, async (tx) => {
        const created = await repo.createImport(tx, scope, kind, input.source, input.rows.length, upload, input.productMappings);
        await ImportJob.enqueue(tx, { importId: created.id }, { workspaceId: scope.workspaceId });
        return created;
      });
      reply.header('location', `/api/developer/imports/${record.id}`);
      return reply.code(202).send(repo.toResource(record, this.progress));
    }
    const outcome = await definition.run(this.database.db, scope, input, () => undefined);
    await this.refreshStatistics(definition, outcome.body.importedCount);
    return reply.code(outcome.status).send(outcome.body);
  }

  /** The import resource with the progress of an import running in this process. */
  resource(record: repo.ImportRecord) {
    return repo.toResource(record, this.progress);
  }

  /** The lease of an import job (IMPORT_JOB_LEASE_SECONDS), renewed while it runs. */
  get leaseSeconds(): number {
    return this.options.leaseSeconds;
  }

  /** Runs a queued import (the import job's handler calls this); `lastAttempt` marks it failed if it throws. */
  async runQueued(importId: number, lastAttempt: boolean): Promise<unknown> {
    const db = this.database.db;
    const record = await repo.findForJob(db, importId);
    if (!record) throw new PermanentJobError(`import ${importId} does not exist`);
    if (record.state === 'succeeded' || record.state === 'failed') return { already: record.state };
    const definition = this.definitions.get(record.kind)!;
    await repo.markRunning(db, importId);
    // The member's access now, not when they sent the file: a revoked member's import does not run.
    const scope = await scopeOfMember(db, record.account_id, record.workspace_id);
    if (!scope || !hasPermission(scope, definition.permission)) {
      await this.finish(record, { failure: 'The member who started this import no longer has the permission to import' });
      return { failed: 'permission' };
    }
    const input = record.upload
      ? await readStoredUpload(record.upload, record.source, record.upload_mappings, definition.arrayField)
      : ((await parseJsonYielding(record.input ?? 'null')) as RawImport);
    let lastWrite = 0;
    const report: ProgressReporter = (processed) => {
      this.progress.set(importId, processed);
      // On PostgreSQL other instances read the progress from the row; the embedded database has
      // one connection, held by the import's transaction, and one process, which keeps it in memory.
      if (this.database.kind === 'postgres' && Date.now() - lastWrite > 1_000) {
        lastWrite = Date.now();
        void repo.recordProgress(db, importId, processed).catch(() => undefined);
      }
    };
    try {
      const outcome = await definition.run(db, scope, input, report);
      await this.finish(record, { body: outcome.body });
      await this.refreshStatistics(definition, outcome.body.importedCount);
      return { importedCount: outcome.body.importedCount };
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        // The file's fault (no valid row, a bad mapping): nothing was written; retrying changes nothing.
        const body = error.extra.body as Partial<ImportOutcome['body']> | undefined;
        await this.finish(record, { failure: error.message, errors: (error.extra.errors as RowError[] | undefined) ?? [], failedCount: body?.failedCount ?? null });
        return { failed: error.code };
      }
      if (lastAttempt) await this.finish(record, { failure: 'The import failed on the server; nothing was written. Send it again.' }).catch(() => undefined);
      else await repo.markQueued(db, importId).catch(() => undefined);
      throw error;
    } finally {
      this.progress.delete(importId);
    }
  }
}
