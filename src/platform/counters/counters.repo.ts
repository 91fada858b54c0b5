import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Executor } from '../db/transaction.js';

// The counter deltas' own statements (migrations 0027 and 0030): folding them, counting them, vacuuming them.

/** Deltas folded per statement and kind: a short transaction even after a burst of sales. */
export const FOLD_BATCH = 20_000;

/** Folds up to `maxRows` deltas of each kind; 0 when there were none or another folder holds the lock. */
export async function foldCounters(db: Executor, maxRows = FOLD_BATCH): Promise<number> {
  const result = await sql<{ n: number }>`select fold_counters(${maxRows}::int) as n`.execute(db);
  return result.rows[0]?.n ?? 0;
}

/** Folded deltas after which the folder vacuums the delta tables. */
export const VACUUM_AFTER = 5_000;

/** Outside any transaction (VACUUM cannot run in one); skips a table another session locks. */
export async function vacuumCounterDeltas(db: Db): Promise<void> {
  await sql`vacuum (skip_locked) workspace_stats_deltas, product_sales_daily_deltas, product_customer_counts_deltas`.execute(db);
}

/** Deltas not folded yet (tests, metrics). */
export async function pendingCounterDeltas(db: Executor): Promise<number> {
  const result = await sql<{ n: number }>`
    select ((select count(*) from workspace_stats_deltas) + (select count(*) from product_sales_daily_deltas)
      + (select count(*) from product_customer_counts_deltas))::int as n`.execute(db);
  return result.rows[0]?.n ?? 0;
}

