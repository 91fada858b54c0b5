import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { ModerateBody, ReviewImportAnswer, ReviewImportBody, ReviewList, ReviewListQuery, ReviewParams, ReviewRecordRef } from './product-reviews.schemas.js';
import { importReviews, listReviews, moderateReview } from './product-reviews.service.js';
import { ProductIdParams } from './products.schemas.js';

const tags = ['product reviews'];

export const reviewRoutes = ({ db }: { db: Db }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/reviews',
    policy: { auth: 'account', permission: 'reviews.view', product: 'productId' },
    schema: {
      tags,
      summary: 'Reviews of a product',
      description: 'Every status (published, pending, hidden), newest first; `verifiedPurchase` is computed from the reviewer’s entitlements now.',
      params: ProductIdParams,
      querystring: ReviewListQuery,
      response: { 200: ReviewList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => listReviews(db, scope, request.params.productId, request.query),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/reviews/import',
    policy: { auth: 'account', permission: 'reviews.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Import reviews',
      description: 'Up to 5,000 reviews in one transaction (status defaults to published, marked imported). A reviewer whose e-mail is a customer of the workspace is linked to them; `externalId` makes a re-import create nothing twice.',
      params: ProductIdParams,
      body: ReviewImportBody,
      response: { 201: ReviewImportAnswer, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, reply, scope }) => reply.code(201).send(await importReviews(db, scope, request.params.productId, request.body)),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/reviews/:reviewId/status',
    policy: { auth: 'account', permission: 'reviews.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Moderate a review',
      description: 'Sets published, pending or hidden (recorded in the product activity with the optional `note`).',
      params: ReviewParams,
      body: ModerateBody,
      response: { 200: ReviewRecordRef, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => moderateReview(db, scope, request.params.productId, request.params.reviewId, request.body),
  }),
];
