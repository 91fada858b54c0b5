import type { preHandlerAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { LinkAnswerSchema } from '../../platform/links/private-links.js';
import { PackageBody, PackageQuery, ProductParams, StorefrontQuery } from './packages.schemas.js';
import type { PackageService } from './packages.service.js';

const tags = ['plugin packages'];
const LINK_NOTE =
  'Answers a private link (`url`: absolute, under PUBLIC_BASE_URL; `filename`; `expiresIn: 300`), never archive bytes. The link works for 300 seconds; after that ask again. ';

export interface PackageRouteDeps {
  packages: PackageService;
  downloadsPerMinute: number;
  /** The per-product bound of GET plugin-package (it builds on demand). */
  perProduct: preHandlerAsyncHookHandler;
}

export const packageRoutes = ({ packages, downloadsPerMinute, perProduct }: PackageRouteDeps) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/plugin-package',
    policy: { auth: 'account', permission: 'product_files.view', product: 'productId' },
    preHandler: perProduct,
    schema: {
      tags,
      summary: 'Download the plugin package',
      description:
        LINK_NOTE +
        'Builds the package for these settings when there is none yet (missing query settings come from the saved ones), and may provision the product credential; records package activity. ' +
        `Not for unattended polling: limited to ${downloadsPerMinute} requests per minute per product (429 RATE_LIMITED). ` +
        '409 PACKAGE_CREDENTIAL_ROTATION_REQUIRED (`rotationRequired: true`) when the product key cannot be recovered: regenerate deliberately. ' +
        '429 PACKAGE_BUILD_BUSY (with Retry-After) when every build slot is busy: retry the same request. 503 PRIVATE_PACKAGE_STORAGE_REQUIRED without private storage.',
      params: ProductParams,
      querystring: PackageQuery,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
    },
    handler: ({ request, scope }) => packages.download(scope, request.params.productId, request.query),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/plugin-package/generate',
    policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Generate the plugin package with the saved settings',
      description:
        LINK_NOTE +
        'Saves the settings sent (per product and variant), then builds with the saved settings and the current credential. Does not publish or rebuild any plugin and does not rotate the credential. Errors as for GET plugin-package.',
      params: ProductParams,
      body: PackageBody,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
    },
    handler: ({ request, scope }) => packages.generate(scope, request.params.productId, request.body),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/plugin-package/regenerate',
    policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Rotate the product key and build a new package',
      description:
        LINK_NOTE +
        'Deliberately rotates the product key of the environment: the old key stays accepted by the licensing runtime for the rotation overlap (default 7 days for live, none for test), so shipped plugins are not cut off without notice. The way out of PACKAGE_CREDENTIAL_ROTATION_REQUIRED. Not the way to refresh an expired link (ask GET plugin-package again).',
      params: ProductParams,
      body: PackageBody,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: ({ request, scope }) => packages.regenerate(scope, request.params.productId, request.body),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/storefront/plugin-package',
    policy: { auth: 'account', permission: 'storefront.manage', allProducts: true },
    schema: {
      tags,
      summary: 'Download the storefront integration package',
      description:
        LINK_NOTE +
        'The store/account integration: the workspace’s active products with prices and storefront destinations for an in-plugin store panel. Not the licensing package (no credential inside). Needs all-products access.',
      querystring: StorefrontQuery,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: ({ request, scope }) => packages.storefront(scope, request.query),
  }),
];
