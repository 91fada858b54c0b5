import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';

/** Deletes a delivery file's stored bytes after its record is gone (queued in the deleting transaction). */
export const DeleteStoredFileJob = defineJob('storage.delete', Type.Object({ key: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }));

/** The products module's job handlers. Deleting twice is fine, so a job run again does no harm. */
export function registerProductJobs(runner: JobRunner, storage: PrivateStorage): void {
  runner.handle(DeleteStoredFileJob, async ({ payload }) => {
    await storage.delete(payload.key);
    return { deleted: payload.key };
  });
}
