import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductStatus, ProductsTable } from '../../platform/db/schema.js';
import { announceOnCommit } from '../../platform/db/committed-changes.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

export interface ProductRef {
  id: number;
  name: string;
  maxActivations: number;
  priceCents: number;
  currency: string;
}

export type ProductRecord = Omit<Selectable<ProductsTable>, 'workspace_id'>;

const RECORD = [
  'id', 'name', 'description', 'status', 'app_id', 'price_cents', 'currency', 'max_activations', 'offline_grace_days', 'storefront_url',
  'current_version', 'downloads_total', 'created_at', 'updated_at',
] as const;

/** Every product query starts here: the workspace predicate plus the caller's product scope. */
function visible(db: Executor, scope: Scope) {
  let query = db.selectFrom('products').where('workspace_id', '=', scope.workspaceId);
  if (scope.products !== 'all') query = query.where('id', '=', sql<number>`any(${[...scope.products]}::int[])`);
  return query;
}

/** Products of the caller's workspace that the caller is assigned to. */
export async function listVisibleProducts(db: Executor, scope: Scope): Promise<ProductRef[]> {
  if (scope.products !== 'all' && scope.products.size === 0) return [];
  return visible(db, scope).select(['id', 'name', 'max_activations as maxActivations', 'price_cents as priceCents', 'currency']).orderBy('id').execute();
}

export async function findVisibleProduct(db: Executor, scope: Scope, productId: number): Promise<ProductRef | undefined> {
  if (scope.products !== 'all' && !scope.products.has(productId)) return undefined;
  return visible(db, scope)
    .where('id', '=', productId)
    .select(['id', 'name', 'max_activations as maxActivations', 'price_cents as priceCents', 'currency'])
    .executeTakeFirst();
}

/** The products of `ids` in the caller's scope (any other id is left out), in one statement. */
export async function findVisibleProducts(db: Executor, scope: Scope, ids: number[]): Promise<ProductRef[]> {
  const wanted = [...new Set(ids)].filter((id) => scope.products === 'all' || scope.products.has(id));
  if (wanted.length === 0) return [];
  return visible(db, scope)
    .where('id', 'in', wanted)
    .select(['id', 'name', 'max_activations as maxActivations', 'price_cents as priceCents', 'currency'])
    .orderBy('id')
    .execute();
}

export async function findProductRecord(db: Executor, scope: Scope, productId: number, lock = false): Promise<ProductRecord | undefined> {
  if (scope.products !== 'all' && !scope.products.has(productId)) return undefined;
  let query = visible(db, scope).where('id', '=', productId).select(RECORD);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface ProductFilter {
  search?: string | undefined;
  status?: ProductStatus | undefined;
}

const escapeLike = (term: string) => term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

function filtered(db: Executor, scope: Scope, filter: ProductFilter) {
  let query = visible(db, scope);
  if (filter.search) query = query.where(sql<string>`lower(name)`, 'like', `%${escapeLike(filter.search)}%`);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query;
}

/** Newest first. A workspace has tens or hundreds of products, so OFFSET paging is enough. */
export async function listProducts(db: Executor, scope: Scope, filter: ProductFilter, page: { limit: number; offset: number }): Promise<ProductRecord[]> {
  if (scope.products !== 'all' && scope.products.size === 0) return [];
  return filtered(db, scope, filter).select(RECORD).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countProducts(db: Executor, scope: Scope, filter: ProductFilter): Promise<number> {
  if (scope.products !== 'all' && scope.products.size === 0) return 0;
  return (await filtered(db, scope, filter).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
}

export interface NewProduct {
  name: string;
  description?: string | null;
  status: ProductStatus;
  appId: string;
  priceCents: number;
  currency: string;
  maxActivations: number;
  offlineGraceDays: number;
  storefrontUrl?: string | null;
  currentVersion?: string | null;
}

/** Inserts a product and its live credential (the productAppId) in one statement. */
export async function insertProduct(tx: Tx, workspaceId: number, p: NewProduct): Promise<ProductRecord> {
  const result = await sql<ProductRecord>`
    with product as (
      insert into products (workspace_id, name, description, status, app_id, price_cents, currency, max_activations, offline_grace_days,
                            storefront_url, current_version)
      values (${workspaceId}, ${p.name}, ${p.description ?? null}, ${p.status}, ${p.appId}, ${p.priceCents}, ${p.currency}, ${p.maxActivations},
              ${p.offlineGraceDays}, ${p.storefrontUrl ?? null}, ${p.currentVersion ?? null})
      returning *
    ), credential as (
      insert into product_credentials (workspace_id, product_id, environment, app_id)
      select workspace_id, id, 'live', app_id from product
    )
    select ${sql.join(RECORD.map((c) => sql.ref(c)))} from product`.execute(tx);
  return result.rows[0]!;
}

export type ProductChanges = Partial<{
  name: string;
  description: string | null;
  status: ProductStatus;
  price_cents: number;
  currency: string;
  max_activations: number;
  offline_grace_days: number;
  storefront_url: string | null;
  current_version: string | null;
}>;

export async function updateProduct(tx: Tx, scope: Scope, productId: number, changes: ProductChanges): Promise<ProductRecord> {
  const record = await tx
    .updateTable('products')
    .set({ ...changes, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', productId)
    .returning(RECORD)
    .executeTakeFirstOrThrow();
  // Its status and storefront are cached by referral links: dropped on this instance once this commits.
  announceOnCommit(tx, 'products', scope.workspaceId);
  return record;
}

export async function workspaceStorefront(db: Executor, scope: Scope): Promise<string | null> {
  const row = await db.selectFrom('workspaces').where('id', '=', scope.workspaceId).select('storefront_url').executeTakeFirst();
  return row?.storefront_url ?? null;
}

export async function recordProductEvent(
  tx: Executor,
  scope: Scope,
  event: { productId: number; kind: string; data?: Record<string, unknown> },
): Promise<void> {
  await tx
    .insertInto('product_events')
    .values({ workspace_id: scope.workspaceId, product_id: event.productId, kind: event.kind, actor_account_id: scope.accountId || null, data: JSON.stringify(event.data ?? {}) })
    .execute();
}
