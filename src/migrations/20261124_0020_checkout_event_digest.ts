import { type Kysely, sql } from 'kysely';

// A checkout event id is a promise that the event is the same one: each event keeps a SHA-256
// digest of its content, so a delivery that reuses the id for a different body is refused instead
// of being answered "replayed". Events recorded before this migration have no digest and keep
// answering "replayed" to any body with their id (nothing they changed is rewritten).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE checkout_events ADD COLUMN body_digest bytea CHECK (octet_length(body_digest) = 32)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE checkout_events DROP COLUMN IF EXISTS body_digest`.execute(db);
}
