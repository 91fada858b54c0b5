import type { ImportRunner } from '../../platform/import/import-runner.js';
import { ImportJob } from '../../platform/import/import-runner.js';
import type { JobRunner } from '../../platform/jobs/runner.js';

/**
 * The import job's handler: the shared import flow of `platform/import` runs a queued import; this
 * module owns the import resource it reports to. The lease is renewed while the import runs.
 */
export function registerImportJobs(runner: JobRunner, imports: ImportRunner): void {
  runner.handle(ImportJob, (job) => imports.runQueued(job.payload.importId, job.attempt >= job.maxAttempts), { leaseSeconds: imports.leaseSeconds });
}
