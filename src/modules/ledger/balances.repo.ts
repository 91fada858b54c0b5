import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// Balance snapshots (migration 0026, docs/performance.md "Accounting"): a balance is the snapshot
// (sums of every entry with id <= the horizon) plus the entries after the horizon, in ONE
// statement, so the horizon and the sums it covers come from one MVCC snapshot even while a fold
// commits. The fold (balances.service.ts) only moves the horizon past entries that can no longer
// change: every transaction that could still commit an entry below it has ended.

/**
 * The highest horizon this process has seen. It is the literal lower bound of the tail's scan, so
 * the planner walks the primary key from it (a sub-select would be estimated as a third of the
 * table). Horizons only grow; the statement also filters by the horizon it reads itself, so a
 * stale value only means a longer scan. A higher value than the database's (another database in
 * the same process: tests) is detected by the marker row and the statement runs again.
 */
let seenHorizon = 0n;

interface Marker {
  /** Only on the marker row: the horizon this statement read. */
  upto: string | null;
  /** Only on the marker row: the last id the sequence handed out (the unfolded tail is at most last_id - upto). */
  last_id: string | null;
}

/** Rows of a snapshot-plus-tail statement, and how many entry ids lie past the horizon (an upper bound of the tail). */
export interface WithTail<R> {
  rows: R[];
  unfolded: bigint;
}

async function snapshotPlusTail<R extends object>(db: Executor, statement: (from: string) => RawBuilder<R & Marker>): Promise<WithTail<R>> {
  // The retry starts from the horizon the database itself reported (never from the shared value again, which a
  // read of another database may have raised meanwhile); a horizon only moves forward, so it runs at most once more.
  for (let from = seenHorizon; ; ) {
    const result = await statement(from.toString()).execute(db);
    const marker = result.rows.find((r) => r.upto !== null);
    const rows = result.rows.filter((r) => r.upto === null).map(({ upto: _upto, last_id: _last, ...row }) => row as unknown as R);
    if (!marker) return { rows, unfolded: 0n };
    const upto = BigInt(marker.upto!);
    if (upto < from) {
      seenHorizon = upto;
      from = upto;
      continue;
    }
    if (upto > seenHorizon) seenHorizon = upto;
    return { rows, unfolded: marker.last_id === null ? 0n : BigInt(marker.last_id) - upto };
  }
}

const MARKER = sql`select null, null, null, null, h.upto::text, (select last_value from ledger_entries_id_seq)::text from h`;

export interface SumRow {
  account: string;
  agreement_id: number | null;
  currency: string;
  total: string;
}

/**
 * Account balances per account, agreement and currency, of the entries and snapshots whose `owner` column holds
 * `id`: snapshot + tail. The column is one of two fixed names, never input.
 */
function sumsOf(db: Executor, owner: 'workspace_id' | 'recipient_id', id: number): Promise<WithTail<SumRow>> {
  return snapshotPlusTail<SumRow>(
    db,
    (from) => sql<SumRow & Marker>`
      with h as materialized (select upto from ledger_balance_horizon)
      select b.account, b.agreement_id, b.currency, sum(b.total)::text as total, null::text as upto, null::text as last_id
      from (
        select s.account, s.agreement_id, s.currency, s.total from ledger_balance_snapshots s where ${sql.ref(`s.${owner}`)} = ${id}
        union all
        select e.account, e.agreement_id, e.currency, e.amount from ledger_entries e
        where ${sql.ref(`e.${owner}`)} = ${id} and e.id > ${from}::bigint and e.id > (select upto from h)
      ) b group by b.account, b.agreement_id, b.currency
      union all ${MARKER}`,
  );
}

/** Every account balance of a workspace, per account, agreement and currency: snapshot + tail. */
export const workspaceSums = (db: Executor, workspaceId: number) => sumsOf(db, 'workspace_id', workspaceId);

/** A recipient's balances across workspaces (entries that name the recipient): snapshot + tail. */
export const recipientSums = (db: Executor, recipientId: number) => sumsOf(db, 'recipient_id', recipientId);

export interface PayableRow {
  workspace_id: number;
  agreement_id: number;
  currency: string;
  payable: string;
}

/** partner_payable per workspace, agreement and currency at or above `minimum` (the whole service's, or one workspace's): snapshot + tail. */
export async function payableSums(db: Executor, minimum: bigint, workspaceId?: number): Promise<PayableRow[]> {
  const inWorkspace = (alias: string) => (workspaceId === undefined ? sql`` : sql`and ${sql.ref(`${alias}.workspace_id`)} = ${workspaceId}`);
  const { rows } = await snapshotPlusTail<PayableRow>(
    db,
    (from) => sql<PayableRow & Marker>`
      with h as materialized (select upto from ledger_balance_horizon)
      select * from (
        select b.workspace_id, b.agreement_id, b.currency, sum(b.total)::text as payable, null::text as upto, null::text as last_id
        from (
          select s.workspace_id, s.agreement_id, s.currency, s.total from ledger_balance_snapshots s where s.account = 'partner_payable' ${inWorkspace('s')}
          union all
          select e.workspace_id, e.agreement_id, e.currency, e.amount from ledger_entries e
          where e.account = 'partner_payable' ${inWorkspace('e')} and e.id > ${from}::bigint and e.id > (select upto from h)
        ) b group by b.workspace_id, b.agreement_id, b.currency
        having sum(b.total) >= ${minimum.toString()}::bigint
        union all ${MARKER}
      ) r order by r.agreement_id, r.currency`,
  );
  return rows;
}

// The fold's statements, in the order balances.service.ts sends them.

/** The newest entry id committed as of this statement (0 when there is none). */
export async function newestEntryId(db: Db): Promise<bigint> {
  const result = await sql<{ id: string }>`select coalesce(max(id), 0)::text as id from ledger_entries`.execute(db);
  return BigInt(result.rows[0]?.id ?? '0');
}

/** The horizon: every entry with an id up to it is in the snapshots. */
export async function horizon(db: Executor): Promise<{ upto: bigint; foldedAt: Date | null }> {
  const result = await sql<{ upto: string; folded_at: Date | null }>`select upto::text, folded_at from ledger_balance_horizon`.execute(db);
  const row = result.rows[0];
  return { upto: BigInt(row?.upto ?? '0'), foldedAt: row?.folded_at ?? null };
}

/**
 * A transaction id newer than every one assigned before this call: the statement's own (it is
 * assigned by the call and committed with the statement).
 */
export async function freshTransactionId(db: Db): Promise<string> {
  const result = await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(db);
  return result.rows[0]?.xid ?? '0';
}

/** Whether every transaction whose id is below `xid` has ended (committed or rolled back). */
export async function endedBefore(db: Db, xid: string): Promise<boolean> {
  const result = await sql<{ ended: boolean }>`select pg_snapshot_xmin(pg_current_snapshot()) >= ${xid}::xid8 as ended`.execute(db);
  return result.rows[0]?.ended === true;
}

/** The horizon, locked until the fold's transaction ends: folds run one at a time. */
export async function lockHorizon(tx: Tx): Promise<bigint> {
  const result = await sql<{ upto: string }>`select upto::text from ledger_balance_horizon for update`.execute(tx);
  return BigInt(result.rows[0]?.upto ?? '0');
}

/** Adds the sums of the entries with after < id <= upto to the snapshots; the number of snapshot rows written. */
export async function foldEntries(tx: Tx, after: bigint, upto: bigint): Promise<number> {
  const result = await sql`
    insert into ledger_balance_snapshots as s (workspace_id, account, agreement_id, recipient_id, currency, total)
    select workspace_id, account, agreement_id, recipient_id, currency, sum(amount)
    from ledger_entries where id > ${after.toString()}::bigint and id <= ${upto.toString()}::bigint
    group by workspace_id, account, agreement_id, recipient_id, currency
    on conflict on constraint ledger_balance_snapshots_key do update set total = s.total + excluded.total`.execute(tx);
  return Number(result.numAffectedRows ?? 0n);
}

export async function setHorizon(tx: Tx, upto: bigint): Promise<void> {
  await sql`update ledger_balance_horizon set upto = ${upto.toString()}::bigint, folded_at = now()`.execute(tx);
}
