import { EventEmitter } from 'node:events';
import { onCommit, type Executor, type Tx } from '../../platform/db/transaction.js';

/**
 * A serial whose state the licensing runtime reads changed in this process: its status or
 * validity window, or a seat taken or released. The licensing runtime caches validate's answer
 * for a few seconds; this signal lets it forget a changed serial at once on this instance (other
 * instances see the change when their short cache lifetime ends).
 */
export interface SerialChange {
  workspaceId: number;
  serialIds: readonly number[];
}

const changes = new EventEmitter();
changes.setMaxListeners(0);

/**
 * Announces that the serials changed. Inside a transaction it is announced twice: at once (so a
 * cached answer is dropped before the write is visible) and again after the commit (so an answer
 * read from the database while the transaction was open is dropped too). Listeners must not throw.
 */
export function announceSerialChanges(db: Executor, workspaceId: number, serialIds: readonly number[]): void {
  if (serialIds.length === 0) return;
  const change: SerialChange = { workspaceId, serialIds };
  changes.emit('change', change);
  if (db.isTransaction) onCommit(db as Tx, () => changes.emit('change', change));
}

/** Subscribes to serial changes of this process; returns the unsubscribe function. */
export function onSerialChanges(listener: (change: SerialChange) => void): () => void {
  changes.on('change', listener);
  return () => changes.off('change', listener);
}
