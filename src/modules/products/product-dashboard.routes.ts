import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { Dashboard, DashboardQuery, EnvironmentQuery, PackageReadiness, RestConfigAnswer } from './product-dashboard.schemas.js';
import { type DashboardContext, packageReadiness, productDashboard, restConfig } from './product-dashboard.service.js';
import { ProductIdParams } from './products.schemas.js';

const tags = ['product dashboard'];

export const dashboardRoutes = ({ ctx }: { ctx: DashboardContext }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/dashboard',
    policy: { auth: 'account', permission: 'products.view', product: 'productId' },
    schema: {
      tags,
      summary: 'Product dashboard',
      description:
        'Check `access` first. Sections the caller may not read are not queried: without `analytics.view` performance is unavailable (`permission_required`), the counts are null and recentActivity is empty; without `reviews.view` reviews is empty and the review summary withheld; without `product_files.view` files is empty; without `credentials.view` pluginPackage, pluginConnectionStatus and restApi are null and nothing is provisioned. Amounts are integer minor units of `currency`; other currencies are not converted.',
      params: ProductIdParams,
      querystring: DashboardQuery,
      response: { 200: Dashboard, ...errorResponses(400, 401, 403, 404, 503) },
    },
    handler: ({ request, scope }) =>
      productDashboard(ctx, scope, request.params.productId, {
        currency: request.query.currency ?? 'usd',
        environment: request.query.environment ?? 'live',
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/plugin-package/status',
    policy: { auth: 'account', permission: 'products.view', product: 'productId' },
    schema: {
      tags,
      summary: 'Plugin package readiness',
      description:
        'Not a zero-write probe: for a caller with `credentials.view` it creates missing product credentials (`credentialStatus.created`). Without it, `credentialStatus` and `lastPluginConnectionAt` are null and nothing is created. Package-ready metadata is not a runtime attestation of an exported plugin.',
      params: ProductIdParams,
      querystring: EnvironmentQuery,
      response: { 200: PackageReadiness, ...errorResponses(400, 401, 403, 404, 503) },
    },
    handler: ({ request, scope }) => packageReadiness(ctx, scope, request.params.productId, request.query.environment ?? 'live'),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/rest-config',
    policy: { auth: 'account', permission: 'credentials.view', product: 'productId' },
    schema: {
      tags,
      summary: 'REST configuration for the licensing runtime',
      description: 'The appId, API base URL and a masked preview of the product key; creates missing credentials. The secret is never returned (`secretReturned: false`).',
      params: ProductIdParams,
      querystring: EnvironmentQuery,
      response: { 200: RestConfigAnswer, ...errorResponses(400, 401, 403, 404, 503) },
    },
    handler: ({ request, scope }) => restConfig(ctx, scope, request.params.productId, request.query.environment ?? 'live'),
  }),
];
