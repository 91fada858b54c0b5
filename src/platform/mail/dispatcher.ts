import type { Db } from '../db/database.js';
import { claimDue, markFailed, markSent } from './outbox.repo.js';
import type { MailTransport } from './transport.js';

export const MAX_ATTEMPTS = 5;
const BATCH = 20;
/** How long a claimed e-mail is reserved for its sender before another may retry it. */
const LEASE_SECONDS = 300;

/**
 * Sends queued e-mail after the transaction that queued it has committed.
 * `kick()` is called by services after commit; a slow poll picks up anything
 * left by a crash or a failed attempt (retried with exponential back-off, then
 * marked failed). Several instances may run: rows are claimed with SKIP LOCKED.
 */
export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly transport: MailTransport,
    private readonly from: string,
    private readonly log: { error(obj: unknown, msg: string): void },
    private readonly pollMs = 30_000,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Runs a drain now (or once more after the current one). Never throws. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .catch((error: unknown) => this.log.error({ err: error }, 'e-mail outbox drain failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Waits for the drain in progress (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.idle();
    await this.transport.close?.();
  }

  /** Sends every due e-mail; returns how many were sent. */
  async drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      // Claimed in one short statement; sent with no transaction open, so a slow mail server
      // never holds locks (or, on PGlite, the single connection).
      const due = await claimDue(this.db, BATCH, LEASE_SECONDS);
      for (const email of due) {
        try {
          await this.transport.send({ id: email.id, from: this.from, to: email.recipient, subject: email.subject, text: email.body_text });
          await markSent(this.db, email.id);
          sent += 1;
        } catch (error) {
          const retryAt = email.attempts >= MAX_ATTEMPTS ? null : new Date(Date.now() + 60_000 * 2 ** (email.attempts - 1));
          await markFailed(this.db, email.id, error instanceof Error ? error.message : String(error), retryAt);
        }
      }
      if (due.length < BATCH || this.stopped) return sent;
    }
  }
}
