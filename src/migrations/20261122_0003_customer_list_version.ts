import { type Kysely, sql } from 'kysely';

// A version per workspace that changes whenever a statement touches its
// customer relationships. The list uses it to know when cached deep-page
// anchors are stale.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE workspace_stats ADD COLUMN customers_version bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION apply_customer_count_delta(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats (workspace_id)
      SELECT (key)::int FROM jsonb_each_text(deltas) ON CONFLICT DO NOTHING;
      UPDATE workspace_stats s
      SET active_customers = s.active_customers + (d.value)::int, customers_version = s.customers_version + 1
      FROM jsonb_each_text(deltas) d WHERE s.workspace_id = (d.key)::int;
    END $$`.execute(db);
  // Report every touched workspace (a zero delta still changes the version).
  await sql`
    CREATE OR REPLACE FUNCTION developer_customers_count_upd() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM apply_customer_count_delta(coalesce(
        (SELECT jsonb_object_agg(workspace_id, d) FROM (
          SELECT workspace_id, sum(d) AS d FROM (
            SELECT workspace_id, CASE WHEN status = 'active' THEN 1 ELSE 0 END AS d FROM new_rows
            UNION ALL
            SELECT workspace_id, CASE WHEN status = 'active' THEN -1 ELSE 0 END AS d FROM old_rows
          ) u GROUP BY workspace_id) x),
        '{}'::jsonb));
      RETURN NULL;
    END $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
