import { type Kysely, sql } from 'kysely';

// A payout run that dies (kill -9, a lost machine) once left its transfer `reserved` forever, and
// the one-in-flight index then blocked every later payout of that agreement and currency. A
// transfer now carries the run that owns it and a lease: when the lease runs out, the next run
// takes the transfer over and finishes it through the provider's idempotency key (the provider
// is asked first, then the same submission is repeated, which cannot pay twice).
//
// The built-in sandbox provider keeps its own record of the payouts it accepted, keyed by that
// idempotency key and committed apart from Patchbay's transactions, as a real provider's would be:
// a crash after the provider accepted a payout cannot roll the acceptance back.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE partner_transfers
      ADD COLUMN run_id text,
      ADD COLUMN lease_until timestamptz,
      ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0)`.execute(db);
  // Transfers a run may have to take over or ask the provider about: unfinished ones, by mode.
  await sql`
    CREATE INDEX partner_transfers_unfinished_idx ON partner_transfers (livemode, lease_until, id)
    WHERE status IN ('reserved', 'submitted', 'reconciliation_required')`.execute(db);
  // Submitted before this migration: their provider confirmation is already queued. Give it a day
  // before a run asks the provider (the sandbox has no record of payouts it accepted before now).
  await sql`UPDATE partner_transfers SET lease_until = now() + interval '1 day' WHERE status = 'submitted'`.execute(db);

  await sql`
    CREATE TABLE payout_sandbox_transfers (
      idempotency_key text PRIMARY KEY,
      provider_reference text NOT NULL UNIQUE,
      transfer_id bigint NOT NULL,
      account_ref text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      currency char(3) NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('paid', 'failed')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX payout_sandbox_transfers_account_idx ON payout_sandbox_transfers (account_ref)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS payout_sandbox_transfers`.execute(db);
  await sql`DROP INDEX IF EXISTS partner_transfers_unfinished_idx`.execute(db);
  await sql`ALTER TABLE partner_transfers DROP COLUMN IF EXISTS run_id, DROP COLUMN IF EXISTS lease_until, DROP COLUMN IF EXISTS attempts`.execute(db);
}
