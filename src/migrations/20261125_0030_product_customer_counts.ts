import { type Kysely, sql } from 'kysely';

// The product dashboard's "customers" KPI (active customers holding the product) was counted on every view by
// joining customer_products with developer_customers: 217-317 ms per request at 100,000 customers of a product
// (docs/performance.md, "Product dashboard"). It becomes a counter maintained like workspace_stats (0027): statement
// triggers insert delta rows (no hot row: two imports of one product never wait on each other's counter), a folded
// table keeps the summed part, and the view `product_customer_counts` sums both in one statement. fold_counters folds
// this third kind too. A product's count changes when a link is made or removed while its customer is active, and
// when an active customer is removed or a removed one comes back (for every product it holds).
//
// A link and a status change of the same customer could otherwise race: each trigger counts what it sees, and neither
// sees the other's uncommitted row. The link trigger therefore takes a share lock on the customers it links (it waits
// for a concurrent status change to commit, then reads the new status; a status change waits for the link's
// transaction and then sees its link). The writers lock those customer rows already (every link follows an upsert of
// its customer in the same transaction), so the lock costs no extra wait there.
//
// No foreign keys on the counter tables, as for the daily sales (0027): a product or workspace deleted later leaves
// counter rows nobody reads, and a fold never fails on them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE product_customer_counts_folded (
      workspace_id integer NOT NULL,
      product_id integer NOT NULL,
      active_customers integer NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_id, product_id)
    )`.execute(db);
  await sql`
    CREATE TABLE product_customer_counts_deltas (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL,
      product_id integer NOT NULL,
      active_customers integer NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX product_customer_counts_deltas_product_idx ON product_customer_counts_deltas (workspace_id, product_id)`.execute(db);
  await sql`
    CREATE VIEW product_customer_counts AS
    SELECT workspace_id, product_id, sum(active_customers)::int AS active_customers
    FROM (
      SELECT workspace_id, product_id, active_customers FROM product_customer_counts_folded
      UNION ALL
      SELECT workspace_id, product_id, active_customers FROM product_customer_counts_deltas
    ) s
    GROUP BY workspace_id, product_id`.execute(db);

  // The figures of today's data, counted once.
  await sql`
    INSERT INTO product_customer_counts_folded (workspace_id, product_id, active_customers)
    SELECT cp.workspace_id, cp.product_id, count(*)::int
    FROM customer_products cp
    JOIN developer_customers dc ON dc.workspace_id = cp.workspace_id AND dc.id = cp.developer_customer_id
    WHERE dc.status = 'active'
    GROUP BY cp.workspace_id, cp.product_id`.execute(db);

  await sql`
    CREATE FUNCTION customer_products_count_ins() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM developer_customers dc
      WHERE dc.id IN (SELECT developer_customer_id FROM new_rows)
      ORDER BY dc.id
      FOR SHARE OF dc;
      INSERT INTO product_customer_counts_deltas (workspace_id, product_id, active_customers)
      SELECT n.workspace_id, n.product_id, count(*)
      FROM new_rows n
      JOIN developer_customers dc ON dc.workspace_id = n.workspace_id AND dc.id = n.developer_customer_id
      WHERE dc.status = 'active'
      GROUP BY n.workspace_id, n.product_id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION customer_products_count_del() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO product_customer_counts_deltas (workspace_id, product_id, active_customers)
      SELECT o.workspace_id, o.product_id, -count(*)
      FROM old_rows o
      JOIN developer_customers dc ON dc.workspace_id = o.workspace_id AND dc.id = o.developer_customer_id
      WHERE dc.status = 'active'
      GROUP BY o.workspace_id, o.product_id;
      RETURN NULL;
    END $$`.execute(db);
  // Only a change of a customer's active state moves the counts: a row trigger whose WHEN clause PostgreSQL checks
  // in place, so the statements that only refresh names (an import's upsert of 100,000 customers) call nothing; a
  // statement trigger over their transition tables cost about 1 s per 100,000 updated customers.
  await sql`
    CREATE FUNCTION developer_customers_product_counts_upd() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO product_customer_counts_deltas (workspace_id, product_id, active_customers)
      SELECT cp.workspace_id, cp.product_id, CASE WHEN NEW.status = 'active' THEN 1 ELSE -1 END
      FROM customer_products cp
      WHERE cp.workspace_id = NEW.workspace_id AND cp.developer_customer_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER customer_products_count_ins AFTER INSERT ON customer_products
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_products_count_ins()`.execute(db);
  await sql`
    CREATE TRIGGER customer_products_count_del AFTER DELETE ON customer_products
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_products_count_del()`.execute(db);
  await sql`
    CREATE TRIGGER developer_customers_product_counts_upd AFTER UPDATE OF status ON developer_customers
    FOR EACH ROW WHEN ((OLD.status = 'active') IS DISTINCT FROM (NEW.status = 'active'))
    EXECUTE FUNCTION developer_customers_product_counts_upd()`.execute(db);

  // fold_counters (0027) folds the third kind as well, in one more statement under the same lock.
  await sql`
    CREATE OR REPLACE FUNCTION fold_counters(max_rows integer) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE folded_stats integer; folded_sales integer; folded_customers integer;
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
      WITH gone AS (
        DELETE FROM product_customer_counts_deltas WHERE id IN (SELECT id FROM product_customer_counts_deltas ORDER BY id LIMIT max_rows)
        RETURNING workspace_id, product_id, active_customers
      ), summed AS (
        SELECT workspace_id, product_id, sum(active_customers)::int AS active_customers, count(*)::int AS n
        FROM gone GROUP BY workspace_id, product_id
      ), written AS (
        INSERT INTO product_customer_counts_folded AS c (workspace_id, product_id, active_customers)
        SELECT workspace_id, product_id, active_customers FROM summed
        ON CONFLICT (workspace_id, product_id) DO UPDATE SET active_customers = c.active_customers + excluded.active_customers
        RETURNING 1
      )
      SELECT coalesce(sum(n), 0)::int INTO folded_customers FROM summed;
      RETURN folded_stats + folded_sales + folded_customers;
    END $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
