import type { Tx } from '../db/transaction.js';
import { enqueueJobs } from '../jobs/jobs.repo.js';

export const EMAIL_JOB = 'email.send';

export interface QueuedEmail {
  /** What the e-mail is about (product_purchase, invitation, sign_in…), for the log and the metrics. */
  kind: string;
  recipient: string;
  subject: string;
  text: string;
  data?: Record<string, unknown>;
}

export interface EmailJobPayload {
  kind: string;
  to: string;
  subject: string;
  text: string;
  data: Record<string, unknown>;
}

/**
 * Queues e-mail in the caller's transaction, as jobs: an e-mail exists only if the change that
 * causes it commits, and it is sent after the commit, outside any transaction (at least once:
 * a sender that dies mid-send leaves it to be sent again).
 */
export async function enqueueEmails(tx: Tx, owner: { workspaceId: number } | null, emails: QueuedEmail[]): Promise<number[]> {
  return enqueueJobs(
    tx,
    emails.map((e) => ({
      kind: EMAIL_JOB,
      workspaceId: owner?.workspaceId ?? null,
      payload: { kind: e.kind, to: e.recipient, subject: e.subject, text: e.text, data: e.data ?? {} } satisfies EmailJobPayload,
    })),
  );
}
