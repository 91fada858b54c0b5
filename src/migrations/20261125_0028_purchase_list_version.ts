import { type Kysely, sql } from 'kysely';

// The purchase list caches the exact total of a filtered list per (workspace, scope, filter) together with the
// list version it was counted at, and counts again only when the version moved (issue 26: a count over 80,000
// matching items on every request kept the filtered list at 1 % of /readyz). The version changed with inserts and
// deletes of order items only; an update of a column a filter or the order reads (a refund changes refund_status)
// must change it too, or a cached total would go stale. Like the other counters (0027), the update adds a delta
// row that no other transaction waits on; an update that changes none of those columns adds nothing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION order_items_list_upd() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_stats_deltas (workspace_id, order_items_version)
      SELECT DISTINCT n.workspace_id, 1
      FROM new_rows n JOIN old_rows o ON o.id = n.id AND o.workspace_id = n.workspace_id
      WHERE (n.product_id, n.channel, n.provider, n.reseller_id, n.refund_status, n.record_type, n.purchased_at, n.customer_id, n.order_id)
        IS DISTINCT FROM (o.product_id, o.channel, o.provider, o.reseller_id, o.refund_status, o.record_type, o.purchased_at, o.customer_id, o.order_id);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER order_items_list_upd AFTER UPDATE ON order_items
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_items_list_upd()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
