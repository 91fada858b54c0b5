import { type Kysely, sql } from 'kysely';

// No hot rows (issue 26). The workspace counters (active customers, serials, order items and the
// list versions) and the product dashboard's daily sales were each one row that every sale of a
// workspace (or of a product on a day) updated, so concurrent sales queued behind its row lock.
// The statement triggers now insert a delta row instead, which no other transaction waits on; the
// old tables keep the folded part, and views of the old names sum the folded part and the deltas in
// one statement (one snapshot), so every reader sees the exact figure it saw before. A background
// task (fold_counters) moves deltas into the folded part in one statement, one folder at a time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE workspace_stats RENAME TO workspace_stats_folded`.execute(db);
  await sql`ALTER INDEX workspace_stats_pkey RENAME TO workspace_stats_folded_pkey`.execute(db);
  await sql`
    CREATE TABLE workspace_stats_deltas (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      active_customers integer NOT NULL DEFAULT 0,
      customers_version bigint NOT NULL DEFAULT 0,
      serials integer NOT NULL DEFAULT 0,
      order_items integer NOT NULL DEFAULT 0,
      order_items_version integer NOT NULL DEFAULT 0
    )`.execute(db);
  await sql`CREATE INDEX workspace_stats_deltas_workspace_idx ON workspace_stats_deltas (workspace_id)`.execute(db);
  // A filter on workspace_id is pushed through the grouping into both branches (an index read each).
  await sql`
    CREATE VIEW workspace_stats AS
    SELECT workspace_id, sum(active_customers)::int AS active_customers, sum(customers_version)::bigint AS customers_version,
           sum(serials)::int AS serials, sum(order_items)::int AS order_items, sum(order_items_version)::int AS order_items_version
    FROM (
      SELECT workspace_id, active_customers, customers_version, serials, order_items, order_items_version FROM workspace_stats_folded
      UNION ALL
      SELECT workspace_id, active_customers, customers_version, serials, order_items, order_items_version FROM workspace_stats_deltas
    ) s
    GROUP BY workspace_id`.execute(db);

  // The same triggers, writing deltas. A version changes by one per statement that touches the list, as before.
  await sql`
    CREATE OR REPLACE FUNCTION apply_customer_count_delta(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats_deltas (workspace_id, active_customers, customers_version)
      SELECT (key)::int, (value)::int, 1 FROM jsonb_each_text(deltas);
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION serials_count_ins() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats_deltas (workspace_id, serials)
      SELECT workspace_id, count(*) FROM new_rows GROUP BY workspace_id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION order_items_count_ins() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats_deltas (workspace_id, order_items, order_items_version)
      SELECT workspace_id, count(*), 1 FROM new_rows GROUP BY workspace_id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION order_items_count_del() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats_deltas (workspace_id, order_items, order_items_version)
      SELECT workspace_id, -count(*), 1 FROM old_rows GROUP BY workspace_id;
      RETURN NULL;
    END $$`.execute(db);

  await sql`ALTER TABLE product_sales_daily RENAME TO product_sales_daily_folded`.execute(db);
  await sql`ALTER INDEX product_sales_daily_pkey RENAME TO product_sales_daily_folded_pkey`.execute(db);
  await sql`
    CREATE TABLE product_sales_daily_deltas (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL,
      product_id integer NOT NULL,
      day date NOT NULL,
      currency char(3) NOT NULL,
      orders integer NOT NULL,
      units integer NOT NULL,
      gross_cents bigint NOT NULL,
      refunds_cents bigint NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX product_sales_daily_deltas_product_idx ON product_sales_daily_deltas (workspace_id, product_id, day)`.execute(db);
  await sql`
    CREATE VIEW product_sales_daily AS
    SELECT workspace_id, product_id, day, currency, sum(orders)::int AS orders, sum(units)::int AS units,
           sum(gross_cents)::bigint AS gross_cents, sum(refunds_cents)::bigint AS refunds_cents
    FROM (
      SELECT workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents FROM product_sales_daily_folded
      UNION ALL
      SELECT workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents FROM product_sales_daily_deltas
    ) s
    GROUP BY workspace_id, product_id, day, currency`.execute(db);
  // A statement whose rows cancel out (an update that changes no amount) adds no delta.
  await sql`
    CREATE OR REPLACE FUNCTION apply_product_sales(delta_rows jsonb) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO product_sales_daily_deltas (workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents)
      SELECT (r->>'w')::int, (r->>'p')::int, (r->>'d')::date, r->>'c', sum((r->>'o')::int), sum((r->>'u')::int), sum((r->>'g')::bigint), sum((r->>'r')::bigint)
      FROM jsonb_array_elements(delta_rows) r
      GROUP BY 1, 2, 3, 4
      HAVING sum((r->>'o')::int) <> 0 OR sum((r->>'u')::int) <> 0 OR sum((r->>'g')::bigint) <> 0 OR sum((r->>'r')::bigint) <> 0;
    END $$`.execute(db);

  // Moves up to max_rows of the oldest deltas of each kind into the folded rows, each kind in one
  // statement; readers see the figures before or after, never between (same sums). A folder that
  // finds another folding returns at once (0): one folded row is written by one folder at a time.
  await sql`
    CREATE FUNCTION fold_counters(max_rows integer) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE folded_stats integer; folded_sales integer;
    BEGIN
      IF NOT pg_try_advisory_xact_lock(hashtext('fold_counters')) THEN RETURN 0; END IF;
      WITH gone AS (
        DELETE FROM workspace_stats_deltas WHERE id IN (SELECT id FROM workspace_stats_deltas ORDER BY id LIMIT max_rows)
        RETURNING workspace_id, active_customers, customers_version, serials, order_items, order_items_version
      ), summed AS (
        SELECT workspace_id, sum(active_customers)::int AS active_customers, sum(customers_version)::bigint AS customers_version,
               sum(serials)::int AS serials, sum(order_items)::int AS order_items, sum(order_items_version)::int AS order_items_version, count(*)::int AS n
        FROM gone GROUP BY workspace_id
      ), written AS (
        INSERT INTO workspace_stats_folded AS s (workspace_id, active_customers, customers_version, serials, order_items, order_items_version)
        SELECT workspace_id, active_customers, customers_version, serials, order_items, order_items_version FROM summed
        ON CONFLICT (workspace_id) DO UPDATE SET
          active_customers = s.active_customers + excluded.active_customers, customers_version = s.customers_version + excluded.customers_version,
          serials = s.serials + excluded.serials, order_items = s.order_items + excluded.order_items,
          order_items_version = s.order_items_version + excluded.order_items_version
        RETURNING 1
      )
      SELECT coalesce(sum(n), 0)::int INTO folded_stats FROM summed;
      WITH gone AS (
        DELETE FROM product_sales_daily_deltas WHERE id IN (SELECT id FROM product_sales_daily_deltas ORDER BY id LIMIT max_rows)
        RETURNING workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents
      ), summed AS (
        SELECT workspace_id, product_id, day, currency, sum(orders)::int AS orders, sum(units)::int AS units,
               sum(gross_cents)::bigint AS gross_cents, sum(refunds_cents)::bigint AS refunds_cents, count(*)::int AS n
        FROM gone GROUP BY workspace_id, product_id, day, currency
      ), written AS (
        INSERT INTO product_sales_daily_folded AS d (workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents)
        SELECT workspace_id, product_id, day, currency, orders, units, gross_cents, refunds_cents FROM summed
        ON CONFLICT (workspace_id, product_id, day, currency) DO UPDATE SET
          orders = d.orders + excluded.orders, units = d.units + excluded.units,
          gross_cents = d.gross_cents + excluded.gross_cents, refunds_cents = d.refunds_cents + excluded.refunds_cents
        RETURNING 1
      )
      SELECT coalesce(sum(n), 0)::int INTO folded_sales FROM summed;
      RETURN folded_stats + folded_sales;
    END $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
