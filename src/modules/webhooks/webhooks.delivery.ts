import { Type } from '@sinclair/typebox';
import type { Db } from '../../platform/db/database.js';
import { Batcher } from '../../platform/db/batcher.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { defineJob } from '../../platform/jobs/define-job.js';
import { enqueueEmails } from '../../platform/mail/mail.js';
import { type AllowList, checkTarget, httpAllowed, RefusedTarget, type Resolver } from '../../platform/net/address-policy.js';
import { listMembers } from '../workspaces/index.js';
import { FAILURE_WINDOW_DAYS, WEBHOOK_ENDPOINT_DISABLED_EMAIL } from './webhooks.emails.js';
import { WEBHOOK_EVENTS, type WebhookEventType } from './webhooks.events.js';
import type { PostOutcome, WebhookClient } from './webhooks.http.js';
import * as repo from './webhooks.repo.js';
import { openSecret, signatureHeaders } from './webhooks.signing.js';

/** Retries after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (each with ±10 % jitter); then the delivery has failed. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const DEFAULT_TIMEOUT_MS = 15_000;
const USER_AGENT = 'Patchbay-Webhooks/1 (+https://www.standardwebhooks.com/)';

/**
 * One attempt of one delivery. `schedule` names the attempt: a redelivery moves the delivery's
 * schedule on, so an attempt queued before it finds itself stale and does nothing. HTTP failures
 * are not job failures: the handler records them and queues the next attempt on the webhook
 * schedule itself; the runner's own retries are for the database failing under it.
 */
export const WebhookDeliveryJob = defineJob(
  'webhooks.deliver',
  Type.Object({ deliveryId: Type.Integer({ minimum: 1 }), schedule: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  { maxAttempts: 5, backoffMs: (attempt) => 10_000 * attempt },
);

export interface DeliverySettings {
  encryptionKey: Buffer;
  allowList: AllowList;
  resolve: Resolver;
  retryScheduleMs: readonly number[];
  /** Judges the failure window (tests move it); retries are timed by the real clock. */
  clock: () => Date;
  onOutcome?: (attempt: { workspaceId: number; endpointId: number; ok: boolean; durationMs: number }) => void;
}

const jittered = (ms: number) => Math.round(ms * (0.9 + Math.random() * 0.2));

export class Deliverer {
  /** Attempts that start while the previous ones are being read are read together (one statement). */
  private readonly attempts = new Batcher<{ deliveryId: number; schedule: number }, repo.AttemptRecord | undefined>(async (keys) => {
    const found = new Map((await repo.attemptsOf(this.db, [...new Set(keys.map((k) => k.deliveryId))])).map((a) => [a.id, a]));
    // An attempt whose schedule is no longer the delivery's current one is stale.
    return keys.map((k) => {
      const current = found.get(k.deliveryId);
      return current?.schedule === k.schedule ? current : undefined;
    });
  });
  /** Successes that arrive while the previous ones are being recorded are recorded together (one statement). */
  private readonly successes = new Batcher<repo.Success, boolean>(async (items) => {
    const recorded = await repo.recordSuccesses(this.db, items);
    return items.map((s) => recorded.has(`${s.deliveryId}:${s.schedule}`));
  });

  constructor(
    private readonly db: Db,
    private readonly client: WebhookClient,
    private readonly settings: DeliverySettings,
  ) {}

  async attempt(deliveryId: number, schedule: number): Promise<unknown> {
    const d = await this.attempts.add({ deliveryId, schedule });
    if (!d) return { stale: true };
    const outcome = d.enabled ? await this.send(d) : { status: null, durationMs: 0, body: null, error: 'the endpoint is disabled' };
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const retryIn = ok || !d.enabled ? null : this.settings.retryScheduleMs[d.cycle_attempts];
    const nextAttemptAt = retryIn === undefined || retryIn === null ? null : new Date(Date.now() + jittered(retryIn));
    const now = this.settings.clock();
    // The common case, a success, is a share of one statement; a failure may queue a retry, disable the endpoint and e-mail, together.
    const recorded =
      ok && d.enabled
        ? await this.successes.add({ deliveryId: d.id, schedule, statusCode: outcome.status!, durationMs: outcome.durationMs, body: outcome.body })
        : await this.recordFailure(d, schedule, outcome, nextAttemptAt, now);
    if (d.enabled) this.settings.onOutcome?.({ workspaceId: d.workspace_id, endpointId: d.endpoint_id, ok, durationMs: outcome.durationMs });
    return { status: outcome.status, ok, recorded };
  }

  private recordFailure(d: repo.AttemptRecord, schedule: number, outcome: PostOutcome, nextAttemptAt: Date | null, now: Date): Promise<boolean> {
    return inTransaction(this.db, async (tx) => {
      const next = await repo.recordAttempt(tx, d.id, schedule, {
        status: nextAttemptAt ? 'retrying' : 'failed',
        statusCode: outcome.status,
        durationMs: outcome.durationMs,
        body: outcome.body,
        error: outcome.error,
        nextAttemptAt,
      });
      // A redelivery took over while this attempt ran: it owns what happens next.
      if (next === null) return false;
      if (nextAttemptAt) await WebhookDeliveryJob.enqueue(tx, { deliveryId: d.id, schedule: next }, { workspaceId: d.workspace_id, runAfter: nextAttemptAt });
      if (!d.enabled) return true;
      if (await repo.noteEndpointFailure(tx, d.endpoint_id, now, new Date(now.getTime() - FAILURE_WINDOW_DAYS * 86_400_000))) {
        const owners = (await listMembers(tx, { workspaceId: d.workspace_id })).filter((m) => m.owner);
        await enqueueEmails(tx, { workspaceId: d.workspace_id }, WEBHOOK_ENDPOINT_DISABLED_EMAIL, owners.map((o) => ({ endpointId: d.endpoint_id, accountId: o.account_id })));
      }
      return true;
    });
  }

  private async send(d: repo.AttemptRecord): Promise<PostOutcome> {
    const body = JSON.stringify({ id: d.event_id, type: d.event_type, created_at: d.event_created_at.toISOString(), workspace_id: d.workspace_id, data: d.event_data });
    const { encryptionKey, allowList, resolve } = this.settings;
    const secrets = [openSecret(encryptionKey, d.endpoint_id, d.secret_sealed)];
    if (d.previous_secret_sealed && d.previous_secret_expires_at && d.previous_secret_expires_at.getTime() > Date.now()) {
      secrets.push(openSecret(encryptionKey, d.endpoint_id, d.previous_secret_sealed));
    }
    try {
      const url = new URL(d.url);
      // Checked at every attempt: the name may resolve elsewhere now than when the endpoint was made.
      const target = await checkTarget(url, allowList, resolve);
      if (url.protocol !== 'https:' && !httpAllowed(url, allowList, target)) throw new RefusedTarget('plain http is allowed only to hosts in WEBHOOK_ALLOWED_HOSTS');
      const version = WEBHOOK_EVENTS[d.event_type as WebhookEventType]?.version ?? 1;
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'patchbay-event-version': String(version),
        ...signatureHeaders(secrets, d.event_id, body, new Date()),
      };
      return await this.client.post(url, target, body, headers);
    } catch (error) {
      if (error instanceof RefusedTarget) return { status: null, durationMs: 0, body: null, error: `refused: ${error.message}` };
      if (error instanceof TypeError) return { status: null, durationMs: 0, body: null, error: 'refused: the URL is not valid' };
      throw error;
    }
  }
}
