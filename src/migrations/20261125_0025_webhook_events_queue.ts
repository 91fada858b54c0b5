import { type Kysely, sql } from 'kysely';

// Webhook events belong to the job queue of the instance that wrote them (JOBS_QUEUE): instances
// that share a database but not a queue name (test processes on one PostgreSQL server, two
// deployments on one database) must not fan out, and so deliver with their own settings, each
// other's events, as they never run each other's jobs. Rows written before this belong to
// "default", the queue of an instance that does not name one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_events ADD COLUMN queue text NOT NULL DEFAULT 'default'`.execute(db);
  // The relay's work, per queue: events not yet fanned out to endpoints.
  await sql`DROP INDEX webhook_events_pending_idx`.execute(db);
  await sql`CREATE INDEX webhook_events_pending_idx ON webhook_events (queue, id) WHERE dispatched_at IS NULL`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are append-only; restore from backup to go back.');
}
