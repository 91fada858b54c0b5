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

/**
 * Claims due e-mails for this sender with a lease: the attempt is counted and
 * the row is not due again until the lease ends, so the sending happens outside
 * any transaction and other senders (SKIP LOCKED, then the lease) leave the row
 * alone. A sender that dies mid-send leaves the row to be retried after the
 * lease: delivery is at least once.
 */
export async function claimDue(db: Db, limit: number, leaseSeconds: number): Promise<ClaimedEmail[]> {
  const result = await sql<ClaimedEmail>`
    update email_outbox o set attempts = o.attempts + 1, next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
    where o.id in (
      select id from email_outbox
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked)
    returning o.id, o.recipient, o.subject, o.body_text, o.attempts`.execute(db);
  return result.rows.sort((a, b) => a.id - b.id);
}

export async function markSent(db: Db, id: number): Promise<void> {
  await db.updateTable('email_outbox').set({ status: 'sent', sent_at: new Date(), last_error: null }).where('id', '=', id).execute();
}

/** Records a failed attempt (already counted by the claim): retry at `retryAt`, or give up when it is null. */
export async function markFailed(db: Db, id: number, error: string, retryAt: Date | null): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set({ status: retryAt ? 'pending' : 'failed', last_error: error.slice(0, 1000), ...(retryAt ? { next_attempt_at: retryAt } : {}) })
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
