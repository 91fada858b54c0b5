import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductVersionsTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

export type VersionRow = Omit<Selectable<ProductVersionsTable>, 'workspace_id' | 'product_id'>;

const COLUMNS = ['id', 'version', 'changelog', 'release_date', 'is_current', 'created_at', 'updated_at'] as const;

/** The product's saved records: the current one first, then newest release. */
export async function savedVersions(db: Executor, scope: Scope, productId: number): Promise<VersionRow[]> {
  return db
    .selectFrom('product_versions')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .select(COLUMNS)
    .orderBy('is_current', 'desc')
    .orderBy(sql`release_date desc nulls last`)
    .orderBy('id', 'desc')
    .execute();
}

export async function countVersions(db: Executor, scope: Scope, productId: number): Promise<number> {
  const row = await db
    .selectFrom('product_versions')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findVersion(db: Executor, scope: Scope, productId: number, versionId: number): Promise<VersionRow | undefined> {
  return db
    .selectFrom('product_versions')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', versionId)
    .select(COLUMNS)
    .executeTakeFirst();
}

export async function insertVersion(
  tx: Tx,
  scope: Scope,
  productId: number,
  v: { version: string; changelog: string; releaseDate: string | null },
): Promise<VersionRow> {
  return tx
    .insertInto('product_versions')
    .values({ workspace_id: scope.workspaceId, product_id: productId, version: v.version, changelog: v.changelog, release_date: v.releaseDate })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export type VersionChanges = Partial<{ version: string; changelog: string; release_date: string | null }>;

export async function updateVersion(tx: Tx, scope: Scope, productId: number, versionId: number, changes: VersionChanges): Promise<VersionRow | undefined> {
  return tx
    .updateTable('product_versions')
    .set({ ...changes, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', versionId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Makes `versionId` the product's only current record (the product row is locked by the caller). */
export async function makeCurrent(tx: Tx, scope: Scope, productId: number, versionId: number): Promise<void> {
  await tx
    .updateTable('product_versions')
    .set({ is_current: false, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('is_current', '=', true)
    .where('id', '!=', versionId)
    .execute();
  await tx
    .updateTable('product_versions')
    .set({ is_current: true })
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', versionId)
    .execute();
}
