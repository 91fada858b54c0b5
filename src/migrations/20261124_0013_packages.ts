import { type Kysely, sql } from 'kysely';

// Plugin packages: saved package settings per product and variant, one row per distinct build
// (a build is deterministic, so its inputs' hash names it and its stored archive; storefront
// packages belong to the workspace and have no product, environment or key), the package
// activity feed (who built or downloaded what, when, with which settings and checksum), and the
// build slots that bound concurrent builds across every instance sharing the database.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE package_settings (
      workspace_id integer NOT NULL,
      product_id integer NOT NULL,
      variant text NOT NULL CHECK (variant IN ('pluginscript', 'native')),
      experience_mode text NOT NULL,
      ui_width integer NOT NULL CHECK (ui_width > 0),
      ui_height integer NOT NULL CHECK (ui_height > 0),
      release_channel text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, product_id, variant),
      FOREIGN KEY (workspace_id, product_id) REFERENCES products(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);

  await sql`
    CREATE TABLE package_builds (
      id text PRIMARY KEY,
      workspace_id integer NOT NULL,
      product_id integer,
      environment text CHECK (environment IN ('live', 'test')),
      variant text NOT NULL CHECK (variant IN ('pluginscript', 'native', 'storefront')),
      input_hash text NOT NULL,
      key_hash text,
      settings jsonb NOT NULL,
      template_version text NOT NULL,
      storage_key text NOT NULL,
      filename text NOT NULL,
      sha256 text NOT NULL,
      size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
      built_by integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_built_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, product_id, input_hash),
      CHECK ((variant = 'storefront') = (product_id IS NULL)),
      CHECK (product_id IS NULL OR (environment IS NOT NULL AND key_hash IS NOT NULL)),
      FOREIGN KEY (workspace_id, product_id) REFERENCES products(workspace_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX package_builds_product_idx ON package_builds (workspace_id, product_id, environment, last_built_at DESC)`.execute(db);

  await sql`
    CREATE TABLE package_activity (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL,
      product_id integer,
      account_id integer,
      action text NOT NULL CHECK (action IN ('built', 'reused', 'generated', 'regenerated', 'downloaded', 'storefront_built')),
      build_id text,
      variant text,
      environment text,
      settings jsonb,
      sha256 text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX package_activity_product_idx ON package_activity (workspace_id, product_id, created_at DESC)`.execute(db);

  // Slots 1..N exist as rows (made on demand); a build holds one under a lease it renews.
  await sql`
    CREATE TABLE package_build_slots (
      slot integer PRIMARY KEY CHECK (slot > 0),
      holder text,
      lease_until timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['package_build_slots', 'package_activity', 'package_builds', 'package_settings']) {
    await sql`DROP TABLE IF EXISTS ${sql.raw(table)}`.execute(db);
  }
}
