import { Type, type Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { ReviewStatus } from '../../platform/db/schema.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import { PagingQuery } from '../../platform/http/schemas.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import { productRecordOrThrow, recordProductEvent } from './products.service.js';

// Reviews (contract 2.12): stored records with a moderation status; `verifiedPurchase` is
// computed from the reviewer's entitlements at read time, so it follows refunds and grants.

export const REVIEW_STATUSES = ['published', 'pending', 'hidden'] as const;
const Status = Type.Union(REVIEW_STATUSES.map((s) => Type.Literal(s)));

export const ReviewRecord = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    productId: Type.Integer({ minimum: 1 }),
    rating: Type.Number({ minimum: 1, maximum: 5 }),
    title: Type.String(),
    body: Type.String(),
    status: Status,
    customerName: Type.Union([Type.String(), Type.Null()]),
    customerEmail: Type.Union([Type.String(), Type.Null()]),
    customerId: Type.Union([Type.Integer(), Type.Null()], { description: 'The reviewer’s customer_id in this workspace, when they are a customer' }),
    imported: Type.Boolean(),
    verified: Type.Boolean({ description: 'The reviewer’s identity was verified by the source' }),
    verifiedPurchase: Type.Boolean({ description: 'The reviewer holds an active entitlement to the product now' }),
    metadata: Type.Object({}, { additionalProperties: true }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'ReviewRecord', additionalProperties: true },
);
export type ReviewRecord = Static<typeof ReviewRecord>;

export const ReviewListQuery = Type.Object({ ...PagingQuery, status: Type.Optional(Status) }, { additionalProperties: false });
export type ReviewListQuery = Static<typeof ReviewListQuery>;

export const ReviewImportBody = Type.Object(
  {
    reviews: Type.Array(
      Type.Object(
        {
          rating: Type.Integer({ minimum: 1, maximum: 5 }),
          title: Type.Optional(Type.String({ maxLength: 200 })),
          body: Type.Optional(Type.String({ maxLength: 20_000 })),
          status: Type.Optional(Status),
          customerName: Type.Optional(Type.String({ maxLength: 200 })),
          customerEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          verified: Type.Optional(Type.Boolean()),
          externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The review’s id at its source: importing it again changes nothing' })),
          createdAt: Type.Optional(Type.String({ format: 'date-time' })),
          metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 5_000 },
    ),
  },
  { additionalProperties: true },
);
export type ReviewImportBody = Static<typeof ReviewImportBody>;

export const ModerateBody = Type.Object({ status: Status, note: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: true });
export type ModerateBody = Static<typeof ModerateBody>;

interface ReviewRow {
  id: number;
  product_id: number;
  rating: number;
  title: string;
  body: string;
  status: ReviewStatus;
  customer_name: string | null;
  customer_email: string | null;
  customer_ref: number | null;
  imported: boolean;
  verified: boolean;
  verified_purchase: boolean;
  metadata: Record<string, unknown>;
  created_at: Date;
}

const toRecord = (r: ReviewRow): ReviewRecord => ({
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

/** Newest reviews of a product in any status (the caller reads private reviews). */
export async function latestReviews(db: Executor, scope: Scope, productId: number, limit: number): Promise<ReviewRecord[]> {
  return ((await selectReviews(db, scope, productId).orderBy('r.id', 'desc').limit(limit).execute()) as ReviewRow[]).map(toRecord);
}

export async function listReviews(db: Db, scope: Scope, productId: number, query: ReviewListQuery) {
  await productRecordOrThrow(db, scope, productId);
  const { page, pageSize, offset } = pageWindow(query);
  let rows = selectReviews(db, scope, productId);
  let count = db.selectFrom('product_reviews').where('workspace_id', '=', scope.workspaceId).where('product_id', '=', productId);
  if (query.status) {
    rows = rows.where('r.status', '=', query.status);
    count = count.where('status', '=', query.status);
  }
  const [list, total] = await Promise.all([
    rows.orderBy('r.id', 'desc').limit(pageSize).offset(offset).execute() as Promise<ReviewRow[]>,
    count.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: list.map(toRecord), total: total.n, page, pageSize };
}

/** Counts by status and rating, from the (workspace, product, status) index with the rating included. */
export async function reviewSummary(db: Executor, scope: Scope, productId: number) {
  const rows = await db
    .selectFrom('product_reviews')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .groupBy(['status', 'rating'])
    .select(['status', 'rating', sql<number>`count(*)::int`.as('n')])
    .execute();
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
export async function importReviews(db: Db, scope: Scope, productId: number, body: ReviewImportBody) {
  return inTransaction(db, async (tx) => {
    await productRecordOrThrow(tx, scope, productId);
    const emails = [...new Set(body.reviews.map((r) => r.customerEmail?.trim().toLowerCase()).filter((e): e is string => Boolean(e)))];
    const accounts = emails.length
      ? await tx
          .selectFrom('developer_customers')
          .where('workspace_id', '=', scope.workspaceId)
          .where(sql<string>`lower(email)`, '=', sql<string>`any(${emails}::text[])`)
          .select([sql<string>`lower(email)`.as('email'), 'account_id'])
          .execute()
      : [];
    const accountOf = new Map(accounts.map((a) => [a.email, a.account_id]));
    const inserted = await tx
      .insertInto('product_reviews')
      .values(
        body.reviews.map((r) => ({
          workspace_id: scope.workspaceId,
          product_id: productId,
          account_id: r.customerEmail ? (accountOf.get(r.customerEmail.trim().toLowerCase()) ?? null) : null,
          rating: r.rating,
          title: r.title ?? '',
          body: r.body ?? '',
          status: r.status ?? 'published',
          customer_name: r.customerName ?? null,
          customer_email: r.customerEmail?.trim() ?? null,
          imported: true,
          verified: r.verified ?? false,
          external_id: r.externalId ?? null,
          metadata: JSON.stringify(r.metadata ?? {}),
          ...(r.createdAt ? { created_at: r.createdAt } : {}),
        })),
      )
      .onConflict((oc) => oc.columns(['product_id', 'external_id']).where('external_id', 'is not', null).doNothing())
      .returning('id')
      .execute();
    await recordProductEvent(tx, scope, { productId, kind: 'reviews.imported', data: { received: body.reviews.length, inserted: inserted.length } });
    return { importedCount: body.reviews.length, insertedCount: inserted.length };
  });
}

export async function moderateReview(db: Db, scope: Scope, productId: number, reviewId: number, body: ModerateBody): Promise<ReviewRecord> {
  return inTransaction(db, async (tx) => {
    await productRecordOrThrow(tx, scope, productId);
    const before = await tx
      .selectFrom('product_reviews')
      .where('workspace_id', '=', scope.workspaceId)
      .where('product_id', '=', productId)
      .where('id', '=', reviewId)
      .select('status')
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound('Review');
    await tx.updateTable('product_reviews').set({ status: body.status, updated_at: new Date() }).where('id', '=', reviewId).execute();
    await recordProductEvent(tx, scope, { productId, kind: 'review.moderated', data: { reviewId, from: before.status, to: body.status, note: body.note ?? null } });
    const row = (await selectReviews(tx, scope, productId).where('r.id', '=', reviewId).executeTakeFirstOrThrow()) as ReviewRow;
    return toRecord(row);
  });
}
