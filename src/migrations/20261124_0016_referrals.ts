import { type Kysely, sql } from 'kysely';

// Referral links of affiliate agreements: each affiliate agreement gets an unguessable code of
// its own (never its invitation token), and every recorded visit of the public link is a row,
// written in batches by the service. Visits keep a keyed hash of the client address, never the
// address itself.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE partner_agreements ADD COLUMN referral_code text UNIQUE`.execute(db);
  // 24 random bytes as 32 base64url characters, like the codes the service makes. gen_random_bytes
  // needs pgcrypto, which neither PGlite nor a plain server has; gen_random_uuid is built in and
  // drawn from the strong random source (122 random bits each): two of them, cut to 24 bytes,
  // leave over 180 random bits.
  await sql`
    UPDATE partner_agreements
    SET referral_code = rtrim(translate(encode(substring(
          decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex') FROM 1 FOR 24),
        'base64'), '+/', '-_'), '=')
    WHERE kind = 'affiliate'`.execute(db);
  await sql`
    ALTER TABLE partner_agreements ADD CONSTRAINT partner_agreements_referral_code_check
      CHECK ((kind = 'affiliate') = (referral_code IS NOT NULL))`.execute(db);

  await sql`
    CREATE TABLE partner_referral_visits (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      product_id integer,
      visited_at timestamptz NOT NULL,
      address_hash text NOT NULL,
      user_agent_class text NOT NULL CHECK (user_agent_class IN ('bot', 'mobile', 'desktop', 'other')),
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, product_id) REFERENCES products(workspace_id, id)
    )`.execute(db);
  await sql`CREATE INDEX partner_referral_visits_agreement_idx ON partner_referral_visits (workspace_id, agreement_id, visited_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS partner_referral_visits`.execute(db);
  await sql`ALTER TABLE partner_agreements DROP CONSTRAINT IF EXISTS partner_agreements_referral_code_check`.execute(db);
  await sql`ALTER TABLE partner_agreements DROP COLUMN IF EXISTS referral_code`.execute(db);
}
