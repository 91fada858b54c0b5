import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';

export interface ResellerRef {
  id: number;
  name: string;
  kind: string;
  relationship_id: number;
  developer_share_bps: number | null;
}

/**
 * The workspace's reseller relationships the caller may see: every one for an
 * all-products member; for a product-scoped member only resellers with sales
 * of the member's products (knowing the others would reveal business outside
 * their assignment).
 */
export async function visibleResellers(db: Executor, scope: Scope, options: { activeOnly: boolean }): Promise<ResellerRef[]> {
  let query = db
    .selectFrom('reseller_relationships as rr')
    .innerJoin('resellers as r', 'r.id', 'rr.reseller_id')
    .where('rr.workspace_id', '=', scope.workspaceId)
    .select(['r.id', 'r.name', 'r.kind', 'rr.id as relationship_id', 'rr.developer_share_bps'])
    .orderBy('r.name')
    .orderBy('r.id');
  if (options.activeOnly) query = query.where('rr.status', '=', 'active');
  if (scope.products !== 'all') {
    const ids = [...scope.products];
    if (ids.length === 0) return [];
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('order_items as i')
          .select(sql`1`.as('one'))
          .where('i.workspace_id', '=', scope.workspaceId)
          .whereRef('i.reseller_id', '=', 'rr.reseller_id')
          .where('i.product_id', '=', sql<number>`any(${ids}::int[])`),
      ),
    );
  }
  return query.execute();
}

export async function workspaceResellerIds(db: Executor, scope: Scope): Promise<Set<number>> {
  const rows = await db.selectFrom('reseller_relationships').where('workspace_id', '=', scope.workspaceId).select('reseller_id').execute();
  return new Set(rows.map((r) => r.reseller_id));
}
