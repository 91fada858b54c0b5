import type { JobRunner } from '../jobs/runner.js';
import { PermanentJobError } from '../jobs/runner.js';
import type { PrivateStorage } from './storage.js';

export const STORAGE_DELETE_JOB = 'storage.delete';

/** Deletes stored objects after the records that named them are gone (idempotent: deleting twice is fine). */
export function registerStorageJobs(runner: JobRunner, storage: PrivateStorage): void {
  runner.register(STORAGE_DELETE_JOB, async (job) => {
    const key = (job.payload as { key?: unknown }).key;
    if (typeof key !== 'string') throw new PermanentJobError('storage.delete needs a key');
    await storage.delete(key);
    return { deleted: key };
  });
}
