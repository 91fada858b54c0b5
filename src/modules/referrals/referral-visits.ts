import type { Db } from '../../platform/db/database.js';
import { insertVisits, type VisitRow } from './referrals.repo.js';

export type UserAgentClass = VisitRow['userAgentClass'];

const BOT = /bot\b|bot\/|crawl|spider|slurp|preview|fetch|facebookexternalhit|embedly|curl\/|wget\/|python-|go-http-client|okhttp|java\/|headless|lighthouse|monitor/i;
const MOBILE = /mobi|android|iphone|ipad|ipod|windows phone|blackberry|opera mini/i;
const DESKTOP = /windows nt|macintosh|mac os x|x11|linux x86_64|cros/i;

/** A coarse class of the client, all a visit keeps of its User-Agent. Bots first: many claim a browser too. */
export function userAgentClass(userAgent: string | undefined): UserAgentClass {
  if (!userAgent) return 'other';
  if (BOT.test(userAgent)) return 'bot';
  if (MOBILE.test(userAgent)) return 'mobile';
  if (DESKTOP.test(userAgent)) return 'desktop';
  return 'other';
}

export interface VisitBufferOptions {
  /** The longest a visit waits in memory before its batch is written (ms). */
  flushMs?: number;
  /** A batch this large is written at once. */
  maxBatch?: number;
  /** While the database is unreachable at most this many visits wait; beyond that the oldest are dropped. */
  maxPending?: number;
}

/**
 * Referral visits, kept in memory and written in batches: one multi-row insert at most `flushMs`
 * after the first visit of a batch arrived (or as soon as `maxBatch` are waiting), and whatever is
 * left when the app closes. Writes never overlap, so batches land in order; a failed write keeps
 * its rows for the next attempt. A redirect never waits for the database to record its visit.
 *
 * Durable within a second: `flushMs` (250) plus one insert. What a crash loses: a process killed
 * outright (SIGKILL, out of memory, power) loses the visits of its last `flushMs` and the batch in
 * flight, which the database rolls back; a stop (SIGTERM, the server's shutdown) closes the app,
 * which writes everything waiting first. The visit's 303 has been answered either way.
 */
export class ReferralVisitBuffer {
  private pending: VisitRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private stopped = false;
  private readonly flushMs: number;
  private readonly maxBatch: number;
  private readonly maxPending: number;

  constructor(
    private readonly db: Db,
    private readonly log: { warn(obj: Record<string, unknown>, msg: string): void },
    options: VisitBufferOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 250;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxPending = options.maxPending ?? 100_000;
  }

  record(visit: VisitRow): void {
    this.pending.push(visit);
    if (this.pending.length > this.maxPending) {
      const dropped = this.pending.splice(0, this.pending.length - this.maxPending);
      this.log.warn({ dropped: dropped.length }, 'referral visits dropped: the database has not accepted them for too long');
    }
    // A write in progress takes what arrived meanwhile before it ends: one more flush per click would only queue.
    if (this.pending.length >= this.maxBatch) {
      if (!this.writing) void this.flush();
    } else this.schedule();
  }

  /** Visits waiting to be written (tests and metrics). */
  get size(): number {
    return this.pending.length;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.flushMs);
    this.timer.unref();
  }

  /** Writes everything waiting now (after any write in progress); resolves once it is durable or has failed. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.pending.length === 0) return;
    this.writing = this.write().finally(() => {
      this.writing = null;
    });
    await this.writing;
  }

  private async write(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await insertVisits(this.db, batch);
      } catch (error) {
        // Back in front for the next attempt: a visit is lost only when too many wait.
        this.pending.unshift(...batch);
        this.log.warn({ err: { message: (error as Error).message }, pending: this.pending.length }, 'could not record referral visits; will retry');
        if (!this.stopped) this.schedule();
        return;
      }
    }
  }

  /** On shutdown: no more timers, and what is waiting is written before the database closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
