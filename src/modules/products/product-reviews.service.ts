import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { ReviewStatus } from '../../platform/db/schema.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import * as repo from './product-reviews.repo.js';
import type { ModerateBody, ReviewImportBody, ReviewListQuery, ReviewRecord } from './product-reviews.schemas.js';
import { productRecordOrThrow, recordProductEvent } from './products.service.js';

// Reviews (contract 2.12): stored records with a moderation status; `verifiedPurchase` is
// computed from the reviewer's entitlements at read time, so it follows refunds and grants.

export const toReviewRecord = (r: repo.ReviewRow): ReviewRecord => ({
  id: r.id,
  productId: r.product_id,
  rating: r.rating,
  title: r.title,
  body: r.body,
  status: r.status,
  customerName: r.customer_name,
  customerEmail: r.customer_email,
  customerId: r.customer_ref,
  imported: r.imported,
  verified: r.verified,
  verifiedPurchase: r.verified_purchase,
  metadata: r.metadata ?? {},
  createdAt: r.created_at.toISOString(),
});

/** Newest reviews of a product in any status (the caller reads private reviews). */
export async function latestReviews(db: Executor, scope: Scope, productId: number, limit: number): Promise<ReviewRecord[]> {
  return (await repo.listReviews(db, scope, productId, {}, { limit, offset: 0 })).map(toReviewRecord);
}

export async function listReviews(db: Db, scope: Scope, productId: number, query: ReviewListQuery) {
  await productRecordOrThrow(db, scope, productId);
  const { page, pageSize, offset } = pageWindow(query);
  const filter = { status: query.status };
  const [rows, total] = await Promise.all([
    repo.listReviews(db, scope, productId, filter, { limit: pageSize, offset }),
    repo.countReviews(db, scope, productId, filter),
  ]);
  return { rows: rows.map(toReviewRecord), total, page, pageSize };
}

/** Counts by status, the published ratings' distribution and their average. */
export async function reviewSummary(db: Executor, scope: Scope, productId: number) {
  return summaryOf(await repo.countByStatusAndRating(db, scope, productId));
}

/** The summary of the counts by status and rating. */
export function summaryOf(rows: Array<{ status: ReviewStatus; rating: number; n: number }>) {
  const byStatus: Record<ReviewStatus, number> = { published: 0, pending: 0, hidden: 0 };
  const distribution: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 };
  let sum = 0;
  for (const r of rows) {
    byStatus[r.status] += r.n;
    if (r.status === 'published') {
      distribution[String(r.rating)] = (distribution[String(r.rating)] ?? 0) + r.n;
      sum += r.rating * r.n;
    }
  }
  const published = byStatus.published;
  // Two decimals, computed from integers (the average is a display value, not money).
  const average = published === 0 ? null : Math.round((sum * 100) / published) / 100;
  return { total: published + byStatus.pending + byStatus.hidden, ...byStatus, averageRating: average, ratingCount: published, distribution };
}

/**
 * Imports reviews for a product in one transaction. A reviewer whose e-mail is a customer of
 * the workspace is linked to them (which makes `verifiedPurchase` possible); `externalId`
 * makes a re-import create nothing twice.
 */
export async function importReviews(db: Executor, scope: Scope, productId: number, body: ReviewImportBody) {
  return inTransaction(db, async (tx) => {
    await productRecordOrThrow(tx, scope, productId);
    const emails = [...new Set(body.reviews.map((r) => r.customerEmail?.trim().toLowerCase()).filter((e): e is string => Boolean(e)))];
    const accountOf = await repo.customerAccountsByEmail(tx, scope, emails);
    const insertedCount = await repo.insertImportedReviews(
      tx,
      scope,
      productId,
      body.reviews.map((r) => ({
        accountId: r.customerEmail ? (accountOf.get(r.customerEmail.trim().toLowerCase()) ?? null) : null,
        rating: r.rating,
        title: r.title ?? '',
        body: r.body ?? '',
        status: r.status ?? 'published',
        customerName: r.customerName ?? null,
        customerEmail: r.customerEmail?.trim() ?? null,
        verified: r.verified ?? false,
        externalId: r.externalId ?? null,
        metadata: r.metadata ?? {},
        createdAt: r.createdAt,
      })),
    );
    await recordProductEvent(tx, scope, { productId, kind: 'reviews.imported', data: { received: body.reviews.length, inserted: insertedCount } });
    return { importedCount: body.reviews.length, insertedCount };
  });
}

export async function moderateReview(db: Db, scope: Scope, productId: number, reviewId: number, body: ModerateBody): Promise<ReviewRecord> {
  return inTransaction(db, async (tx) => {
    await productRecordOrThrow(tx, scope, productId);
    const before = await repo.lockReviewStatus(tx, scope, productId, reviewId);
    if (!before) throw notFound('Review');
    await repo.setReviewStatus(tx, scope, productId, reviewId, body.status);
    await recordProductEvent(tx, scope, { productId, kind: 'review.moderated', data: { reviewId, from: before, to: body.status, note: body.note ?? null } });
    const row = await repo.findReview(tx, scope, productId, reviewId);
    if (!row) throw notFound('Review');
    return toReviewRecord(row);
  });
}
