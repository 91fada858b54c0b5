import type { Scope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import * as repo from './products.repo.js';

export type { ProductRef } from './products.repo.js';

export const listVisibleProducts = (db: Executor, scope: Scope) => repo.listVisibleProducts(db, scope);

export async function getVisibleProductOrThrow(db: Executor, scope: Scope, productId: number): Promise<repo.ProductRef> {
  const product = await repo.findVisibleProduct(db, scope, productId);
  if (!product) throw notFound('Product');
  return product;
}

/**
 * Looks products up by id or by (case-insensitive) name among the products
 * the caller can see. Used to resolve import rows and product mappings.
 */
export class ProductResolver {
  private constructor(
    private readonly byId: Map<number, repo.ProductRef>,
    private readonly byName: Map<string, repo.ProductRef>,
  ) {}

  static async load(db: Executor, scope: Scope): Promise<ProductResolver> {
    const products = await repo.listVisibleProducts(db, scope);
    const byName = new Map<string, repo.ProductRef>();
    for (const p of products) if (!byName.has(p.name.toLowerCase())) byName.set(p.name.toLowerCase(), p);
    return new ProductResolver(new Map(products.map((p) => [p.id, p])), byName);
  }

  get first(): repo.ProductRef | undefined {
    return this.byId.values().next().value;
  }

  byIdOrUndefined(id: number): repo.ProductRef | undefined {
    return this.byId.get(id);
  }

  byNameOrUndefined(name: string): repo.ProductRef | undefined {
    return this.byName.get(name.trim().toLowerCase());
  }
}
