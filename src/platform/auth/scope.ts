import { type Permission, WILDCARD } from './permissions.js';

declare const scopeBrand: unique symbol;

/**
 * Who is asking and what they may reach. Built once per request by the auth
 * plugin (the only caller of `createScope`) and passed first to every
 * repository function. Nothing else may carry a workspace id into a query.
 */
export interface Scope {
  readonly [scopeBrand]: true;
  readonly accountId: number;
  readonly workspaceId: number;
  readonly owner: boolean;
  readonly permissions: ReadonlySet<string>;
  /** 'all' for all-products members; otherwise the assigned product ids. */
  readonly products: 'all' | ReadonlySet<number>;
}

export interface MembershipFacts {
  accountId: number;
  workspaceId: number;
  owner: boolean;
  permissions: readonly string[];
  allProducts: boolean;
  productIds: readonly number[];
}

export function createScope(m: MembershipFacts): Scope {
  return Object.freeze({
    accountId: m.accountId,
    workspaceId: m.workspaceId,
    owner: m.owner,
    permissions: new Set(m.permissions),
    products: m.owner || m.allProducts ? 'all' : new Set(m.productIds),
  }) as unknown as Scope;
}

export function hasPermission(scope: Scope, permission: Permission): boolean {
  return scope.owner || scope.permissions.has(WILDCARD) || scope.permissions.has(permission);
}

export function canSeeProduct(scope: Scope, productId: number): boolean {
  return scope.products === 'all' || scope.products.has(productId);
}

/** Product ids the caller may see, or null for "every product of the workspace". */
export function scopedProductIds(scope: Scope): number[] | null {
  return scope.products === 'all' ? null : [...scope.products];
}

/**
 * A full-access scope for operator tooling (fixtures, demo seed) acting on one
 * workspace. Never reachable from HTTP.
 */
export function operatorScope(workspaceId: number, accountId: number): Scope {
  return createScope({ accountId, workspaceId, owner: true, permissions: ['*'], allProducts: true, productIds: [] });
}
