import { sql } from 'kysely';
import type { CustomerScope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';

// Delivery files the buyer may download: files kept in private storage of the products they are
// entitled to right now (an active entitlement whose period has begun and not ended; a fully
// refunded item's entitlement is revoked, so its product's files are gone from here).

export interface DownloadRecord {
  id: string;
  product_id: number;
  product: string;
  filename: string;
  platform: string;
  type: string;
  version: string | null;
  size_bytes: number | null;
  uploaded_at: Date;
  changelog: string | null;
  release_date: Date | string | null;
}

function entitledFiles(db: Executor, customer: CustomerScope) {
  return db
    .selectFrom('product_files as f')
    .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 'f.workspace_id').onRef('p.id', '=', 'f.product_id'))
    .leftJoin('product_versions as v', (j) => j.onRef('v.workspace_id', '=', 'f.workspace_id').onRef('v.product_id', '=', 'f.product_id').onRef('v.version', '=', 'f.version'))
    .where('f.workspace_id', '=', customer.workspaceId)
    .where('f.managed', '=', true)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('entitlements as e')
          .select(sql`1`.as('one'))
          .where('e.workspace_id', '=', customer.workspaceId)
          .where('e.customer_id', '=', customer.accountId)
          .whereRef('e.product_id', '=', 'f.product_id')
          .where('e.status', '=', 'active')
          .where('e.starts_at', '<=', sql<Date>`now()`)
          .where((eb) => eb.or([eb('e.ends_at', 'is', null), eb('e.ends_at', '>', sql<Date>`now()`)])),
      ),
    )
    .select(['f.id', 'f.product_id', 'p.name as product', 'f.filename', 'f.platform', 'f.type', 'f.version', 'f.size_bytes', 'f.uploaded_at', 'v.changelog', 'v.release_date']);
}

export async function listDownloads(db: Executor, customer: CustomerScope): Promise<DownloadRecord[]> {
  return entitledFiles(db, customer).orderBy('p.name').orderBy('f.uploaded_at', 'desc').orderBy('f.id').execute();
}

export async function findDownload(db: Executor, customer: CustomerScope, fileId: string): Promise<DownloadRecord | undefined> {
  return entitledFiles(db, customer).where('f.id', '=', fileId).executeTakeFirst();
}
