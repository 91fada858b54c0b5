import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// Manual grants: the grant record with its idempotency key and stored answer, and the
// entitlements a grant checks and reports.

/** Active entitlements of one customer to these products. */
export async function activeEntitlements(tx: Executor, scope: Scope, customerId: number, productIds: number[]) {
  return tx
    .selectFrom('entitlements')
    .where('workspace_id', '=', scope.workspaceId)
    .where('customer_id', '=', customerId)
    .where('product_id', '=', sql<number>`any(${productIds}::int[])`)
    .where('status', '=', 'active')
    .select(['id', 'product_id', 'kind', 'ends_at'])
    .execute();
}

export async function findEntitlements(db: Executor, scope: Scope, ids: number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('entitlements')
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', sql<number>`any(${ids}::int[])`)
    .select([
      'id',
      // The relationship id, as everywhere in answers.
      sql<number>`(select dc.id from developer_customers dc where dc.workspace_id = entitlements.workspace_id and dc.account_id = entitlements.customer_id)`.as(
        'customer_id',
      ),
      'product_id',
      'source',
      'kind',
      'status',
      'order_item_id',
      'serial_id',
      'starts_at',
      'ends_at',
    ])
    .orderBy('id')
    .execute();
}

/** Serialises grants that share a grantRequestId (transaction-scoped, released at commit). */
export async function lockGrantRequest(tx: Tx, scope: Scope, grantRequestId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`grant:${scope.workspaceId}:${grantRequestId}`}, 0))`.execute(tx);
}

export async function findGrantRequest(tx: Executor, scope: Scope, grantRequestId: string) {
  return tx
    .selectFrom('manual_grants')
    .where('workspace_id', '=', scope.workspaceId)
    .where('grant_request_id', '=', grantRequestId)
    .select(['id', 'request_hash', 'response'])
    .executeTakeFirst();
}

export async function insertGrant(
  tx: Tx,
  scope: Scope,
  input: { grantRequestId: string | null; requestHash: string; grantType: 'perpetual' | 'subscription' | 'existing_serial'; customerId: number; reason: string; note: string | null },
): Promise<number> {
  const row = await tx
    .insertInto('manual_grants')
    .values({
      workspace_id: scope.workspaceId,
      grant_request_id: input.grantRequestId,
      request_hash: input.requestHash,
      grant_type: input.grantType,
      actor_account_id: scope.accountId || null,
      customer_id: input.customerId,
      reason: input.reason,
      note: input.note,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function saveGrantResponse(tx: Tx, scope: Scope, grantId: number, response: unknown): Promise<void> {
  await tx
    .updateTable('manual_grants')
    .set({ response: JSON.stringify(response) })
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', grantId)
    .execute();
}
