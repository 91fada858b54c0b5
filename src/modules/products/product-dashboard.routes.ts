import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireScope } from '../../platform/auth/policy.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { type DashboardContext, PERFORMANCE_WINDOWS, packageReadiness, productDashboard, restConfig } from './product-dashboard.service.js';
import {
  CreateVersionBody,
  listVersions,
  createVersion,
  updateVersion,
  UpdateVersionBody,
} from './product-versions.js';
import { importReviews, listReviews, moderateReview, ModerateBody, ReviewImportBody, ReviewListQuery } from './product-reviews.js';

const ProductParams = Type.Object({ productId: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false });
const Environment = Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live', description: 'Which credential: live or test' });
const EnvironmentQuery = Type.Object({ environment: Type.Optional(Environment) }, { additionalProperties: false });
const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });
const Nullable = (description: string) => Type.Union([Open(description), Type.Null()]);


const CredentialStatus = Type.Object(
  {
    status: Type.String({ description: 'active, missing or rotation_required' }),
    ready: Type.Boolean(),
    isActive: Type.Boolean(),
    appId: Type.Union([Type.String(), Type.Null()]),
    productKeyPreview: Type.Union([Type.String(), Type.Null()]),
    created: Type.Boolean({ description: 'This call created the credential or its key' }),
    skipped: Type.Boolean(),
    rotationRequired: Type.Boolean(),
  },
  { additionalProperties: true },
);

const Dashboard = Type.Object(
  {
    access: Type.Object({ analytics: Type.Boolean(), reviews: Type.Boolean(), files: Type.Boolean(), credentials: Type.Boolean() }),
    product: Open('The catalogue row; with analytics access also customerCount, orderCount, downloadsTotal; with files access fileCount'),
    health: Open('status (ready, ready_as_far_as_visible, incomplete), done, checked, missing (checklist keys)'),
    kpis: Type.Object({
      customerCount: Type.Union([Type.Number(), Type.Null()]),
      orderCount: Type.Union([Type.Number(), Type.Null()]),
      downloadsTotal: Type.Union([Type.Number(), Type.Null()]),
      ratingAverage: Type.Union([Type.Number(), Type.Null()]),
      ratingCount: Type.Union([Type.Number(), Type.Null()]),
    }),
    performance: Type.Object({
      available: Type.Boolean(),
      reason: Type.Union([Type.String(), Type.Null()]),
      ranges: Type.Array(Open(`One per window (${PERFORMANCE_WINDOWS.join(', ')} days): orders, units, grossCents, refundsCents, netCents in the requested currency; otherCurrencies lists what was left out`)),
    }),
    reviewSummary: Open('available; with reviews access: total, published, pending, hidden, averageRating, ratingCount, distribution'),
    readiness: Open('ready, items: [{ key, label, state: done | missing | unknown }]'),
    pluginPackage: Nullable('status, packageReady, lastGeneratedAt, variants, environment'),
    pluginConnectionStatus: Nullable('status (never_connected, connected, idle), lastPluginConnectionAt, environment'),
    restApi: Type.Union([Type.Ref('RestApi'), Type.Null()]),
    files: Type.Array(Type.Ref('FileMetadata')),
    versions: Type.Array(Type.Ref('VersionRecord')),
    reviews: Type.Array(Type.Ref('ReviewRecord')),
    recentActivity: Type.Array(Open('kind, occurredAt and the fields of the event')),
    storefrontDestination: Type.Object({ url: Type.String(), kind: Type.String({ description: 'product, workspace or none' }) }),
  },
  { additionalProperties: true },
);

const tags = ['product dashboard'];

export const productDashboardRoutes: FastifyPluginAsyncTypebox<{ ctx: DashboardContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  app.get(
    '/api/developer/products/:productId/dashboard',
    {
      config: { policy: { auth: 'account', permission: 'products.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'Product dashboard',
        description:
          'Check `access` first. Sections the caller may not read are not queried: without `analytics.view` performance is unavailable (`permission_required`), the counts are null and recentActivity is empty; without `reviews.view` reviews is empty and the review summary withheld; without `product_files.view` files is empty; without `credentials.view` pluginPackage, pluginConnectionStatus and restApi are null and nothing is provisioned. Amounts are integer minor units of `currency`; other currencies are not converted.',
        params: ProductParams,
        querystring: Type.Object(
          {
            currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', default: 'usd', description: 'Three letters' })),
            environment: Type.Optional(Environment),
          },
          { additionalProperties: false },
        ),
        response: { 200: Dashboard, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) =>
      productDashboard(ctx, requireScope(request), request.params.productId, {
        currency: request.query.currency ?? 'usd',
        environment: request.query.environment ?? 'live',
      }),
  );

  app.get(
    '/api/developer/products/:productId/plugin-package/status',
    {
      config: { policy: { auth: 'account', permission: 'products.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'Plugin package readiness',
        description:
          'Not a zero-write probe: for a caller with `credentials.view` it creates missing product credentials (`credentialStatus.created`). Without it, `credentialStatus` and `lastPluginConnectionAt` are null and nothing is created. Package-ready metadata is not a runtime attestation of an exported plugin.',
        params: ProductParams,
        querystring: EnvironmentQuery,
        response: {
          200: Type.Object(
            {
              credentialStatus: Type.Union([CredentialStatus, Type.Null()]),
              status: Type.String(),
              packageReady: Type.Boolean(),
              lastGeneratedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
              lastPluginConnectionAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
              supportedModes: Type.Array(Type.String()),
            },
            { additionalProperties: true },
          ),
          ...errorResponses(400, 401, 403, 404, 503),
        },
      },
    },
    async (request) => packageReadiness(ctx, requireScope(request), request.params.productId, request.query.environment ?? 'live'),
  );

  app.get(
    '/api/developer/products/:productId/rest-config',
    {
      config: { policy: { auth: 'account', permission: 'credentials.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'REST configuration for the licensing runtime',
        description: 'The appId, API base URL and a masked preview of the product key; creates missing credentials. The secret is never returned (`secretReturned: false`).',
        params: ProductParams,
        querystring: EnvironmentQuery,
        response: { 200: Type.Object({ restApi: Type.Ref('RestApi') }), ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => restConfig(ctx, requireScope(request), request.params.productId, request.query.environment ?? 'live'),
  );

  app.get(
    '/api/developer/products/:productId/versions',
    {
      config: { policy: { auth: 'account', permission: 'products.view', product: 'productId' } },
      schema: {
        tags: ['product versions'],
        summary: 'Version records',
        description: 'Saved records, the current one first; without saved records, the version the catalogue names (`currentVersion`, id `derived`), or none.',
        params: ProductParams,
        response: { 200: Type.Object({ versions: Type.Array(Type.Ref('VersionRecord')) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ versions: await listVersions(db, requireScope(request), request.params.productId) }),
  );

  app.post(
    '/api/developer/products/:productId/versions',
    {
      config: { policy: { auth: 'account', permission: 'products.manage', product: 'productId' } },
      schema: {
        tags: ['product versions'],
        summary: 'Add a version record',
        description: 'The first record, or one sent with `isCurrent: true`, becomes the one current version (and the catalogue’s `currentVersion`). A version already recorded answers 409 CONFLICT.',
        params: ProductParams,
        body: CreateVersionBody,
        response: { 201: Type.Ref('VersionRecord'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await createVersion(db, requireScope(request), request.params.productId, request.body)),
  );

  app.patch(
    '/api/developer/products/:productId/versions/:versionId',
    {
      config: { policy: { auth: 'account', permission: 'products.manage', product: 'productId' } },
      schema: {
        tags: ['product versions'],
        summary: 'Change a version record',
        description: '`isCurrent: true` makes it the current version; there is always exactly one.',
        params: Type.Object({ productId: Type.Integer({ minimum: 1, maximum: 2147483647 }), versionId: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false }),
        body: UpdateVersionBody,
        response: { 200: Type.Ref('VersionRecord'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => updateVersion(db, requireScope(request), request.params.productId, request.params.versionId, request.body),
  );

  app.get(
    '/api/developer/products/:productId/reviews',
    {
      config: { policy: { auth: 'account', permission: 'reviews.view', product: 'productId' } },
      schema: {
        tags: ['product reviews'],
        summary: 'Reviews of a product',
        description: 'Every status (published, pending, hidden), newest first; `verifiedPurchase` is computed from the reviewer’s entitlements now.',
        params: ProductParams,
        querystring: ReviewListQuery,
        response: {
          200: Type.Object({ rows: Type.Array(Type.Ref('ReviewRecord')), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer() }, { additionalProperties: true }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => listReviews(db, requireScope(request), request.params.productId, request.query),
  );

  app.post(
    '/api/developer/products/:productId/reviews/import',
    {
      config: { policy: { auth: 'account', permission: 'reviews.manage', product: 'productId' } },
      schema: {
        tags: ['product reviews'],
        summary: 'Import reviews',
        description: 'Up to 5,000 reviews in one transaction (status defaults to published, marked imported). A reviewer whose e-mail is a customer of the workspace is linked to them; `externalId` makes a re-import create nothing twice.',
        params: ProductParams,
        body: ReviewImportBody,
        response: { 201: Type.Object({ importedCount: Type.Integer(), insertedCount: Type.Integer() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await importReviews(db, requireScope(request), request.params.productId, request.body)),
  );

  app.post(
    '/api/developer/products/:productId/reviews/:reviewId/status',
    {
      config: { policy: { auth: 'account', permission: 'reviews.manage', product: 'productId' } },
      schema: {
        tags: ['product reviews'],
        summary: 'Moderate a review',
        description: 'Sets published, pending or hidden (recorded in the product activity with the optional `note`).',
        params: Type.Object({ productId: Type.Integer({ minimum: 1, maximum: 2147483647 }), reviewId: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false }),
        body: ModerateBody,
        response: { 200: Type.Ref('ReviewRecord'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => moderateReview(db, requireScope(request), request.params.productId, request.params.reviewId, request.body),
  );
};
