import { type Kysely, sql } from 'kysely';

// Queued e-mail carries references, and a link's token is derived again when its e-mail is sent:
// the link tables keep a random nonce (useless without the service's encryption key) next to the
// token's hash. Rows made before this migration have no nonce; their links still work, and an
// e-mail queued for one before the upgrade is sent as it was written.
// E-mail jobs that have finished no longer keep what they carried: this clears those written
// before the upgrade, which held whole texts with sign-in and invitation tokens.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE recipient_sign_in_links ADD COLUMN token_nonce text`.execute(db);
  await sql`ALTER TABLE partner_invitations ADD COLUMN token_nonce text`.execute(db);
  await sql`UPDATE jobs SET payload = '{}' WHERE kind = 'email.send' AND state IN ('succeeded', 'failed')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE partner_invitations DROP COLUMN token_nonce`.execute(db);
  await sql`ALTER TABLE recipient_sign_in_links DROP COLUMN token_nonce`.execute(db);
}
