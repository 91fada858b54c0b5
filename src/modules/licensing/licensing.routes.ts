import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { AppError } from '../../platform/http/errors.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { serialKey } from '../../platform/ids/codes.js';
import type { LicensingService } from './licensing.service.js';
import {
  ActivateBody,
  ActivateResult,
  DeactivateBody,
  DeactivateResult,
  Jwks,
  KeysQuery,
  ProductKeyHeader,
  ValidateBody,
  ValidateResult,
} from './licensing.schemas.js';

export interface LicensingRouteOptions {
  service: LicensingService;
  /**
   * Requests per minute: per client address; per serial and address (so someone who knows a
   * serial cannot use up its owner's budget); per serial from all addresses together (a ceiling
   * against a serial shared publicly).
   */
  rateLimit: { perIp: number; perSerial: number; perSerialTotal: number };
}

const tags = ['licensing'];
// Called by plugins: the serial (and the product key a package embeds) authenticates, not a caller.
const runtime = { auth: 'public' } as const;
const authNote =
  'Called by plugins, authenticated by the serial itself (no developer JWT). Rate-limited per client address, per serial and address, and per serial (429 with Retry-After).';
const MINUTE = 60_000;

/** The product key a plugin package sends (optional for plugins built without one). */
const productKeyOf = (req: FastifyRequest): string | undefined => {
  const key = req.headers['x-product-key'];
  return typeof key === 'string' && key.length > 0 ? key : undefined;
};

const serialOf = (req: FastifyRequest) => {
  const body = req.body as { productAppId?: string; serial?: string };
  return `${body.productAppId}:${serialKey(body.serial ?? '')}`;
};

/** The plugin runtime's routes; `app` gives them its rate limiters and the licensing metric. */
export function licensingRoutes(app: FastifyInstance, { service, rateLimit: limits }: LicensingRouteOptions) {
  /** Counts each answer by operation and outcome code (the metric licensing dashboards alert on). */
  const counted = async <T>(operation: string, run: () => Promise<T>, code: (result: T) => string): Promise<T> => {
    try {
      const result = await run();
      app.metrics.licensing.inc({ operation, code: code(result) });
      return result;
    } catch (error) {
      app.metrics.licensing.inc({ operation, code: error instanceof AppError ? error.code : 'ERROR' });
      throw error;
    }
  };

  // The address limit runs before the body is parsed; the serial limits after validation.
  const addressLimit = enforceLimits(app, [{ max: limits.perIp, windowMs: MINUTE, key: (req) => `lic:ip:${req.ip}` }]);
  const serialLimit = enforceLimits(app, [
    { max: limits.perSerial, windowMs: MINUTE, key: (req) => `lic:serial-ip:${serialOf(req)}:${req.ip}` },
    { max: limits.perSerialTotal, windowMs: MINUTE, key: (req) => `lic:serial:${serialOf(req)}` },
  ]);

  return [
    defineRoute({
      method: 'POST',
      url: '/api/licensing/v1/activate',
      policy: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Activate a serial on a machine',
        description: `${authNote} 201 with a new activation and a signed license token; the same machine again answers 200 with its existing activation. Over the seat limit: 422 MACHINE_LIMIT_EXCEEDED. Unusable serials: 422 LICENSE_SUSPENDED / LICENSE_REVOKED / LICENSE_DEACTIVATED / LICENSE_EXPIRED / LICENSE_NOT_ACTIVE_YET; unknown serial or product: 404 LICENSE_NOT_FOUND.`,
        headers: ProductKeyHeader,
        body: ActivateBody,
        response: { 200: ActivateResult, 201: ActivateResult, ...errorResponses(400, 401, 404, 422, 429) },
      },
      handler: async ({ request, reply }) => {
        const result = await counted('activate', () => service.activate(request.body, productKeyOf(request)), (r) => (r.created ? 'ACTIVATED' : 'ALREADY_ACTIVE'));
        return reply.code(result.created ? 201 : 200).send(result.body);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/licensing/v1/validate',
      policy: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Validate a serial on a machine',
        description: `${authNote} Always 200: \`valid\` and \`code\` (VALID, NOT_FOUND, SUSPENDED, REVOKED, DEACTIVATED, EXPIRED, NOT_ACTIVE_YET, MACHINE_NOT_ACTIVATED). A valid answer carries a fresh license token.`,
        headers: ProductKeyHeader,
        body: ValidateBody,
        response: { 200: ValidateResult, ...errorResponses(400, 401, 429) },
      },
      handler: ({ request }) => counted('validate', () => service.validate(request.body, productKeyOf(request)), (r) => r.code),
    }),
    defineRoute({
      method: 'POST',
      url: '/api/licensing/v1/deactivate',
      policy: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Release this machine’s seat',
        description: `${authNote} Idempotent: \`released\` is false when the machine held no seat.`,
        headers: ProductKeyHeader,
        body: DeactivateBody,
        response: { 200: DeactivateResult, ...errorResponses(400, 401, 404, 429) },
      },
      handler: ({ request }) => counted('deactivate', () => service.deactivate(request.body, productKeyOf(request)), (r) => (r.released ? 'RELEASED' : 'NOT_ACTIVE')),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/licensing/v1/keys',
      policy: runtime,
      onRequest: addressLimit,
      schema: {
        tags,
        summary: 'Public keys that verify license tokens (JWKS)',
        description: 'The Ed25519 public keys (active and retired) of the workspace that owns `productAppId`. Tokens name their key in the `kid` header.',
        querystring: KeysQuery,
        response: { 200: Jwks, ...errorResponses(400, 404, 429) },
      },
      handler: ({ request, reply }) => {
        reply.header('cache-control', 'public, max-age=300');
        return service.jwks(request.query.productAppId);
      },
    }),
  ];
}
