import { type Kysely, sql } from 'kysely';

// With the default sample a common search term may be missing from the
// statistics, and the planner then scans every match instead of walking the
// primary key and stopping after one page. A larger sample keeps the fast plan.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE developer_customers ALTER COLUMN search_text SET STATISTICS 1000`.execute(db);
  await sql`ANALYZE developer_customers`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
