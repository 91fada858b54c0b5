import { type Kysely, sql } from 'kysely';

// Partner programs, agreement side: recipients (people outside the developer's team) with
// passwordless sign-in links and sessions, agreements with every version of their terms kept,
// invitations (tokens stored hashed), append-only consent records and an audit trail of status
// changes. A workspace switch turns the features off (their routes then answer 404).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE workspaces ADD COLUMN partner_programs_enabled boolean NOT NULL DEFAULT true`.execute(db);

  await sql`
    CREATE TABLE recipients (
      id serial PRIMARY KEY,
      email text NOT NULL UNIQUE CHECK (email = lower(email)),
      email_verified_at timestamptz,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE recipient_sign_in_links (
      id bigserial PRIMARY KEY,
      email text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX recipient_sign_in_links_email_idx ON recipient_sign_in_links (email, created_at DESC)`.execute(db);

  await sql`
    CREATE TABLE recipient_sessions (
      id bigserial PRIMARY KEY,
      recipient_id integer NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      verified boolean NOT NULL,
      expires_at timestamptz NOT NULL,
      ended_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE partner_agreements (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('affiliate', 'collaborator')),
      name text NOT NULL,
      recipient_email text NOT NULL CHECK (recipient_email = lower(recipient_email)),
      recipient_id integer REFERENCES recipients(id),
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'active', 'paused', 'ended')),
      proposed_terms_version integer NOT NULL,
      accepted_terms_version integer,
      accepted_at timestamptz,
      created_by integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id),
      CHECK (status = 'pending' OR accepted_terms_version IS NOT NULL)
    )`.execute(db);
  await sql`CREATE INDEX partner_agreements_workspace_idx ON partner_agreements (workspace_id, id DESC)`.execute(db);
  await sql`CREATE INDEX partner_agreements_recipient_idx ON partner_agreements (recipient_id) WHERE recipient_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE partner_terms (
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      version integer NOT NULL CHECK (version > 0),
      rate_bps integer NOT NULL CHECK (rate_bps BETWEEN 0 AND 10000),
      attribution_window_days integer NOT NULL CHECK (attribution_window_days BETWEEN 1 AND 365),
      include_reseller_sales boolean NOT NULL,
      effective_from timestamptz NOT NULL,
      payout_policy_version text NOT NULL,
      created_by integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (agreement_id, version),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);

  await sql`
    CREATE TABLE partner_term_products (
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      version integer NOT NULL,
      product_id integer NOT NULL,
      rate_bps integer NOT NULL CHECK (rate_bps BETWEEN 0 AND 10000),
      PRIMARY KEY (agreement_id, version, product_id),
      FOREIGN KEY (agreement_id, version) REFERENCES partner_terms(agreement_id, version) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, product_id) REFERENCES products(workspace_id, id)
    )`.execute(db);
  await sql`CREATE INDEX partner_term_products_product_idx ON partner_term_products (workspace_id, product_id)`.execute(db);

  await sql`
    CREATE TABLE partner_invitations (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      terms_version integer NOT NULL,
      email text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
      expires_at timestamptz NOT NULL,
      email_queued boolean NOT NULL,
      created_by integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      accepted_at timestamptz,
      accepted_by integer REFERENCES recipients(id),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX partner_invitations_agreement_idx ON partner_invitations (agreement_id, created_at DESC)`.execute(db);
  await sql`CREATE INDEX partner_invitations_workspace_day_idx ON partner_invitations (workspace_id, created_at)`.execute(db);

  await sql`
    CREATE TABLE partner_consents (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      party text NOT NULL CHECK (party IN ('developer', 'recipient')),
      account_id integer,
      recipient_id integer,
      terms_version integer NOT NULL,
      policy_version text NOT NULL,
      address text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((party = 'developer') = (account_id IS NOT NULL) AND (party = 'recipient') = (recipient_id IS NOT NULL)),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX partner_consents_agreement_idx ON partner_consents (agreement_id, terms_version)`.execute(db);
  // Consent records are evidence: never changed or removed once written.
  await sql`
    CREATE FUNCTION partner_consents_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'partner_consents is append-only' USING ERRCODE = 'restrict_violation';
    END $$`.execute(db);
  await sql`CREATE TRIGGER partner_consents_no_update BEFORE UPDATE OR DELETE ON partner_consents FOR EACH ROW EXECUTE FUNCTION partner_consents_append_only()`.execute(db);

  await sql`
    CREATE TABLE partner_agreement_events (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL,
      agreement_id integer NOT NULL,
      actor_kind text NOT NULL CHECK (actor_kind IN ('developer', 'recipient', 'operator')),
      actor_id integer,
      action text NOT NULL,
      from_status text,
      to_status text,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX partner_agreement_events_idx ON partner_agreement_events (agreement_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'partner_agreement_events', 'partner_consents', 'partner_invitations', 'partner_term_products', 'partner_terms', 'partner_agreements',
    'recipient_sessions', 'recipient_sign_in_links', 'recipients',
  ]) {
    await sql`DROP TABLE IF EXISTS ${sql.raw(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS partner_consents_append_only()`.execute(db);
  await sql`ALTER TABLE workspaces DROP COLUMN IF EXISTS partner_programs_enabled`.execute(db);
}
