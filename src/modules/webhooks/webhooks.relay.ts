import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import type { RunnerLogger } from '../../platform/jobs/runner.js';
import { WebhookDeliveryJob } from './webhooks.delivery.js';
import { onWebhookEventsWritten } from './webhooks.emit.js';
import * as repo from './webhooks.repo.js';

const BATCH = 500;
const ENQUEUE_CHUNK = 1_000;

/**
 * The outbox relay: events that emitting transactions committed become one delivery per endpoint
 * that wants them, each queued as a delivery job, in one transaction per batch (so an event is
 * fanned out exactly once, by whichever instance claims it). Woken by commits in this process and
 * by a poll, which finds what other instances wrote and what a crashed process left.
 */
export class WebhookRelay {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly options: { pollIntervalMs: number; log?: RunnerLogger },
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = onWebhookEventsWritten(() => this.kick());
    this.timer = setInterval(() => this.kick(), this.options.pollIntervalMs);
    this.timer.unref();
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => this.options.log?.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'webhook relay failed; retrying at the next poll'))
      .finally(() => {
        this.draining = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped && (await this.relayBatch()) === BATCH);
  }

  /** Fans out one batch; answers how many events it took. */
  async relayBatch(): Promise<number> {
    return inTransaction(this.db, async (tx) => {
      const events = await repo.claimPendingEvents(tx, BATCH);
      if (events.length === 0) return 0;
      const deliveries = await repo.fanOut(tx, events);
      const byWorkspace = new Map<number, Array<{ deliveryId: number; schedule: number }>>();
      for (const d of deliveries) {
        const list = byWorkspace.get(d.workspace_id) ?? [];
        list.push({ deliveryId: d.id, schedule: d.schedule });
        byWorkspace.set(d.workspace_id, list);
      }
      for (const [workspaceId, payloads] of byWorkspace) {
        for (let i = 0; i < payloads.length; i += ENQUEUE_CHUNK) await WebhookDeliveryJob.enqueueMany(tx, payloads.slice(i, i + ENQUEUE_CHUNK), { workspaceId });
      }
      return events.length;
    });
  }

  get busy(): boolean {
    return this.draining !== undefined;
  }

  /** Resolves once no relay pass runs (tests). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    await this.idle();
  }
}
