import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Db } from '../db/database.js';
import type { JobRunner } from '../jobs/runner.js';
import { IMPORT_MAX_BYTES } from '../import/errors.js';
import { IMPORT_FIELD_MAX_BYTES } from '../import/import-bounds.js';
import { registerBrowserSupport } from './browser.js';
import { registerCrossSiteProtection } from './csrf.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './error-handler.js';
import { deleteExpiredIdempotencyKeys, registerIdempotency } from './idempotency.js';
import { registerJsonBodyParser } from './json-body.js';
import { createHttpServer, type HttpLimits, registerHttpLimits } from './limits.js';
import { registerLogRedaction } from './logging.js';
import { registerMetrics, ServiceMetrics } from './metrics.js';
import { registerOpenApi } from './openapi.js';
import { registerRateLimits } from './rate-limits.js';
import { ProblemSchema } from './schemas.js';
import { lazySerializerRegistry } from './serializers.js';
import { lazyValidatorRegistry } from './validation.js';

// The HTTP platform of the app, in the order buildApp needs it: the server itself, the protections
// every request passes, and the services routes share. Modules register their routes after these.

export interface ServerOptions {
  limits: HttpLimits;
  trustProxy?: boolean | number | string[] | undefined;
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyBaseLogger | undefined;
}

/** Trust the nearest `hops` proxies' X-Forwarded-For entries. */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

const REQUEST_ID = /^[A-Za-z0-9._\-]{8,128}$/;

/** The Fastify instance: its timeouts, request ids, log, validation and the body types it accepts. */
export function createServer(options: ServerOptions) {
  const serializers = lazySerializerRegistry();
  const app = Fastify({
    serverFactory: (handler) => createHttpServer(options.limits, handler),
    trustProxy: typeof options.trustProxy === 'number' ? trustHops(options.trustProxy) : (options.trustProxy ?? false),
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
    // Response serializers compile on first use, not all at start-up (serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: serializers.factory } },
    clientErrorHandler,
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before any route: the log learns which path segments are credentials from the routes themselves.
  registerLogRedaction(app);
  const validators = lazyValidatorRegistry();
  app.addHook('onClose', async () => {
    serializers.close();
    validators.close();
  });
  app.setValidatorCompiler(validators.compiler);
  // JSON and multipart only: anything else is a 415, never a string body a handler might misread.
  app.removeContentTypeParser('text/plain');
  // JSON that is not UTF-8 is refused (never decoded with U+FFFD); large bodies are parsed without blocking.
  registerJsonBodyParser(app);
  app.addSchema(ProblemSchema);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Answers to authenticated callers are personal: no shared cache may keep them.
    if ((request.scope || request.recipient || request.customer || request.developer) && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  return app;
}

/** Problem answers, connection limits, CORS and security headers, cookies, and cross-site request forgery protection. */
export async function registerHttpProtections(app: FastifyInstance, options: { limits: HttpLimits; publicBaseUrl: string; corsOrigins: string[] }): Promise<void> {
  registerErrorHandling(app, options.publicBaseUrl);
  registerHttpLimits(app, options.limits);
  await registerBrowserSupport(app, options.corsOrigins);
  await app.register(cookie);
  registerCrossSiteProtection(app, { publicBaseUrl: options.publicBaseUrl, corsOrigins: options.corsOrigins });
}

export interface RequestServicesOptions {
  db: Db;
  runner: JobRunner;
  /** The document's servers, tags and security schemes. */
  openApi: Parameters<typeof registerOpenApi>[1];
  /** The PostgreSQL pool (server mode) for its metrics; the bearer token that protects /metrics (unset: open). */
  metrics: { pool: pg.Pool | undefined; processMetrics: boolean; token: string | undefined };
  rateLimits: { redis: Redis | undefined; namespace: string | undefined };
}

/**
 * What routes share once the caller is known: idempotency keys (per caller), the OpenAPI document,
 * /metrics, multipart uploads and the rate-limit counters.
 */
export async function registerRequestServices(app: FastifyInstance, { db, runner, openApi, metrics, rateLimits }: RequestServicesOptions): Promise<void> {
  // Keys belong to the caller: a workspace member's keys never meet another member's or workspace's.
  registerIdempotency(app, db, (request) => (request.scope ? `account:${request.scope.workspaceId}:${request.scope.accountId}` : null));
  runner.addMaintenance('idempotency-keys', () => deleteExpiredIdempotencyKeys(db));
  await registerOpenApi(app, openApi);
  registerMetrics(app, new ServiceMetrics({ db, pool: metrics.pool, runner, processMetrics: metrics.processMetrics }), metrics.token);
  await app.register(multipart, {
    limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 10, fieldSize: IMPORT_FIELD_MAX_BYTES, parts: 12 },
  });
  await registerRateLimits(app, { redis: rateLimits.redis, ...(rateLimits.namespace ? { namespace: rateLimits.namespace } : {}) });
}
