import { sql } from 'kysely';
import type { Executor, Tx } from '../db/transaction.js';
import { onCommit } from '../db/transaction.js';
import { jobQueueName, notifyJobsEnqueued } from './queue.js';

export interface NewJob {
  kind: string;
  /** The workspace the job works for (null for service-wide jobs such as sign-in e-mails). */
  workspaceId: number | null;
  payload: Record<string, unknown>;
  /** Not before this time (default: now). */
  runAfter?: Date;
  /** Give up after this many attempts (default 5). */
  maxAttempts?: number;
}

export interface ClaimedJob {
  id: number;
  kind: string;
  workspace_id: number | null;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  created_at: Date;
}

/**
 * Enqueues jobs in the caller's transaction: they exist only if the change that caused them
 * commits, and the runners of this process are woken right after that commit. Only job
 * definitions call this (`SomeJob.enqueue`), after checking the payload.
 */
export async function enqueueJobs(tx: Tx, jobs: NewJob[]): Promise<number[]> {
  if (jobs.length === 0) return [];
  const queue = jobQueueName();
  const rows = await tx
    .insertInto('jobs')
    .values(
      jobs.map((job) => ({
        queue,
        kind: job.kind,
        workspace_id: job.workspaceId,
        payload: JSON.stringify(job.payload),
        ...(job.runAfter ? { run_after: job.runAfter } : {}),
        ...(job.maxAttempts ? { max_attempts: job.maxAttempts } : {}),
      })),
    )
    .returning('id')
    .execute();
  onCommit(tx, notifyJobsEnqueued);
  return rows.map((r) => Number(r.id));
}

/** Whether a job of this kind is waiting or running in this process's queue. */
export async function pendingJobExists(db: Executor, kind: string): Promise<boolean> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.lit(1).as('one'))
    .where('queue', '=', jobQueueName())
    .where('kind', '=', kind)
    .where('state', 'in', ['queued', 'running'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}


/**
 * Claims up to `limit` jobs of the given kinds for `worker`: due queued jobs, and running jobs
 * whose lease has run out (their worker died). One short statement; SKIP LOCKED lets several
 * instances claim at once without waiting on or taking each other's jobs. A claimed job is
 * `running` with a lease, and its attempt is counted before it runs.
 */
export async function claimJobs(db: Executor, worker: string, leases: Map<string, number>, limit: number): Promise<ClaimedJob[]> {
  const kinds = [...leases.keys()];
  if (kinds.length === 0 || limit <= 0) return [];
  const queue = jobQueueName();
  const result = await sql<ClaimedJob>`
    update jobs j set state = 'running', attempts = j.attempts + 1,
      lease_until = now() + make_interval(secs => (select l.seconds from unnest(${kinds}::text[], ${[...leases.values()]}::int[]) as l(kind, seconds) where l.kind = j.kind)),
      locked_by = ${worker}, updated_at = now()
    where j.id in (
      select id from jobs
      where queue = ${queue} and kind = any(${kinds}::text[])
        -- A lease that ran out while its own worker still runs the job (a long transaction on the
        -- embedded database cannot renew it) is not taken by that worker a second time.
        and ((state = 'queued' and run_after <= now()) or (state = 'running' and lease_until < now() and locked_by <> ${worker}))
      order by run_after, id
      limit ${limit}
      for update skip locked)
    returning j.id, j.kind, j.workspace_id, j.payload, j.attempts, j.max_attempts, j.created_at`.execute(db);
  return result.rows.map((r) => ({ ...r, id: Number(r.id) })).sort((a, b) => a.id - b.id);
}

/** A finished job as completeJobs records it. */
export interface Completion {
  id: number;
  /** The handler's answer (kept as the job's result), or undefined. */
  result: unknown;
  /** Empty the payload (jobs whose payload names a secret or personal data). */
  purge: boolean;
}

/**
 * Records jobs as succeeded, in one statement, where this worker still holds them (a job whose lease ran out and was
 * claimed elsewhere is left to its new worker).
 */
export async function completeJobs(db: Executor, worker: string, done: readonly Completion[]): Promise<void> {
  if (done.length === 0) return;
  const rows = JSON.stringify(done.map((d) => ({ id: d.id, result: d.result === undefined ? null : d.result, purge: d.purge })));
  await sql`
    update jobs j set state = 'succeeded', result = v.result, lease_until = null, finished_at = now(), updated_at = now(), last_error = null,
      payload = case when v.purge then '{}'::jsonb else j.payload end
    from jsonb_to_recordset(${rows}::jsonb) as v(id bigint, result jsonb, purge boolean)
    where j.id = v.id and j.state = 'running' and j.locked_by = ${worker}`.execute(db);
}

/** Records a failed attempt: again at `retryAt`, or given up when it is null (and then, with `purge`, its payload emptied). */
export async function failJob(db: Executor, id: number, worker: string, error: string, retryAt: Date | null, purge = false): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      state: retryAt ? 'queued' : 'failed',
      last_error: error.slice(0, 2000),
      lease_until: null,
      updated_at: new Date(),
      ...(retryAt ? { run_after: retryAt } : { finished_at: new Date(), ...(purge ? { payload: '{}' } : {}) }),
    })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('locked_by', '=', worker)
    .execute();
}

/** Gives running jobs back (shutdown): due again at once, the attempt not counted. */
export async function releaseJobs(db: Executor, ids: number[], worker: string): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update jobs set state = 'queued', attempts = greatest(attempts - 1, 0), lease_until = null, locked_by = null, run_after = now(), updated_at = now()
    where id = any(${ids}::bigint[]) and state = 'running' and locked_by = ${worker}`.execute(db);
}

/** Extends the lease of a long job so no other worker takes it over while it still runs. */
export async function extendLease(db: Executor, id: number, worker: string, leaseSeconds: number): Promise<void> {
  await sql`update jobs set lease_until = now() + make_interval(secs => ${leaseSeconds}) where id = ${id} and state = 'running' and locked_by = ${worker}`.execute(db);
}

/** Jobs waiting (due or not) and running, per kind, for the metrics. */
export async function queueDepth(db: Executor): Promise<Array<{ kind: string; state: string; n: number }>> {
  const result = await sql<{ kind: string; state: string; n: number }>`
    select kind, state, count(*)::int as n from jobs where queue = ${jobQueueName()} and state in ('queued', 'running') group by kind, state`.execute(db);
  return result.rows;
}

/** Deletes finished jobs older than `days` (their effects are recorded elsewhere). */
export async function deleteFinishedJobs(db: Executor, days: number): Promise<number> {
  const result = await sql`delete from jobs where state in ('succeeded', 'failed') and finished_at < now() - make_interval(days => ${days})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
