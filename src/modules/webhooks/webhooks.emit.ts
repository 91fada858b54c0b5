import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { onCommit, type Tx } from '../../platform/db/transaction.js';
import * as repo from './webhooks.repo.js';
import { type SubscribableEventType, WEBHOOK_EVENTS, type WebhookEventData } from './webhooks.events.js';

/** `evt_` and 128 random bits: the event's id in the body and the `webhook-id` header (receivers deduplicate on it). */
export const newEventId = () => `evt_${randomBytes(16).toString('base64url')}`;

// Wakes the relays of this process after a commit that wrote events (the jobs queue does the same).
const wake = new EventEmitter();
wake.setMaxListeners(0);

export function onWebhookEventsWritten(listener: () => void): () => void {
  wake.on('events', listener);
  return () => wake.off('events', listener);
}

/**
 * Records webhook events of one type in the caller's transaction: one statement, which writes
 * the events only while an enabled endpoint of the workspace wants the type (so a workspace
 * without webhooks pays one index probe). The events carry this instance's job queue (JOBS_QUEUE):
 * relays of that queue alone fan them out. They are sent after the commit, never for a change
 * that rolls back, and they survive a crash once committed. A payload that does not match its
 * event's schema is a programming error and rolls the change back.
 */
export async function emitWebhookEvents<T extends SubscribableEventType>(tx: Tx, workspaceId: number, type: T, events: ReadonlyArray<WebhookEventData<T>>): Promise<void> {
  if (events.length === 0) return;
  const definition = WEBHOOK_EVENTS[type];
  for (const payload of events) {
    if (!definition.check.Check(payload)) {
      const first = definition.check.Errors(payload).First();
      throw new Error(`A "${type}" webhook event does not match its schema (${first ? `${first.path || '/'}: ${first.message}` : 'invalid'})`);
    }
  }
  const written = await repo.insertWantedEvents(tx, workspaceId, type, events.map((payload) => ({ event_id: newEventId(), data: payload })));
  if (written > 0) onCommit(tx, () => wake.emit('events'));
}

/**
 * Whether an enabled endpoint of the workspace wants events of this type now: a writer of many events at once (a
 * large import) asks first and skips building them when nobody listens. `emitWebhookEvents` checks again itself.
 */
export const wantsWebhookEvents = (tx: Tx, workspaceId: number, type: SubscribableEventType): Promise<boolean> => repo.wantsEvents(tx, workspaceId, type);

/** One event: `emitWebhookEvent(tx, scope.workspaceId, 'customer.removed', { … })`. */
export const emitWebhookEvent = <T extends SubscribableEventType>(tx: Tx, workspaceId: number, type: T, event: WebhookEventData<T>) =>
  emitWebhookEvents(tx, workspaceId, type, [event]);
