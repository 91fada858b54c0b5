import { Type } from '@sinclair/typebox';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { defineJob } from '../../platform/jobs/define-job.js';
import * as repo from './balances.repo.js';

/**
 * Folds the ledger entries past the horizon into the balance snapshots (service-wide, no payload).
 * Queued by the accounting when it sees many unfolded entries, and run by each runner's hourly
 * maintenance; a fold that finds nothing new, or must wait for an open transaction, is a no-op.
 */
export const FoldBalancesJob = defineJob('ledger.fold-balances', Type.Object({}, { additionalProperties: false }), { maxAttempts: 3 });

/** Unfolded entry ids past which a read of the accounting asks for a fold. */
export const FOLD_AFTER_ENTRIES = 10_000n;
/** Entries folded per transaction (a first fold of a large ledger takes several). */
const FOLD_BATCH = 500_000n;

export interface FoldResult {
  /** The horizon after the fold. */
  horizon: string;
  /** Entry ids the horizon moved past. */
  folded: string;
  /** Why it did not move, when it did not. */
  reason?: 'up to date' | 'a transaction older than the fold is still open';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Moves the horizon as far as it can never miss an entry. Sequence ids are handed out before
 * commit, so an entry with a lower id than a committed one may still be in flight; the horizon
 * therefore only passes ids whose transactions have all ended:
 *
 * 1. `newest` = the highest committed entry id in this statement's snapshot. Every lower id was
 *    handed out before it (one sequence, CACHE 1), and the default of ledger_entries.id
 *    (ledger_next_entry_id, migration 0026) gives a transaction its transaction id before its
 *    first entry id: so every transaction holding an id <= newest had its transaction id before
 *    this statement.
 * 2. `xid` = a fresh transaction id, assigned after step 1: greater than all of theirs.
 * 3. Wait until the oldest running transaction is not older than `xid` (pg_snapshot_xmin):
 *    every transaction that held an id <= newest has committed or rolled back, so the entries
 *    with id <= newest are final.
 * 4. Fold (horizon, newest] in a transaction that locks the horizon row (one fold at a time).
 *
 * Readers add the entries past the horizon to the snapshot in one statement, so a read during a
 * fold sees either the old horizon and sums or the new ones. Must not run inside a transaction
 * (its own transaction id would be one step 3 waits for).
 */
export async function foldBalances(db: Db, options: { waitMs?: number } = {}): Promise<FoldResult> {
  if (db.isTransaction) throw new Error('foldBalances runs outside any transaction');
  const newest = await repo.newestEntryId(db);
  const before = await repo.horizon(db);
  if (newest <= before.upto) return { horizon: before.upto.toString(), folded: '0', reason: 'up to date' };
  const xid = await repo.freshTransactionId(db);
  const deadline = Date.now() + (options.waitMs ?? 5_000);
  while (!(await repo.endedBefore(db, xid))) {
    if (Date.now() >= deadline) return { horizon: before.upto.toString(), folded: '0', reason: 'a transaction older than the fold is still open' };
    await sleep(10);
  }
  let upto = before.upto;
  let folded = 0n;
  for (;;) {
    const step = await inTransaction(db, async (tx) => {
      const from = await repo.lockHorizon(tx);
      // Another fold (another instance's runner) may have moved the horizon while this one waited.
      if (from >= newest) return { from, to: from };
      const to = newest - from > FOLD_BATCH ? from + FOLD_BATCH : newest;
      await repo.foldEntries(tx, from, to);
      await repo.setHorizon(tx, to);
      return { from, to };
    });
    upto = step.to;
    folded += step.to - step.from;
    if (step.to >= newest) break;
  }
  // The horizon reported is the one in the database now, even when another fold moved it.
  return { horizon: upto.toString(), folded: folded.toString() };
}

let lastRequest = 0;

/**
 * Queues a fold when a read saw `unfolded` entry ids past the horizon (at most once every 10
 * seconds per process, and only when no fold job of this queue is waiting or running). The read
 * is exact either way; folding keeps the tail it scans short. Never throws.
 */
export async function requestFoldIfBehind(db: Db, unfolded: bigint): Promise<void> {
  if (unfolded < FOLD_AFTER_ENTRIES || Date.now() - lastRequest < 10_000) return;
  lastRequest = Date.now();
  try {
    await inTransaction(db, async (tx) => {
      await FoldBalancesJob.enqueueUnlessPending(tx, {}, { workspaceId: null });
    });
  } catch {
    // A read must not fail for a fold it could not ask for: the next read asks again.
  }
}
