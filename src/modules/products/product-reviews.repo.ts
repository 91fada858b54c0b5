import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductReviewsTable, ReviewStatus } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

/** A review as the routes read it: the stored columns, the reviewer's customer id and whether they hold the product now. */
export type ReviewRow = Pick<
  Selectable<ProductReviewsTable>,
  'id' | 'product_id' | 'rating' | 'title' | 'body' | 'status' | 'customer_name' | 'customer_email' | 'imported' | 'verified' | 'metadata' | 'created_at'
> & { customer_ref: number | null; verified_purchase: boolean };

function selectReviews(db: Executor, scope: Scope, productId: number) {
  return db
    .selectFrom('product_reviews as r')
    .where('r.workspace_id', '=', scope.workspaceId)
    .where('r.product_id', '=', productId)
    .select([
      'r.id', 'r.product_id', 'r.rating', 'r.title', 'r.body', 'r.status', 'r.customer_name', 'r.customer_email', 'r.imported', 'r.verified', 'r.metadata', 'r.created_at',
      sql<number | null>`(select dc.id from developer_customers dc where dc.workspace_id = r.workspace_id and dc.account_id = r.account_id)`.as('customer_ref'),
      sql<boolean>`exists (select 1 from entitlements e where e.workspace_id = r.workspace_id and e.customer_id = r.account_id
        and e.product_id = r.product_id and e.status = 'active' and (e.ends_at is null or e.ends_at > now()))`.as('verified_purchase'),
    ]);
}

/** Newest first, in any status or in one. */
export async function listReviews(
  db: Executor,
  scope: Scope,
  productId: number,
  filter: { status?: ReviewStatus | undefined },
  page: { limit: number; offset: number },
): Promise<ReviewRow[]> {
  let rows = selectReviews(db, scope, productId);
  if (filter.status) rows = rows.where('r.status', '=', filter.status);
  return rows.orderBy('r.id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countReviews(db: Executor, scope: Scope, productId: number, filter: { status?: ReviewStatus | undefined }): Promise<number> {
  let count = db.selectFrom('product_reviews').where('workspace_id', '=', scope.workspaceId).where('product_id', '=', productId);
  if (filter.status) count = count.where('status', '=', filter.status);
  return (await count.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
}

export async function findReview(db: Executor, scope: Scope, productId: number, reviewId: number): Promise<ReviewRow | undefined> {
  return selectReviews(db, scope, productId).where('r.id', '=', reviewId).executeTakeFirst();
}

/** Counts by status and rating, from the (workspace, product, status) index with the rating included. */
export async function countByStatusAndRating(db: Executor, scope: Scope, productId: number) {
  return db
    .selectFrom('product_reviews')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .groupBy(['status', 'rating'])
    .select(['status', 'rating', sql<number>`count(*)::int`.as('n')])
    .execute();
}

/** The accounts of the workspace's customers with these (lower-cased) e-mail addresses. */
export async function customerAccountsByEmail(db: Executor, scope: Scope, emails: string[]): Promise<Map<string, number>> {
  if (emails.length === 0) return new Map();
  const rows = await db
    .selectFrom('developer_customers')
    .where('workspace_id', '=', scope.workspaceId)
    .where(sql<string>`lower(email)`, '=', sql<string>`any(${emails}::text[])`)
    .select([sql<string>`lower(email)`.as('email'), 'account_id'])
    .execute();
  return new Map(rows.map((a) => [a.email, a.account_id]));
}

export interface NewReview {
  accountId: number | null;
  rating: number;
  title: string;
  body: string;
  status: ReviewStatus;
  customerName: string | null;
  customerEmail: string | null;
  verified: boolean;
  externalId: string | null;
  metadata: Record<string, unknown>;
  createdAt?: string | undefined;
}

/** Inserts imported reviews; one already imported under its `externalId` is skipped. Returns how many were inserted. */
export async function insertImportedReviews(tx: Tx, scope: Scope, productId: number, reviews: NewReview[]): Promise<number> {
  const inserted = await tx
    .insertInto('product_reviews')
    .values(
      reviews.map((r) => ({
        workspace_id: scope.workspaceId,
        product_id: productId,
        account_id: r.accountId,
        rating: r.rating,
        title: r.title,
        body: r.body,
        status: r.status,
        customer_name: r.customerName,
        customer_email: r.customerEmail,
        imported: true,
        verified: r.verified,
        external_id: r.externalId,
        metadata: JSON.stringify(r.metadata),
        ...(r.createdAt ? { created_at: r.createdAt } : {}),
      })),
    )
    .onConflict((oc) => oc.columns(['product_id', 'external_id']).where('external_id', 'is not', null).doNothing())
    .returning('id')
    .execute();
  return inserted.length;
}

/** The review's status, its row locked until the transaction ends. */
export async function lockReviewStatus(tx: Tx, scope: Scope, productId: number, reviewId: number): Promise<ReviewStatus | undefined> {
  const row = await tx
    .selectFrom('product_reviews')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', reviewId)
    .select('status')
    .forUpdate()
    .executeTakeFirst();
  return row?.status;
}

export async function setReviewStatus(tx: Tx, scope: Scope, productId: number, reviewId: number, status: ReviewStatus): Promise<void> {
  await tx
    .updateTable('product_reviews')
    .set({ status, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('id', '=', reviewId)
    .execute();
}
