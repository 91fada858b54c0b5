import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductFilesTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

export type FileRecord = Omit<Selectable<ProductFilesTable>, 'workspace_id' | 'download_count' | 'uploaded_by'>;

const COLUMNS = ['id', 'product_id', 'filename', 'platform', 'type', 'version', 'managed', 'storage_key', 'external_url', 'content_type', 'size_bytes', 'sha256', 'uploaded_at'] as const;

export async function listFiles(db: Executor, scope: Scope, productId: number): Promise<FileRecord[]> {
  return db
    .selectFrom('product_files')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .select(COLUMNS)
    .orderBy('uploaded_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findFile(db: Executor, scope: Scope, productId: number, fileId: string): Promise<FileRecord | undefined> {
  return db
    .selectFrom('product_files')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', fileId)
    .select(COLUMNS)
    .executeTakeFirst();
}

/** For a private link: the link itself is the credential, so the lookup is by id alone. */
export async function findFileForLink(db: Executor, fileId: string) {
  return db
    .selectFrom('product_files')
    .where('id', '=', fileId)
    .where('managed', '=', true)
    .select(['id', 'workspace_id', 'product_id', 'filename', 'storage_key', 'content_type', 'size_bytes'])
    .executeTakeFirst();
}

export async function insertFile(
  tx: Tx,
  scope: Scope,
  file: Omit<FileRecord, 'uploaded_at'> & { uploadedBy: number | null },
): Promise<FileRecord> {
  const { uploadedBy, ...values } = file;
  return tx
    .insertInto('product_files')
    .values({ ...values, workspace_id: scope.workspaceId, uploaded_by: uploadedBy })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteFile(tx: Tx, scope: Scope, productId: number, fileId: string): Promise<FileRecord | undefined> {
  return tx
    .deleteFrom('product_files')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', fileId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** One completed download: the file's count and the product's total (which outlives deleted files). */
export async function countDownload(db: Executor, workspaceId: number, productId: number, fileId: string): Promise<void> {
  await sql`
    with f as (update product_files set download_count = download_count + 1 where id = ${fileId} returning 1)
    update products set downloads_total = downloads_total + 1 where workspace_id = ${workspaceId} and id = ${productId}`.execute(db);
}
