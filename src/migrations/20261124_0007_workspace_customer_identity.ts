import { type Kysely, sql } from 'kysely';

// A workspace sees its customers through its own relationship rows only: the verification state
// of an address becomes per workspace (the global account's flag told one vendor that another
// had verified the person). Existing relationships start unverified: copying the global flag
// would carry the leak forward.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE developer_customers ADD COLUMN email_verified boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
