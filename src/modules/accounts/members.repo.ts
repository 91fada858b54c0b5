import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { MembershipsTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// A workspace's members. Every query starts from the scope's workspace; a member's id is their
// account id, which names at most one membership per workspace.

export type MemberRecord = Pick<Selectable<MembershipsTable>, 'account_id' | 'owner' | 'permissions' | 'all_products' | 'created_at' | 'joined_at'> & {
  email: string;
  product_ids: number[];
};

const productIds = sql<number[]>`array(select mp.product_id from membership_products mp
  where mp.workspace_id = m.workspace_id and mp.account_id = m.account_id order by mp.product_id)`;

function members(db: Executor, scope: Scope) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .where('m.workspace_id', '=', scope.workspaceId)
    .select(['m.account_id', 'a.email', 'm.owner', 'm.permissions', 'm.all_products', 'm.created_at', 'm.joined_at', productIds.as('product_ids')]);
}

export async function listMembers(db: Executor, scope: Scope, page: { limit: number; offset: number }): Promise<MemberRecord[]> {
  return members(db, scope).orderBy('m.owner', 'desc').orderBy('m.created_at').orderBy('m.account_id').limit(page.limit).offset(page.offset).execute();
}

export async function countMembers(db: Executor, scope: Scope): Promise<number> {
  const row = await db.selectFrom('memberships').where('workspace_id', '=', scope.workspaceId).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export async function findMember(db: Executor, scope: Scope, accountId: number): Promise<MemberRecord | undefined> {
  return members(db, scope).where('m.account_id', '=', accountId).executeTakeFirst();
}

/**
 * Locks the rows of these members (the caller and the member changed) in account order, so two
 * managers changing or removing each other take their locks in the same order; answers which exist.
 * A row removed meanwhile is not returned: of two concurrent removals, the second finds nothing.
 */
export async function lockMembers(tx: Tx, scope: Scope, accountIds: number[]): Promise<Set<number>> {
  const rows = await tx
    .selectFrom('memberships')
    .where('workspace_id', '=', scope.workspaceId)
    .where('account_id', 'in', accountIds)
    .select('account_id')
    .orderBy('account_id')
    .forUpdate()
    .execute();
  return new Set(rows.map((r) => r.account_id));
}

/** The account of an address, made on first use (accounts are shared by every workspace). */
export async function accountFor(tx: Tx, email: string): Promise<number> {
  const normalized = email.trim().toLowerCase();
  await tx.insertInto('accounts').values({ email: email.trim(), email_normalized: normalized }).onConflict((oc) => oc.column('email_normalized').doNothing()).execute();
  const row = await tx.selectFrom('accounts').where('email_normalized', '=', normalized).select('id').executeTakeFirstOrThrow();
  return row.id;
}

/** False when the account already is a member of the workspace. */
export async function insertMember(tx: Tx, scope: Scope, input: { accountId: number; permissions: string[]; allProducts: boolean }): Promise<boolean> {
  const inserted = await tx
    .insertInto('memberships')
    .values({
      workspace_id: scope.workspaceId,
      account_id: input.accountId,
      permissions: sql`${input.permissions}::text[]`,
      all_products: input.allProducts,
      joined_at: null,
      invited_by: scope.accountId,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'account_id']).doNothing())
    .returning('account_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function updateMember(tx: Tx, scope: Scope, accountId: number, change: { permissions?: string[]; allProducts?: boolean }): Promise<void> {
  const set = {
    ...(change.permissions ? { permissions: sql<string[]>`${change.permissions}::text[]` } : {}),
    ...(change.allProducts !== undefined ? { all_products: change.allProducts } : {}),
  };
  if (Object.keys(set).length === 0) return;
  await tx.updateTable('memberships').set(set).where('workspace_id', '=', scope.workspaceId).where('account_id', '=', accountId).execute();
}

/** Replaces a member's product assignment (none for an all-products member). */
export async function setMemberProducts(tx: Tx, scope: Scope, accountId: number, products: number[]): Promise<void> {
  await tx.deleteFrom('membership_products').where('workspace_id', '=', scope.workspaceId).where('account_id', '=', accountId).execute();
  if (products.length === 0) return;
  await tx
    .insertInto('membership_products')
    .values(products.map((product_id) => ({ workspace_id: scope.workspaceId, account_id: accountId, product_id })))
    .execute();
}

/** Removes a membership; its product assignment and API tokens go with it (foreign keys). */
export async function deleteMember(tx: Tx, scope: Scope, accountId: number): Promise<boolean> {
  const result = await tx.deleteFrom('memberships').where('workspace_id', '=', scope.workspaceId).where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Which of these ids are products of the workspace. */
export async function existingProducts(db: Executor, scope: Scope, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('products').where('workspace_id', '=', scope.workspaceId).where('id', 'in', ids).select('id').execute();
  return new Set(rows.map((r) => r.id));
}
