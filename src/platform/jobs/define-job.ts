import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Tx } from '../db/transaction.js';
import { enqueueJobs, pendingJobExists } from './jobs.repo.js';

/** How the runner treats a kind of job; the defaults suit a short, retryable effect. */
export interface JobOptions {
  /** Seconds a claim lasts; the runner renews it while the handler runs. Default 300. */
  leaseSeconds?: number;
  /** Delay before attempt n+1 after attempt n failed. Default 1, 2, 4, 8… minutes, at most one hour. */
  backoffMs?: (attempt: number) => number;
  /** Empty the payload once the job has finished (sent e-mail: nothing of it is kept for the retention days). Default false. */
  purgePayload?: boolean;
  /** Give up after this many attempts. Default 5. */
  maxAttempts?: number;
}

export interface EnqueueOptions {
  /** The workspace the job works for; null for service-wide jobs (sign-in e-mails, provider reports). */
  workspaceId: number | null;
  /** Not before this time (default: now). */
  runAfter?: Date;
}

/**
 * One kind of job, declared once like an error code: its name, the TypeBox schema of its payload
 * and how it runs. Producers queue it through the definition (never by its name), so a payload that
 * does not match is refused where it is written; the runner checks the stored payload again
 * before the handler sees it.
 */
export interface JobDefinition<S extends TSchema = TSchema> {
  readonly kind: string;
  readonly payload: S;
  readonly options: Readonly<JobOptions>;
  /** Queues the job in the caller's transaction: it exists only if that transaction commits. */
  enqueue(tx: Tx, payload: Static<S>, options: EnqueueOptions): Promise<number>;
  enqueueMany(tx: Tx, payloads: ReadonlyArray<Static<S>>, options: EnqueueOptions): Promise<number[]>;
  /**
   * Queues the job unless one of its kind is already waiting or running (housekeeping such as a fold, where one
   * pending run covers every request); the job's id, or null when one was pending.
   */
  enqueueUnlessPending(tx: Tx, payload: Static<S>, options: EnqueueOptions): Promise<number | null>;
  /** Why a payload does not match the schema (the first difference), or null when it does. */
  mismatch(payload: unknown): string | null;
}

const catalogue = new Map<string, JobDefinition>();
const KIND = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+$/;

/** Declares a job kind (once per name): `defineJob('partners.agreement-live', Type.Object({ agreementId: Type.Integer() }))`. */
export function defineJob<S extends TSchema>(kind: string, payload: S, options: JobOptions = {}): JobDefinition<S> {
  if (!KIND.test(kind)) throw new Error(`The job kind "${kind}" is not of the form "<area>.<name>"`);
  if (catalogue.has(kind)) throw new Error(`The job kind "${kind}" is defined twice`);
  const check = TypeCompiler.Compile(payload);
  const mismatch = (value: unknown): string | null => {
    if (check.Check(value)) return null;
    const first = check.Errors(value).First();
    return first ? `${first.path || '/'}: ${first.message}` : 'does not match';
  };
  const enqueueMany = async (tx: Tx, payloads: ReadonlyArray<Static<S>>, enqueue: EnqueueOptions): Promise<number[]> => {
    for (const value of payloads) {
      const why = mismatch(value);
      // A programming error: the producer and the definition disagree. Tests catch it, the transaction rolls back.
      if (why) throw new Error(`A "${kind}" job was queued with a payload that does not match its schema (${why})`);
    }
    return enqueueJobs(
      tx,
      payloads.map((value) => ({
        kind,
        workspaceId: enqueue.workspaceId,
        payload: value as Record<string, unknown>,
        ...(enqueue.runAfter ? { runAfter: enqueue.runAfter } : {}),
        ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
      })),
    );
  };
  const definition: JobDefinition<S> = {
    kind,
    payload,
    options: Object.freeze({ ...options }),
    enqueueMany,
    enqueue: async (tx, value, enqueue) => (await enqueueMany(tx, [value], enqueue))[0]!,
    enqueueUnlessPending: async (tx, value, enqueue) => ((await pendingJobExists(tx, kind)) ? null : (await enqueueMany(tx, [value], enqueue))[0]!),
    mismatch,
  };
  catalogue.set(kind, definition as unknown as JobDefinition);
  return definition;
}

/** Every declared kind (docs, start-up checks). */
export const jobDefinitions = (): JobDefinition[] => [...catalogue.values()];
