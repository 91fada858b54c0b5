import { sql } from 'kysely';
import type { Scope } from '../auth/scope.js';
import type { Db } from '../db/database.js';
import type { Tx } from '../db/transaction.js';

export interface QueuedEmail {
  kind: string;
  recipient: string;
  subject: string;
  text: string;
  data?: Record<string, unknown>;
}

/** Queues e-mail in the caller's transaction: it is sent only if the change commits. */
export async function enqueueEmails(tx: Tx, scope: Scope, emails: QueuedEmail[]): Promise<number[]> {
  if (emails.length === 0) return [];
  const rows = await tx
    .insertInto('email_outbox')
    .values(
      emails.map((e) => ({
        workspace_id: scope.workspaceId,
        kind: e.kind,
        recipient: e.recipient,
        subject: e.subject,
        body_text: e.text,
        data: JSON.stringify(e.data ?? {}),
      })),
    )
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export interface ClaimedEmail {
  id: number;
  recipient: string;
  subject: string;
  body_text: string;
  attempts: number;
}

/** Due e-mails, locked for this sender; other senders skip them (SKIP LOCKED). */
export async function claimDue(tx: Tx, limit: number): Promise<ClaimedEmail[]> {
  const result = await sql<ClaimedEmail>`
    select id, recipient, subject, body_text, attempts from email_outbox
    where status = 'pending' and next_attempt_at <= now()
    order by next_attempt_at, id
    limit ${limit}
    for update skip locked`.execute(tx);
  return result.rows;
}

export async function markSent(tx: Tx, id: number): Promise<void> {
  await tx.updateTable('email_outbox').set({ status: 'sent', sent_at: new Date(), attempts: sql`attempts + 1` }).where('id', '=', id).execute();
}

export async function markFailed(tx: Tx, id: number, error: string, retryAt: Date | null): Promise<void> {
  await tx
    .updateTable('email_outbox')
    .set({
      status: retryAt ? 'pending' : 'failed',
      attempts: sql`attempts + 1`,
      last_error: error.slice(0, 1000),
      ...(retryAt ? { next_attempt_at: retryAt } : {}),
    })
    .where('id', '=', id)
    .execute();
}

export async function pendingCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('email_outbox')
    .where('status', '=', 'pending')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}
