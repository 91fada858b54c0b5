import { type Selectable, sql } from 'kysely';
import type { JobsTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { JobDefinition } from './define-job.js';
import { jobQueueName } from './queue.js';

// For tests only: the one place outside the runner that reads the `jobs` table, so a test asserts
// what was queued without knowing how the queue stores it. Every read is limited to this process's
// queue (test files sharing one PostgreSQL database each work their own, see the test helpers).

export type JobRow = Selectable<JobsTable>;

export interface JobFilter {
  /** Jobs of this kind (a definition, or a kind's name for jobs of kinds no definition declares). */
  job?: JobDefinition | string;
  workspaceId?: number;
}

const kindOf = (job: JobDefinition | string) => (typeof job === 'string' ? job : job.kind);

function select(db: Executor, filter: JobFilter) {
  let query = db.selectFrom('jobs').where('queue', '=', jobQueueName());
  if (filter.job !== undefined) query = query.where('kind', '=', kindOf(filter.job));
  if (filter.workspaceId !== undefined) query = query.where('workspace_id', '=', filter.workspaceId);
  return query;
}

/** The jobs of this process's queue that match, oldest first (inside a transaction: what it has queued so far). */
export const listJobs = (db: Executor, filter: JobFilter = {}): Promise<JobRow[]> => select(db, filter).selectAll().orderBy('id').execute();

export async function countJobs(db: Executor, filter: JobFilter = {}): Promise<number> {
  const row = await select(db, filter).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export const findJob = (db: Executor, id: number): Promise<JobRow | undefined> => db.selectFrom('jobs').where('id', '=', id).selectAll().executeTakeFirst();

/** Removes jobs before they run (a test that plays a provider whose report never arrives). */
export async function discardJobs(db: Executor, ids: number[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('jobs').where('id', 'in', ids).where('state', '=', 'queued').execute();
}

/** Makes every queued job of this queue due now, as if its back-off had elapsed. */
export async function makeJobsDue(db: Executor): Promise<void> {
  await sql`update jobs set run_after = now() - interval '1 second' where state = 'queued' and queue = ${jobQueueName()}`.execute(db);
}

/** Stages a job as claimed by `worker` with a lease that has run out (its worker died) or is still running. */
export async function stageClaim(db: Executor, id: number, claim: { worker: string; attempts: number; leaseExpired: boolean }): Promise<void> {
  const lease = claim.leaseExpired ? sql`now() - interval '1 second'` : sql`now() + interval '5 minutes'`;
  await sql`update jobs set state = 'running', attempts = ${claim.attempts}, locked_by = ${claim.worker}, lease_until = ${lease} where id = ${id}`.execute(db);
}

/** Tries to finish a job as `worker` would; true when the row changed (a worker that lost its lease cannot). */
export async function finishAs(db: Executor, id: number, worker: string): Promise<boolean> {
  const updated = await db.updateTable('jobs').set({ state: 'failed' }).where('id', '=', id).where('locked_by', '=', worker).executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** Replaces a queued job's payload, as an older version of the code might have written it. */
export async function storePayload(db: Executor, id: number, payload: unknown): Promise<void> {
  await db.updateTable('jobs').set({ payload: JSON.stringify(payload) }).where('id', '=', id).execute();
}
