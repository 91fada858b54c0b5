import type { Transaction } from 'kysely';
import type { DB } from './schema.js';
import type { Db } from './database.js';

export type Tx = Transaction<DB>;
/** Either the root handle or an open transaction: what repositories accept. */
export type Executor = Db | Tx;

const afterCommit = new WeakMap<Tx, Array<() => void>>();

/**
 * Runs `effect` once the transaction `tx` has committed (never if it rolls back). Used for
 * effects that must not happen for work that does not persist: waking the job runner after
 * jobs were enqueued, say. Effects run synchronously after commit and must not throw.
 */
export function onCommit(tx: Tx, effect: () => void): void {
  const effects = afterCommit.get(tx);
  if (effects) effects.push(effect);
  else afterCommit.set(tx, [effect]);
}

/**
 * Services own transactions: everything written inside commits together or not
 * at all. Called with an open transaction (operator tooling composing use
 * cases), the work joins it instead of nesting, and its after-commit effects
 * wait for the outer commit.
 */
export async function inTransaction<T>(db: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Tx);
  let committed: Tx | undefined;
  const result = await db.transaction().execute(async (tx) => {
    committed = tx;
    return work(tx);
  });
  const effects = committed ? afterCommit.get(committed) : undefined;
  if (effects) {
    afterCommit.delete(committed!);
    for (const effect of effects) effect();
  }
  return result;
}
