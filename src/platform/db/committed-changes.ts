import { EventEmitter } from 'node:events';
import type { DB } from './schema.js';
import { onCommit, type Tx } from './transaction.js';

/** Rows of `table` in workspace `workspaceId` changed in a transaction of this process that has committed. */
export interface CommittedChange {
  table: keyof DB;
  workspaceId: number;
}

// In-process only, as the job queue's and the webhook relays' wake-ups: a per-instance cache learns here of the
// changes its own instance made, at once. Other instances' changes reach it through its own expiry.
const changes = new EventEmitter();
changes.setMaxListeners(0);

/**
 * Announces, once `tx` commits (never if it rolls back), that rows of `table` in the workspace changed, so caches of
 * this process drop what they hold of them before the change is answered to its caller.
 */
export function announceOnCommit(tx: Tx, table: keyof DB, workspaceId: number): void {
  onCommit(tx, () => changes.emit('change', { table, workspaceId } satisfies CommittedChange));
}

/** Listens to committed changes; returns the function that stops listening. The listener must not throw. */
export function onCommittedChange(listener: (change: CommittedChange) => void): () => void {
  changes.on('change', listener);
  return () => changes.off('change', listener);
}
