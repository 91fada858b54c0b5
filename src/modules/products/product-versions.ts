import { Type, type Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import type { ProductRecord } from './products.repo.js';
import { productRecordOrThrow, recordProductEvent } from './products.service.js';

// Version records (contract 2.11): repository, use cases and schemas of one small sub-domain.

export const VersionRecord = Type.Object(
  {
    id: Type.Union([Type.Integer({ minimum: 1 }), Type.String()], { description: 'A saved record’s id, or "derived" for the version the catalogue names' }),
    version: Type.String(),
    changelog: Type.String(),
    releaseDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    isCurrent: Type.Boolean(),
    createdAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'VersionRecord', additionalProperties: true },
);
export type VersionRecord = Static<typeof VersionRecord>;

export const CreateVersionBody = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 50 }),
    changelog: Type.Optional(Type.String({ maxLength: 20_000 })),
    releaseDate: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    isCurrent: Type.Optional(Type.Boolean({ description: 'Make this the current version (the previous current one stops being current)' })),
  },
  { additionalProperties: true },
);
export type CreateVersionBody = Static<typeof CreateVersionBody>;

export const UpdateVersionBody = Type.Object(
  {
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    changelog: Type.Optional(Type.String({ maxLength: 20_000 })),
    releaseDate: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    isCurrent: Type.Optional(Type.Literal(true, { description: 'Only `true`: there is always exactly one current version; make another current instead' })),
  },
  { additionalProperties: true, minProperties: 1 },
);
export type UpdateVersionBody = Static<typeof UpdateVersionBody>;

interface VersionRow {
  id: number;
  version: string;
  changelog: string;
  release_date: Date | null;
  is_current: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['id', 'version', 'changelog', 'release_date', 'is_current', 'created_at', 'updated_at'] as const;

const toRecord = (v: VersionRow): VersionRecord => ({
  id: v.id,
  version: v.version,
  changelog: v.changelog,
  releaseDate: v.release_date?.toISOString() ?? null,
  isCurrent: v.is_current,
  createdAt: v.created_at.toISOString(),
  updatedAt: v.updated_at.toISOString(),
});

async function savedVersions(db: Executor, scope: Scope, productId: number): Promise<VersionRow[]> {
  return db
    .selectFrom('product_versions')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .select(COLUMNS)
    .orderBy('is_current', 'desc')
    .orderBy(sql`release_date desc nulls last`)
    .orderBy('id', 'desc')
    .execute() as Promise<VersionRow[]>;
}

/**
 * The product's versions: the saved records (current first, then newest release), or — with
 * none saved (rule 8) — one derived from the catalogue's `currentVersion`; nothing when the
 * catalogue names none either.
 */
export async function versionsOf(db: Executor, scope: Scope, product: Pick<ProductRecord, 'id' | 'current_version' | 'created_at' | 'updated_at'>): Promise<VersionRecord[]> {
  const saved = await savedVersions(db, scope, product.id);
  if (saved.length > 0) return saved.map(toRecord);
  if (!product.current_version) return [];
  return [
    {
      id: 'derived',
      version: product.current_version,
      changelog: '',
      releaseDate: null,
      isCurrent: true,
      createdAt: product.created_at.toISOString(),
      updatedAt: product.updated_at.toISOString(),
    },
  ];
}

export async function listVersions(db: Db, scope: Scope, productId: number): Promise<VersionRecord[]> {
  return versionsOf(db, scope, await productRecordOrThrow(db, scope, productId));
}

/** Makes `versionId` the only current version and names it in the catalogue. The product row is locked first. */
async function makeCurrent(tx: Tx, scope: Scope, productId: number, versionId: number, version: string): Promise<void> {
  await tx
    .updateTable('product_versions')
    .set({ is_current: false, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('is_current', '=', true)
    .where('id', '!=', versionId)
    .execute();
  await tx.updateTable('product_versions').set({ is_current: true }).where('id', '=', versionId).execute();
  await tx.updateTable('products').set({ current_version: version, updated_at: new Date() }).where('workspace_id', '=', scope.workspaceId).where('id', '=', productId).execute();
}

export async function createVersion(db: Db, scope: Scope, productId: number, body: CreateVersionBody): Promise<VersionRecord> {
  return inTransaction(db, async (tx) => {
    const product = await lockedProduct(tx, scope, productId);
    const count = await tx.selectFrom('product_versions').where('product_id', '=', product.id).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const row = (await tx
      .insertInto('product_versions')
      .values({
        workspace_id: scope.workspaceId,
        product_id: productId,
        version: body.version.trim(),
        changelog: body.changelog ?? '',
        release_date: body.releaseDate ?? null,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow()) as VersionRow;
    // The first record is current whatever it says; later ones when they ask to be.
    if (body.isCurrent === true || Number(count.n) === 0) await makeCurrent(tx, scope, productId, row.id, row.version);
    await recordProductEvent(tx, scope, { productId, kind: 'version.created', data: { version: row.version } });
    const saved = await tx.selectFrom('product_versions').where('id', '=', row.id).select(COLUMNS).executeTakeFirstOrThrow();
    return toRecord(saved as VersionRow);
  });
}

export async function updateVersion(db: Db, scope: Scope, productId: number, versionId: number, body: UpdateVersionBody): Promise<VersionRecord> {
  return inTransaction(db, async (tx) => {
    await lockedProduct(tx, scope, productId);
    const updated = (await tx
      .updateTable('product_versions')
      .set({
        ...(body.version !== undefined ? { version: body.version.trim() } : {}),
        ...(body.changelog !== undefined ? { changelog: body.changelog } : {}),
        ...(body.releaseDate !== undefined ? { release_date: body.releaseDate } : {}),
        updated_at: new Date(),
      })
      .where('workspace_id', '=', scope.workspaceId)
      .where('product_id', '=', productId)
      .where('id', '=', versionId)
      .returning(COLUMNS)
      .executeTakeFirst()) as VersionRow | undefined;
    if (!updated) throw notFound('Version');
    if (body.isCurrent === true || (updated.is_current && body.version !== undefined)) await makeCurrent(tx, scope, productId, updated.id, updated.version);
    await recordProductEvent(tx, scope, { productId, kind: 'version.updated', data: { version: updated.version } });
    const saved = await tx.selectFrom('product_versions').where('id', '=', updated.id).select(COLUMNS).executeTakeFirstOrThrow();
    return toRecord(saved as VersionRow);
  });
}

async function lockedProduct(tx: Tx, scope: Scope, productId: number) {
  const product = await tx.selectFrom('products').where('workspace_id', '=', scope.workspaceId).where('id', '=', productId).select(['id']).forUpdate().executeTakeFirst();
  if (!product || (scope.products !== 'all' && !scope.products.has(productId))) throw notFound('Product');
  return product;
}
