import { type Kysely, sql } from 'kysely';

// Balance snapshots (issue 26): the sums of every ledger entry with an id up to a horizon, per
// (workspace, account, agreement, recipient, currency), folded forward by a job. A balance is the
// snapshot plus the entries after the horizon, read in one statement (one MVCC snapshot, so the
// horizon and the sums it covers always match). The ledger stays the only source of truth: the
// fold only adds sums of committed entries, and tests compare snapshot + tail with the full sum.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Null agreement and recipient are a key like any other value (NULLS NOT DISTINCT, PostgreSQL 15+).
  await sql`
    CREATE TABLE ledger_balance_snapshots (
      workspace_id integer NOT NULL,
      account text NOT NULL,
      agreement_id integer,
      recipient_id integer,
      currency char(3) NOT NULL,
      total bigint NOT NULL,
      CONSTRAINT ledger_balance_snapshots_key UNIQUE NULLS NOT DISTINCT (workspace_id, account, agreement_id, recipient_id, currency)
    )`.execute(db);
  await sql`CREATE INDEX ledger_balance_snapshots_recipient_idx ON ledger_balance_snapshots (recipient_id) WHERE recipient_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX ledger_balance_snapshots_payable_idx ON ledger_balance_snapshots (workspace_id) WHERE account = 'partner_payable'`.execute(db);

  // One row: every entry with id <= upto is in the snapshots, and none after it.
  await sql`
    CREATE TABLE ledger_balance_horizon (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      upto bigint NOT NULL,
      folded_at timestamptz
    )`.execute(db);
  await sql`INSERT INTO ledger_balance_horizon (upto) VALUES (0)`.execute(db);

  // The commit-safe horizon needs "a transaction that holds an entry id already has its
  // transaction id" (docs/performance.md, accounting): the id default assigns the transaction id
  // first, then takes the next value of the sequence (CACHE 1, so ids are handed out in order
  // across sessions).
  await sql`
    CREATE FUNCTION ledger_next_entry_id() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_current_xact_id();
      RETURN nextval('ledger_entries_id_seq');
    END $$`.execute(db);
  await sql`ALTER SEQUENCE ledger_entries_id_seq CACHE 1`.execute(db);
  await sql`ALTER TABLE ledger_entries ALTER COLUMN id SET DEFAULT ledger_next_entry_id()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
