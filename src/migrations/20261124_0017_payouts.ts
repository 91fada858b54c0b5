import { type Kysely, sql } from 'kysely';

// Payout destinations of partner recipients: where a provider (card: hosted onboarding; wallet:
// the recipient's verified e-mail) sends their money, one current destination per recipient and
// mode (sandbox or live). A changed destination carries a security hold that transfers wait for.
// The built-in sandbox card provider keeps its own accounts (onboarding token hashed, single use),
// as a real provider would on its side.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE payout_destinations (
      id serial PRIMARY KEY,
      recipient_id integer NOT NULL REFERENCES recipients(id),
      provider text NOT NULL CHECK (provider IN ('card', 'wallet')),
      livemode boolean NOT NULL,
      status text NOT NULL CHECK (status IN ('onboarding', 'ready', 'replaced', 'disabled')),
      account_ref text NOT NULL,
      display text NOT NULL,
      program text CHECK (program IN ('affiliate', 'collaborator')),
      hold_until timestamptz,
      available_at timestamptz,
      ready_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (status <> 'ready' OR (ready_at IS NOT NULL AND available_at IS NOT NULL))
    )`.execute(db);
  // One current destination per recipient and mode: a new one marks the previous one replaced.
  await sql`
    CREATE UNIQUE INDEX payout_destinations_current_idx ON payout_destinations (recipient_id, livemode)
    WHERE status IN ('onboarding', 'ready')`.execute(db);
  await sql`CREATE INDEX payout_destinations_recipient_idx ON payout_destinations (recipient_id, livemode, id)`.execute(db);

  await sql`
    CREATE TABLE payout_destination_events (
      id bigserial PRIMARY KEY,
      recipient_id integer NOT NULL REFERENCES recipients(id),
      destination_id integer REFERENCES payout_destinations(id),
      action text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX payout_destination_events_recipient_idx ON payout_destination_events (recipient_id, id)`.execute(db);
  await sql`
    CREATE FUNCTION payout_destination_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'payout_destination_events is append-only' USING ERRCODE = 'restrict_violation';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER payout_destination_events_no_update BEFORE UPDATE OR DELETE ON payout_destination_events
    FOR EACH ROW EXECUTE FUNCTION payout_destination_events_append_only()`.execute(db);

  await sql`
    CREATE TABLE payout_sandbox_accounts (
      account_ref text PRIMARY KEY,
      recipient_id integer NOT NULL REFERENCES recipients(id),
      onboarding_token_hash text UNIQUE,
      onboarding_expires_at timestamptz,
      onboarded_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['payout_sandbox_accounts', 'payout_destination_events', 'payout_destinations']) {
    await sql`DROP TABLE IF EXISTS ${sql.raw(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS payout_destination_events_append_only()`.execute(db);
}
