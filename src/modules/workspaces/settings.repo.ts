import type { Scope } from '../../platform/auth/scope.js';
import { announceOnCommit } from '../../platform/db/committed-changes.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// A workspace's own settings, read and written through the caller's scope (never a workspace id from the request).

export async function settingsOf(db: Executor, scope: Scope, forUpdate = false) {
  const query = db.selectFrom('workspaces').where('id', '=', scope.workspaceId).select(['id', 'name', 'storefront_url', 'partner_programs_enabled', 'slug', 'customer_portal_enabled', 'keep_serials_on_refund']);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirstOrThrow();
}

export async function updateSettings(tx: Tx, scope: Scope, change: { name?: string; storefront_url?: string | null; partner_programs_enabled?: boolean; keep_serials_on_refund?: boolean }): Promise<void> {
  await tx.updateTable('workspaces').set(change).where('id', '=', scope.workspaceId).execute();
  // The storefront and the partner programs switch are cached by referral links: dropped here once this commits.
  announceOnCommit(tx, 'workspaces', scope.workspaceId);
}

/** Whether a full refund leaves the serial sold with the item active (the workspace's choice; default: revoke it). */
export async function keepsSerialsOnRefund(db: Executor, scope: Scope): Promise<boolean> {
  const row = await db.selectFrom('workspaces').where('id', '=', scope.workspaceId).select('keep_serials_on_refund').executeTakeFirst();
  return row?.keep_serials_on_refund ?? false;
}
