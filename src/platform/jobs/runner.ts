import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Db } from '../db/database.js';
import { Batcher } from '../db/batcher.js';
import { redactText } from '../logging/redact.js';
import type { JobDefinition, JobOptions } from './define-job.js';
import * as repo from './jobs.repo.js';
import { onJobsEnqueued } from './queue.js';

export interface JobContext<P = unknown> {
  id: number;
  kind: string;
  workspaceId: number | null;
  /** Checked against the definition's schema before the handler runs. */
  payload: P;
  /** 1 for the first run; a job whose worker died is run again with the next number. */
  attempt: number;
  maxAttempts: number;
}

export type JobHandler<P = unknown> = (job: JobContext<P>) => Promise<unknown>;

/** What a handler's registration may set from configuration (an import's lease), over the definition's options. */
export type HandlerOptions = Pick<JobOptions, 'leaseSeconds' | 'backoffMs'>;

type RunOptions = Required<Pick<JobOptions, 'leaseSeconds' | 'backoffMs' | 'purgePayload'>>;

/** A failure that no retry can fix (bad payload, a record that is gone): the job fails at once. */
export class PermanentJobError extends Error {}

/** The workspace a workspace-bound job was queued for; a job queued without one fails at once. */
export function workspaceOf(job: Pick<JobContext, 'kind' | 'workspaceId'>): number {
  if (job.workspaceId === null) throw new PermanentJobError(`a "${job.kind}" job needs the workspace it was queued for`);
  return job.workspaceId;
}

export interface RunnerLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export interface RunnerOptions {
  /** How often to look for due jobs that no commit in this process announced (retries, other instances' work). */
  pollIntervalMs?: number;
  /** Handlers running at once in this process. */
  concurrency?: number;
  /** Finished jobs are kept this many days, then deleted. */
  retentionDays?: number;
  log?: RunnerLogger;
}

export interface JobOutcomeListener {
  (kind: string, outcome: 'succeeded' | 'retried' | 'failed', durationMs: number): void;
}

const defaultBackoff = (attempt: number) => Math.min(60_000 * 2 ** (attempt - 1), 3_600_000);

/**
 * Runs jobs of the kinds registered with it. Jobs are claimed with a lease (SKIP LOCKED), run
 * outside any transaction, renewed while they run, and retried with back-off; a job whose
 * worker died is claimed again when its lease ends, so handlers must be idempotent. Several
 * instances (and several runners) may share a database: a job runs in one place at a time.
 */
export class JobRunner {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly handlers = new Map<string, { definition: JobDefinition; run: JobHandler; options: RunOptions }>();
  private readonly inFlight = new Map<number, { kind: string; done: Promise<void> }>();
  private readonly listeners: JobOutcomeListener[] = [];
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private draining: Promise<void> | undefined;
  /** A kick arrived while claiming: look again afterwards, for this many free slots. */
  private againMinFree: number | undefined;
  private stopped = true;
  private lastCleanup = 0;
  private readonly maintenance: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private readonly pollIntervalMs: number;
  private readonly concurrency: number;
  private readonly retentionDays: number;
  /**
   * Records jobs as succeeded: completions that arrive while the previous statement runs are recorded together in the
   * next one. A failed statement fails every job of its batch, as a failed single completion did (the job runs again).
   */
  private readonly completions = new Batcher<repo.Completion, void>(async (done) => {
    await repo.completeJobs(this.db, this.workerId, done);
    return done.map(() => undefined);
  });

  constructor(
    private readonly db: Db,
    private readonly options: RunnerOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 2_000;
    this.concurrency = options.concurrency ?? 4;
    this.retentionDays = options.retentionDays ?? 7;
  }

  /** Runs jobs of `definition` with `run`, which receives the payload typed and already checked against the schema. */
  handle<S extends TSchema>(definition: JobDefinition<S>, run: JobHandler<Static<S>>, overrides: HandlerOptions = {}): void {
    const { kind } = definition;
    if (this.handlers.has(kind)) throw new Error(`A handler for job kind "${kind}" is registered twice`);
    const options = { ...definition.options, ...overrides };
    this.handlers.set(kind, {
      definition: definition as unknown as JobDefinition,
      run: run as JobHandler,
      options: { leaseSeconds: options.leaseSeconds ?? 300, backoffMs: options.backoffMs ?? defaultBackoff, purgePayload: options.purgePayload ?? false },
    });
  }

  /** Housekeeping run about once an hour by each runner (expired records, old finished jobs). */
  addMaintenance(name: string, run: () => Promise<unknown>): void {
    this.maintenance.push({ name, run });
  }

  onOutcome(listener: JobOutcomeListener): void {
    this.listeners.push(listener);
  }

  get kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** Jobs waiting (due or not) and running in this instance's queue, per kind and state (the metrics). */
  queueDepth(): Promise<Array<{ kind: string; state: string; n: number }>> {
    return repo.queueDepth(this.db);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = onJobsEnqueued(() => this.kick());
    this.timer = setInterval(() => this.kick(), this.pollIntervalMs);
    this.timer.unref();
    // Renew the leases of running jobs at a third of the shortest lease, so a long job keeps its claim.
    const shortest = Math.min(300, ...[...this.handlers.values()].map((h) => h.options.leaseSeconds));
    this.renewTimer = setInterval(() => void this.renewLeases(), (shortest * 1000) / 3);
    this.renewTimer.unref();
    this.kick();
  }

  /**
   * Looks for due jobs now (or once more after the current look), when at least `minFree` slots are free. Never
   * throws. A finished job asks for a quarter of the slots (below), the poll and new jobs for one.
   */
  kick(minFree = 1): void {
    if (this.stopped) return;
    if (this.draining) {
      this.againMinFree = Math.min(this.againMinFree ?? minFree, minFree);
      return;
    }
    this.draining = this.claimAndStart(minFree)
      .catch((error: unknown) => this.options.log?.warn({ err: errorInfo(error) }, 'job claim failed; retrying at the next poll'))
      .finally(() => {
        this.draining = undefined;
        const again = this.againMinFree;
        this.againMinFree = undefined;
        if (again !== undefined && !this.stopped) this.kick(again);
      });
  }

  private async claimAndStart(minFree: number): Promise<void> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0 || (this.inFlight.size > 0 && free < minFree)) return;
    const leases = new Map([...this.handlers].map(([kind, h]) => [kind, h.options.leaseSeconds]));
    const jobs = await repo.claimJobs(this.db, this.workerId, leases, free);
    for (const job of jobs) {
      const done = this.execute(job).finally(() => {
        this.inFlight.delete(job.id);
        // A slot is free: there may be more work. While others run, claim once a quarter of the slots is free
        // rather than one job per finished job: under a stream of short jobs (webhook deliveries) that is one claim
        // statement per several jobs. The poll and newly queued jobs still fill any free slot (a slow job holding
        // most slots never keeps a new one waiting longer than the poll), and with nothing running all are free.
        this.kick(Math.ceil(this.concurrency / 4));
      });
      this.inFlight.set(job.id, { kind: job.kind, done });
    }
    await this.maybeCleanup();
  }

  private async execute(job: repo.ClaimedJob): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    const started = Date.now();
    if (job.attempts > job.max_attempts) {
      // Claimed again after its worker died on the last allowed attempt.
      await repo.failJob(this.db, job.id, this.workerId, `gave up after ${job.max_attempts} attempts (the last worker stopped responding)`, null, handler.options.purgePayload);
      this.emit(job.kind, 'failed', 0);
      return;
    }
    try {
      // Stored by an older version, or written by hand: no retry can make it match.
      const stale = handler.definition.mismatch(job.payload);
      if (stale) throw new PermanentJobError(`the stored payload no longer matches the "${job.kind}" job's schema (${stale})`);
      const result = await handler.run({
        id: job.id,
        kind: job.kind,
        workspaceId: job.workspace_id,
        payload: job.payload,
        attempt: job.attempts,
        maxAttempts: job.max_attempts,
      });
      await this.completions.add({ id: job.id, result, purge: handler.options.purgePayload });
      this.emit(job.kind, 'succeeded', Date.now() - started);
    } catch (error) {
      const message = redactText(error instanceof Error ? error.message : String(error));
      const permanent = error instanceof PermanentJobError;
      const retryAt = permanent || job.attempts >= job.max_attempts ? null : new Date(Date.now() + handler.options.backoffMs(job.attempts));
      this.options.log?.[retryAt ? 'warn' : 'error']({ job: { id: job.id, kind: job.kind, attempt: job.attempts }, err: errorInfo(error) }, retryAt ? 'job failed; will retry' : 'job failed; giving up');
      await repo.failJob(this.db, job.id, this.workerId, message, retryAt, handler.options.purgePayload).catch((e: unknown) => this.options.log?.error({ err: errorInfo(e) }, 'could not record a job failure'));
      this.emit(job.kind, retryAt ? 'retried' : 'failed', Date.now() - started);
    }
  }

  private emit(kind: string, outcome: 'succeeded' | 'retried' | 'failed', durationMs: number): void {
    for (const listener of this.listeners) listener(kind, outcome, durationMs);
  }

  private async renewLeases(): Promise<void> {
    for (const [id, { kind }] of this.inFlight) {
      const leaseSeconds = this.handlers.get(kind)?.options.leaseSeconds ?? 300;
      await repo.extendLease(this.db, id, this.workerId, leaseSeconds).catch(() => undefined);
    }
  }

  private async maybeCleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < 3_600_000) return;
    this.lastCleanup = Date.now();
    await repo.deleteFinishedJobs(this.db, this.retentionDays).catch(() => undefined);
    for (const task of this.maintenance) {
      await task.run().catch((error: unknown) => this.options.log?.warn({ task: task.name, err: errorInfo(error) }, 'maintenance task failed'));
    }
  }

  /** Resolves once nothing runs and no due job of a registered kind is left (tests). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.draining) await this.draining;
      if (this.inFlight.size > 0) {
        await Promise.all([...this.inFlight.values()].map((f) => f.done));
        continue;
      }
      // Look once more: something may have become due, or been enqueued meanwhile.
      this.kick();
      if (this.draining) await this.draining;
      if (this.inFlight.size === 0 && !this.draining) return;
    }
  }

  /**
   * Stops claiming; waits up to `graceMs` for running jobs to finish, then gives the rest back
   * (due again at once for another instance, their attempt not counted).
   */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.draining) await this.draining;
    const running = [...this.inFlight.values()].map((f) => f.done);
    const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(running), timeout]);
    const left = [...this.inFlight.keys()];
    if (left.length > 0) {
      this.options.log?.info({ jobs: left }, 'releasing running jobs at shutdown');
      await repo.releaseJobs(this.db, left, this.workerId).catch(() => undefined);
    }
  }
}

function errorInfo(error: unknown): Record<string, unknown> {
  const e = error as { message?: unknown; code?: unknown };
  return { message: redactText(typeof e?.message === 'string' ? e.message : String(error)), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}
