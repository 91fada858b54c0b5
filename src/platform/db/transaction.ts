import type { Transaction } from 'kysely';
import type { DB } from './schema.js';
import type { Db } from './database.js';

export type Tx = Transaction<DB>;
/** Either the root handle or an open transaction: what repositories accept. */
export type Executor = Db | Tx;

/**
 * Services own transactions: everything written inside commits together or not
 * at all. Called with an open transaction (operator tooling composing use
 * cases), the work joins it instead of nesting.
 */
export function inTransaction<T>(db: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Tx);
  return db.transaction().execute(work);
}
