import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Id, Int } from '../../platform/http/bounded.js';
import { PagingQuery } from '../../platform/http/schemas.js';

// Schemas of the review routes (contract 2.12).

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
          rating: Int(1, 5),
          title: Type.Optional(Type.String({ maxLength: 200 })),
          body: Type.Optional(Type.String({ maxLength: 20_000 })),
          status: Type.Optional(Status),
          customerName: Type.Optional(Type.String({ maxLength: 200 })),
          customerEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          verified: Type.Optional(Type.Boolean()),
          externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The review’s id at its source: importing it again changes nothing' })),
          createdAt: Type.Optional(DateTime()),
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

export const ReviewRecordRef = Type.Ref('ReviewRecord');
export const ReviewList = Type.Object({ rows: Type.Array(Type.Ref('ReviewRecord')), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer() }, { additionalProperties: true });
export const ReviewImportAnswer = Type.Object({ importedCount: Type.Integer(), insertedCount: Type.Integer() });
export const ReviewParams = Type.Object({ productId: Id(), reviewId: Id() }, { additionalProperties: false });
