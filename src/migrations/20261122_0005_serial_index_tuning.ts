import { type Kysely, sql } from 'kysely';

// A 10,000-serial generation overflowed the trigram index's default 4 MB
// pending list, so the request itself merged it into the index. A larger list
// keeps inserts cheap; the service cleans the list after each bulk write.
// serials_list_idx duplicated the index behind UNIQUE (workspace_id, id).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER INDEX serials_code_trgm_idx SET (gin_pending_list_limit = 65536)`.execute(db);
  await sql`DROP INDEX serials_list_idx`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
