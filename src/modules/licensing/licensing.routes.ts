import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
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
  ValidateBody,
  ValidateResult,
} from './licensing.schemas.js';

export interface LicensingRouteOptions {
  service: LicensingService;
  /** Requests per minute. */
  rateLimit: { perIp: number; perSerial: number };
}

type Limiter = (req: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded: boolean; ttlInSeconds: number; max: number }>;

declare module 'fastify' {
  interface FastifyInstance {
    createRateLimit(options: { max: number; timeWindow: number; keyGenerator: (req: FastifyRequest) => string }): Limiter;
  }
}

const tags = ['licensing'];
const runtime = { policy: { auth: 'public' as const } };
const authNote =
  'Called by plugins, authenticated by the serial itself (no developer JWT). Rate-limited per client address and per serial (429 with Retry-After).';

export const licensingRoutes: FastifyPluginAsyncTypebox<LicensingRouteOptions> = async (app, { service, rateLimit: limits }) => {
  await app.register(rateLimit, { global: false });
  const perIp = app.createRateLimit({ max: limits.perIp, timeWindow: 60_000, keyGenerator: (req) => `ip:${req.ip}` });
  const perSerial = app.createRateLimit({
    max: limits.perSerial,
    timeWindow: 60_000,
    keyGenerator: (req) => {
      const body = req.body as { productAppId?: string; serial?: string };
      return `serial:${body.productAppId}:${serialKey(body.serial ?? '')}`;
    },
  });

  const enforce = (limiters: Limiter[]) => async (request: FastifyRequest) => {
    for (const limiter of limiters) {
      const result = await limiter(request);
      if (result.isExceeded) {
        throw new AppError(CommonErrors.RATE_LIMITED, `Rate limit of ${result.max} requests per minute exceeded; retry in ${result.ttlInSeconds} s`, {
          headers: { 'retry-after': String(result.ttlInSeconds) },
        });
      }
    }
  };
  // The address limit runs before the body is parsed; the serial limit after validation.
  const addressLimit = enforce([perIp]);
  const serialLimit = enforce([perSerial]);

  app.post(
    '/api/licensing/v1/activate',
    {
      config: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Activate a serial on a machine',
        description: `${authNote} 201 with a new activation and a signed license token; the same machine again answers 200 with its existing activation. Over the seat limit: 422 MACHINE_LIMIT_EXCEEDED. Unusable serials: 422 LICENSE_SUSPENDED / LICENSE_REVOKED / LICENSE_DEACTIVATED / LICENSE_EXPIRED / LICENSE_NOT_ACTIVE_YET; unknown serial or product: 404 LICENSE_NOT_FOUND.`,
        body: ActivateBody,
        response: { 200: ActivateResult, 201: ActivateResult, ...errorResponses(400, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const result = await service.activate(request.body);
      return reply.code(result.created ? 201 : 200).send(result.body);
    },
  );

  app.post(
    '/api/licensing/v1/validate',
    {
      config: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Validate a serial on a machine',
        description: `${authNote} Always 200: \`valid\` and \`code\` (VALID, NOT_FOUND, SUSPENDED, REVOKED, DEACTIVATED, EXPIRED, NOT_ACTIVE_YET, MACHINE_NOT_ACTIVATED). A valid answer carries a fresh license token.`,
        body: ValidateBody,
        response: { 200: ValidateResult, ...errorResponses(400, 429) },
      },
    },
    async (request) => service.validate(request.body),
  );

  app.post(
    '/api/licensing/v1/deactivate',
    {
      config: runtime,
      onRequest: addressLimit,
      preHandler: serialLimit,
      schema: {
        tags,
        summary: 'Release this machine’s seat',
        description: `${authNote} Idempotent: \`released\` is false when the machine held no seat.`,
        body: DeactivateBody,
        response: { 200: DeactivateResult, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => service.deactivate(request.body),
  );

  app.get(
    '/api/licensing/v1/keys',
    {
      config: runtime,
      onRequest: addressLimit,
      schema: {
        tags,
        summary: 'Public keys that verify license tokens (JWKS)',
        description: 'The Ed25519 public keys (active and retired) of the workspace that owns `productAppId`. Tokens name their key in the `kid` header.',
        querystring: KeysQuery,
        response: { 200: Jwks, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return service.jwks(request.query.productAppId);
    },
  );
};
