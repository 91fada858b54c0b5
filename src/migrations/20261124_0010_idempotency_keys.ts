import { type Kysely, sql } from 'kysely';

// The first answer to a mutating request sent with an Idempotency-Key, kept for 24 hours per
// caller and key with a fingerprint of the request, so a retry gets the same answer instead of
// a second effect.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE idempotency_keys (
      owner text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
      status integer,
      headers jsonb,
      body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (owner, key)
    )`.execute(db);
  await sql`CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
