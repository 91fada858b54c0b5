import type { Scope } from '../../platform/auth/scope.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import * as repo from './product-versions.repo.js';
import type { CreateVersionBody, UpdateVersionBody, VersionRecord } from './product-versions.schemas.js';
import * as products from './products.repo.js';
import { productRecordOrThrow, recordProductEvent } from './products.service.js';

// Version records (contract 2.11).

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

const toRecord = (v: repo.VersionRow): VersionRecord => ({
  id: v.id,
  version: v.version,
  changelog: v.changelog,
  releaseDate: iso(v.release_date),
  isCurrent: v.is_current,
  createdAt: v.created_at.toISOString(),
  updatedAt: v.updated_at.toISOString(),
});

/**
 * The product's versions: the saved records (current first, then newest release), or — with
 * none saved (rule 8) — one derived from the catalogue's `currentVersion`; nothing when the
 * catalogue names none either.
 */
export async function versionsOf(
  db: Executor,
  scope: Scope,
  product: Pick<products.ProductRecord, 'id' | 'current_version' | 'created_at' | 'updated_at'>,
): Promise<VersionRecord[]> {
  return versionsFrom(await repo.savedVersions(db, scope, product.id), product);
}

/** versionsOf from the saved records already read. */
export function versionsFrom(
  saved: repo.VersionRow[],
  product: Pick<products.ProductRecord, 'current_version' | 'created_at' | 'updated_at'>,
): VersionRecord[] {
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

export async function listVersions(db: Executor, scope: Scope, productId: number): Promise<VersionRecord[]> {
  return versionsOf(db, scope, await productRecordOrThrow(db, scope, productId));
}

/** The product row locked for the rest of the transaction: version changes of one product run one at a time. */
async function lockedProduct(tx: Tx, scope: Scope, productId: number) {
  const product = await products.findProductRecord(tx, scope, productId, true);
  if (!product) throw notFound('Product');
  return product;
}

/** Makes the record the only current version and names it in the catalogue. */
async function makeCurrent(tx: Tx, scope: Scope, productId: number, version: repo.VersionRow): Promise<void> {
  await repo.makeCurrent(tx, scope, productId, version.id);
  await products.updateProduct(tx, scope, productId, { current_version: version.version });
}

async function savedRecord(tx: Tx, scope: Scope, productId: number, versionId: number): Promise<VersionRecord> {
  const saved = await repo.findVersion(tx, scope, productId, versionId);
  if (!saved) throw notFound('Version');
  return toRecord(saved);
}

export async function createVersion(db: Executor, scope: Scope, productId: number, body: CreateVersionBody): Promise<VersionRecord> {
  return inTransaction(db, async (tx) => {
    await lockedProduct(tx, scope, productId);
    const count = await repo.countVersions(tx, scope, productId);
    const row = await repo.insertVersion(tx, scope, productId, { version: body.version.trim(), changelog: body.changelog ?? '', releaseDate: body.releaseDate ?? null });
    // The first record is current whatever it says; later ones when they ask to be.
    if (body.isCurrent === true || count === 0) await makeCurrent(tx, scope, productId, row);
    await recordProductEvent(tx, scope, { productId, kind: 'version.created', data: { version: row.version } });
    return savedRecord(tx, scope, productId, row.id);
  });
}

export async function updateVersion(db: Executor, scope: Scope, productId: number, versionId: number, body: UpdateVersionBody): Promise<VersionRecord> {
  return inTransaction(db, async (tx) => {
    await lockedProduct(tx, scope, productId);
    const updated = await repo.updateVersion(tx, scope, productId, versionId, {
      ...(body.version !== undefined ? { version: body.version.trim() } : {}),
      ...(body.changelog !== undefined ? { changelog: body.changelog } : {}),
      ...(body.releaseDate !== undefined ? { release_date: body.releaseDate } : {}),
    });
    if (!updated) throw notFound('Version');
    if (body.isCurrent === true || (updated.is_current && body.version !== undefined)) await makeCurrent(tx, scope, productId, updated);
    await recordProductEvent(tx, scope, { productId, kind: 'version.updated', data: { version: updated.version } });
    return savedRecord(tx, scope, productId, updated.id);
  });
}
