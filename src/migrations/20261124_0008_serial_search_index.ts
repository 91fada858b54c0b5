import { type Kysely, sql } from 'kysely';

// The trigram index on code_key also supports `=`, and the planner chose it (with its 64 MB
// pending list, scanned for every key) for the exact code lookups of imports: a 30,000-code
// import took over two minutes. Built over lower(code_key), it serves only the substring
// search, which is written against that expression; exact lookups can only use the unique btree.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX serials_code_trgm_idx`.execute(db);
  await sql`CREATE INDEX serials_code_search_idx ON serials USING gin (lower(code_key) gin_trgm_ops) WITH (gin_pending_list_limit = 65536)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
