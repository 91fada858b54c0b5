import type { Scope } from '../auth/scope.js';
import type { Tx } from '../db/transaction.js';

/** Audit rows are written in the same transaction as the change they describe. */
export async function writeAudit(
  tx: Tx,
  scope: Scope,
  entry: { action: string; subjectType: string; subjectId: string | number; data: Record<string, unknown> },
): Promise<void> {
  await tx
    .insertInto('audit_log')
    .values({
      workspace_id: scope.workspaceId,
      actor_account_id: scope.accountId || null,
      action: entry.action,
      subject_type: entry.subjectType,
      subject_id: String(entry.subjectId),
      data: JSON.stringify(entry.data),
    })
    .execute();
}

/** `writeAudit` for several entries in one statement. */
export async function writeAudits(
  tx: Tx,
  scope: Scope,
  entries: Array<{ action: string; subjectType: string; subjectId: string | number; data: Record<string, unknown> }>,
): Promise<void> {
  if (entries.length === 0) return;
  await tx
    .insertInto('audit_log')
    .values(
      entries.map((entry) => ({
        workspace_id: scope.workspaceId,
        actor_account_id: scope.accountId || null,
        action: entry.action,
        subject_type: entry.subjectType,
        subject_id: String(entry.subjectId),
        data: JSON.stringify(entry.data),
      })),
    )
    .execute();
}
