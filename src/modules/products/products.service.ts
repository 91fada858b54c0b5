import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import { newProductAppId } from '../../platform/ids/codes.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import * as repo from './products.repo.js';
import type { CreateProductBody, ProductListQuery, ProductRow, UpdateProductBody } from './products.schemas.js';

export type { ProductRecord, ProductRef } from './products.repo.js';

export const listVisibleProducts = (db: Executor, scope: Scope) => repo.listVisibleProducts(db, scope);

export async function getVisibleProductOrThrow(db: Executor, scope: Scope, productId: number): Promise<repo.ProductRef> {
  const product = await repo.findVisibleProduct(db, scope, productId);
  if (!product) throw notFound('Product');
  return product;
}

/** The products of `ids` in the caller's scope, by id (any other id is left out). */
export async function visibleProducts(db: Executor, scope: Scope, ids: number[]): Promise<Map<number, repo.ProductRef>> {
  return new Map((await repo.findVisibleProducts(db, scope, ids)).map((p) => [p.id, p]));
}

/** The products of `ids` in the caller's scope, by id, or 404 when any of them is not (another workspace's, unassigned or unknown). */
export async function visibleProductsOrThrow(db: Executor, scope: Scope, ids: number[]): Promise<Map<number, repo.ProductRef>> {
  const found = await visibleProducts(db, scope, ids);
  if (ids.some((id) => !found.has(id))) throw notFound('Product');
  return found;
}

/** A product of the caller's scope, or 404: another workspace's or an unassigned product is not found. */
export async function productRecordOrThrow(db: Executor, scope: Scope, productId: number): Promise<repo.ProductRecord> {
  const product = await repo.findProductRecord(db, scope, productId);
  if (!product) throw notFound('Product');
  return product;
}

export function toProductRow(p: repo.ProductRecord): ProductRow {
  const currency = p.currency.trim();
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    status: p.status,
    productAppId: p.app_id,
    appId: p.app_id,
    priceCents: p.price_cents,
    price: formatMajorUnits(p.price_cents, currency),
    currency,
    maxActivations: p.max_activations,
    offlineGraceDays: p.offline_grace_days,
    storefrontUrl: p.storefront_url,
    currentVersion: p.current_version,
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at.toISOString(),
  };
}

export async function listProducts(db: Db, scope: Scope, query: ProductListQuery) {
  const { page, pageSize, offset } = pageWindow(query);
  const filter = { search: query.search?.trim() || undefined, status: query.status };
  const [rows, total] = await Promise.all([repo.listProducts(db, scope, filter, { limit: pageSize, offset }), repo.countProducts(db, scope, filter)]);
  return { rows: rows.map(toProductRow), total, page, pageSize };
}

export async function getProduct(db: Db, scope: Scope, productId: number): Promise<ProductRow> {
  return toProductRow(await productRecordOrThrow(db, scope, productId));
}

/**
 * Creates a product with its live productAppId (and the credential that carries it). Used by
 * the API, the fixtures and the operator CLI, so every product is made the same way.
 */
export async function createProduct(db: Executor, scope: Scope, body: CreateProductBody): Promise<repo.ProductRecord> {
  return inTransaction(db, async (tx) => {
    const product = await repo.insertProduct(tx, scope.workspaceId, {
      name: body.name.trim(),
      description: body.description ?? null,
      status: body.status ?? 'draft',
      appId: newProductAppId(),
      priceCents: body.priceCents ?? 0,
      currency: (body.currency ?? 'usd').toLowerCase(),
      maxActivations: body.maxActivations ?? 3,
      offlineGraceDays: body.offlineGraceDays ?? 14,
      storefrontUrl: body.storefrontUrl ?? null,
      currentVersion: body.currentVersion ?? null,
    });
    await repo.recordProductEvent(tx, scope, { productId: product.id, kind: 'product.created', data: { name: product.name } });
    return product;
  });
}

export async function updateProduct(db: Db, scope: Scope, productId: number, body: UpdateProductBody): Promise<ProductRow> {
  return inTransaction(db, async (tx) => {
    const before = await repo.findProductRecord(tx, scope, productId, true);
    if (!before) throw notFound('Product');
    const changes: repo.ProductChanges = {
      ...(body.name !== undefined ? { name: body.name.trim() } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.priceCents !== undefined ? { price_cents: body.priceCents } : {}),
      ...(body.currency !== undefined ? { currency: body.currency.toLowerCase() } : {}),
      ...(body.maxActivations !== undefined ? { max_activations: body.maxActivations } : {}),
      ...(body.offlineGraceDays !== undefined ? { offline_grace_days: body.offlineGraceDays } : {}),
      ...(body.storefrontUrl !== undefined ? { storefront_url: body.storefrontUrl } : {}),
      ...(body.currentVersion !== undefined ? { current_version: body.currentVersion } : {}),
    };
    const after = await repo.updateProduct(tx, scope, productId, changes);
    await repo.recordProductEvent(tx, scope, { productId, kind: 'product.updated', data: { fields: Object.keys(changes) } });
    return toProductRow(after);
  });
}

export const recordProductEvent = (tx: Tx, scope: Scope, event: { productId: number; kind: string; data?: Record<string, unknown> }) =>
  repo.recordProductEvent(tx, scope, event);

export const workspaceStorefront = (db: Executor, scope: Scope) => repo.workspaceStorefront(db, scope);

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
