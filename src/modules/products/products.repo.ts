import type { Scope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';

export interface ProductRef {
  id: number;
  name: string;
  maxActivations: number;
  priceCents: number;
  currency: string;
}

/** Products of the caller's workspace that the caller is assigned to. */
export async function listVisibleProducts(db: Executor, scope: Scope): Promise<ProductRef[]> {
  let query = db
    .selectFrom('products')
    .where('workspace_id', '=', scope.workspaceId)
    .select(['id', 'name', 'max_activations as maxActivations', 'price_cents as priceCents', 'currency'])
    .orderBy('id');
  if (scope.products !== 'all') {
    const ids = [...scope.products];
    if (ids.length === 0) return [];
    query = query.where('id', 'in', ids);
  }
  return query.execute();
}

export async function findVisibleProduct(db: Executor, scope: Scope, productId: number): Promise<ProductRef | undefined> {
  if (scope.products !== 'all' && !scope.products.has(productId)) return undefined;
  return db
    .selectFrom('products')
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', productId)
    .select(['id', 'name', 'max_activations as maxActivations', 'price_cents as priceCents', 'currency'])
    .executeTakeFirst();
}
