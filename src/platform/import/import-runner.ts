import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireScope, scopeOfMember } from '../auth/policy.js';
import type { Permission } from '../auth/permissions.js';
import { hasPermission, type Scope } from '../auth/scope.js';
import type { Database, Db } from '../db/database.js';
import type { ImportKind } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { claimIdempotencyKey } from '../http/idempotency.js';
import { enqueueJob } from '../jobs/jobs.repo.js';
import { PermanentJobError, type JobRunner } from '../jobs/runner.js';
import { ImportErrors, type RowError } from './errors.js';
import { readImportRequest, type RawImport } from './import-request.js';
import * as repo from './imports.repo.js';

/** The answer of an import that ran: every row accepted (201) or some (207). No valid row throws 422 IMPORT_REJECTED. */
export interface ImportOutcome {
  status: 201 | 207;
  body: { success: boolean; importedCount: number; insertedCount: number; failedCount: number; errors: RowError[] };
}

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
}

export const IMPORT_JOB = 'import.run';
/** Imports with more rows than this run as jobs (202) unless configured otherwise. */
export const DEFAULT_ASYNC_IMPORT_THRESHOLD = 10_000;

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
    private readonly options: { asyncThreshold: number; leaseSeconds: number },
  ) {}

  define(definition: ImportDefinition): void {
    this.definitions.set(definition.kind, definition);
  }

  async handle(request: FastifyRequest, reply: FastifyReply, kind: ImportKind): Promise<FastifyReply> {
    const definition = this.definitions.get(kind)!;
    const scope = requireScope(request);
    const input = await readImportRequest(request, definition.arrayField);
    // An upload's key is checked against its content (the multipart framing differs per request).
    const digest = createHash('sha256').update(JSON.stringify([input.source, input.rows, input.productMappings ?? null])).digest('hex');
    if ((await claimIdempotencyKey(request, reply, digest)) === 'replayed') return reply;

    if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
    if (input.rows.length > this.options.asyncThreshold || wantsAsync(request)) {
      const record = await inTransaction(this.database.db, async (tx) => {
        const created = await repo.createImport(tx, scope, kind, input);
        await enqueueJob(tx, { kind: IMPORT_JOB, workspaceId: scope.workspaceId, payload: { importId: created.id }, maxAttempts: 3 });
        return created;
      });
      reply.header('location', `/api/developer/imports/${record.id}`);
      return reply.code(202).send(repo.toResource(record, this.progress));
    }
    const outcome = await definition.run(this.database.db, scope, input, () => undefined);
    return reply.code(outcome.status).send(outcome.body);
  }

  /** The import resource with the progress of an import running in this process. */
  resource(record: repo.ImportRecord) {
    return repo.toResource(record, this.progress);
  }

  registerJobs(runner: JobRunner): void {
    runner.register(IMPORT_JOB, (job) => this.runJob(Number((job.payload as { importId?: unknown }).importId), job.attempt >= job.maxAttempts), {
      leaseSeconds: this.options.leaseSeconds,
      // An import that failed on the database is tried again soon; it committed nothing.
      backoffMs: (attempt) => 5_000 * attempt,
    });
  }

  private async runJob(importId: number, lastAttempt: boolean): Promise<unknown> {
    const db = this.database.db;
    const record = await repo.findForJob(db, importId);
    if (!record) throw new PermanentJobError(`import ${importId} does not exist`);
    if (record.state === 'succeeded' || record.state === 'failed') return { already: record.state };
    const definition = this.definitions.get(record.kind)!;
    await repo.markRunning(db, importId);
    // The member's access now, not when they sent the file: a revoked member's import does not run.
    const scope = await scopeOfMember(db, record.account_id, record.workspace_id);
    if (!scope || !hasPermission(scope, definition.permission)) {
      await repo.markFailed(db, importId, { failure: 'The member who started this import no longer has the permission to import' });
      return { failed: 'permission' };
    }
    const input = record.input as RawImport;
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
      await repo.markSucceeded(db, importId, outcome.body);
      return { importedCount: outcome.body.importedCount };
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        // The file's fault (no valid row, a bad mapping): nothing was written; retrying changes nothing.
        const body = error.extra.body as Partial<ImportOutcome['body']> | undefined;
        await repo.markFailed(db, importId, { failure: error.message, errors: (error.extra.errors as RowError[] | undefined) ?? [], failedCount: body?.failedCount ?? null });
        return { failed: error.code };
      }
      if (lastAttempt) await repo.markFailed(db, importId, { failure: 'The import failed on the server; nothing was written. Send it again.' }).catch(() => undefined);
      else await repo.markQueued(db, importId).catch(() => undefined);
      throw error;
    } finally {
      this.progress.delete(importId);
    }
  }
}
