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

declare const recipientBrand: unique symbol;

/**
 * A partner (someone outside the developer's team) signed in to the partner portal. Built only by
 * the policy hook from a recipient session; portal services accept this type and nothing else,
 * so a developer scope can never reach them (and a recipient scope never reaches a developer
 * service). It carries no workspace: what a recipient may see follows from their agreements.
 */
export interface RecipientScope {
  readonly [recipientBrand]: true;
  readonly recipientId: number;
  readonly email: string;
  /** The session proved the e-mail address (a sign-in link, or an operator who vouches for it). */
  readonly verified: boolean;
  readonly sessionId: number;
}

export function createRecipientScope(r: { recipientId: number; email: string; verified: boolean; sessionId: number }): RecipientScope {
  return Object.freeze({ ...r }) as unknown as RecipientScope;
}

declare const developerBrand: unique symbol;

/**
 * A developer signed in to the console (a session opened with an e-mailed link), before any
 * workspace is chosen. Built only by the policy hook from a session token; the session routes
 * accept this type. Workspace routes get a `Scope` from the same session (the `account` policy).
 */
export interface DeveloperScope {
  readonly [developerBrand]: true;
  readonly accountId: number;
  readonly email: string;
  readonly sessionId: number;
  readonly expiresAt: Date;
}

export function createDeveloperScope(d: { accountId: number; email: string; sessionId: number; expiresAt: Date }): DeveloperScope {
  return Object.freeze({ ...d }) as unknown as DeveloperScope;
}

declare const customerBrand: unique symbol;

/**
 * A buyer signed in to one workspace's customer portal. Built only by the policy hook from a
 * customer portal session; portal services accept this type and nothing else. The same address
 * at another workspace is another customer with another session: nothing here reaches across.
 */
export interface CustomerScope {
  readonly [customerBrand]: true;
  readonly workspaceId: number;
  /** The buyer's relationship with the workspace (`developer_customers.id`, the API's `customer_id`). */
  readonly customerId: number;
  /** The buyer's account: orders, serials and entitlements point at it (always read with the workspace). */
  readonly accountId: number;
  readonly email: string;
  readonly sessionId: number;
  readonly expiresAt: Date;
}

export function createCustomerScope(c: { workspaceId: number; customerId: number; accountId: number; email: string; sessionId: number; expiresAt: Date }): CustomerScope {
  return Object.freeze({ ...c }) as unknown as CustomerScope;
}
