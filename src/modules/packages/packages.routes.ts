import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireScope } from '../../platform/auth/policy.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { LinkAnswerSchema } from '../../platform/links/private-links.js';
import { EXPERIENCE_MODES, PACKAGE_VARIANTS, RELEASE_CHANNELS } from './package-templates.js';
import { DEFAULT_SETTINGS, MAX_UI_SIDE, type PackageService } from './packages.service.js';

const tags = ['plugin packages'];
const ProductParams = Type.Object({ productId: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false });

const settingFields = {
  experienceMode: Type.Optional(Type.String({ maxLength: 40, description: `${EXPERIENCE_MODES.join(', ')} (default: saved, else ${DEFAULT_SETTINGS.experienceMode})` })),
  uiWidth: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_UI_SIDE, description: `Panel width in pixels, 1–${MAX_UI_SIDE} (default: saved, else ${DEFAULT_SETTINGS.uiWidth})` })),
  uiHeight: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_UI_SIDE, description: `Panel height in pixels, 1–${MAX_UI_SIDE} (default: saved, else ${DEFAULT_SETTINGS.uiHeight})` })),
  releaseChannel: Type.Optional(Type.String({ maxLength: 40, description: `Accepted: ${RELEASE_CHANNELS.join(', ')}` })),
  environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'Whose credential the package embeds (default live)' })),
};
const variantField = Type.String({ maxLength: 40, description: `${PACKAGE_VARIANTS.join(' or ')}: select explicitly` });

const PackageQuery = Type.Object({ variant: variantField, ...settingFields }, { additionalProperties: false });
const PackageBody = Type.Object({ variant: variantField, ...settingFields }, { additionalProperties: false });
const StorefrontQuery = Type.Object({ uiWidth: settingFields.uiWidth, uiHeight: settingFields.uiHeight }, { additionalProperties: false });

const LINK_NOTE =
  'Answers a private link (`url`, `filename`, `expiresIn: 300`), never archive bytes. The link works for 300 seconds; after that ask again. ';

export const packageRoutes: FastifyPluginAsyncTypebox<{ packages: PackageService; downloadsPerMinute: number }> = async (app, { packages, downloadsPerMinute }) => {
  // GET plugin-package builds on demand: bound per product so a polling integration cannot keep the slots busy.
  const perProduct = enforceLimits(app, [
    { max: downloadsPerMinute, windowMs: 60_000, key: (req) => `pkg:${requireScope(req).workspaceId}:${(req.params as { productId: number }).productId}` },
  ]);

  app.get(
    '/api/developer/products/:productId/plugin-package',
    {
      preHandler: perProduct,
      config: { policy: { auth: 'account', permission: 'product_files.view', product: 'productId' } },
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
    },
    async (request) => packages.download(requireScope(request), request.params.productId, request.query),
  );

  app.post(
    '/api/developer/products/:productId/plugin-package/generate',
    {
      config: { policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' } },
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
    },
    async (request) => packages.generate(requireScope(request), request.params.productId, request.body),
  );

  app.post(
    '/api/developer/products/:productId/plugin-package/regenerate',
    {
      config: { policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' } },
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
    },
    async (request) => packages.regenerate(requireScope(request), request.params.productId, request.body),
  );

  app.get(
    '/api/developer/storefront/plugin-package',
    {
      config: { policy: { auth: 'account', permission: 'storefront.manage', allProducts: true } },
      schema: {
        tags,
        summary: 'Download the storefront integration package',
        description:
          LINK_NOTE +
          'The store/account integration: the workspace’s active products with prices and storefront destinations for an in-plugin store panel. Not the licensing package (no credential inside). Needs all-products access.',
        querystring: StorefrontQuery,
        response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => packages.storefront(requireScope(request), request.query),
  );
};
