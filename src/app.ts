import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Database } from './platform/db/database.js';
import { createTokenVerifier, type JwtSettings } from './platform/auth/jwt.js';
import { registerPolicy } from './platform/auth/policy.js';
import { registerErrorHandling } from './platform/http/error-handler.js';
import { healthRoutes } from './platform/http/health.routes.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { ProblemSchema } from './platform/http/schemas.js';
import { validatorCompiler } from './platform/http/validation.js';
import { customerRoutes } from './modules/customers/customers.routes.js';
import { serialRoutes } from './modules/serials/serials.routes.js';
import { LicenseKeyring } from './modules/licensing/licensing.keys.js';
import { licensingRoutes } from './modules/licensing/licensing.routes.js';
import { LicensingService } from './modules/licensing/licensing.service.js';
import { IMPORT_MAX_BYTES } from './platform/import/errors.js';

export interface AppOptions {
  database: Database;
  jwt: JwtSettings;
  licensing: {
    /** Key-encryption key for license signing keys (32 bytes). */
    encryptionKey: Buffer;
    /** Requests per minute per client address and per serial. */
    rateLimit: { perIp: number; perSerial: number };
  };
  logger?: FastifyServerOptions['logger'];
}

export type App = FastifyInstance;

const REQUEST_ID = /^[A-Za-z0-9._\-]{8,128}$/;

export async function buildApp(options: AppOptions): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON and multipart only: anything else is a 415, never a string body a handler might misread.
  app.removeContentTypeParser('text/plain');
  app.addSchema(ProblemSchema);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  registerErrorHandling(app);
  registerPolicy(app, options.database.db, createTokenVerifier(options.jwt));
  await registerOpenApi(app);
  await app.register(multipart, {
    limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 10, fieldSize: 1024 * 1024, parts: 12 },
  });

  healthRoutes(app, options.database.db);
  await app.register(customerRoutes, { db: options.database.db });
  await app.register(serialRoutes, { db: options.database.db });
  const keyring = new LicenseKeyring(options.database.db, options.licensing.encryptionKey);
  await app.register(licensingRoutes, { service: new LicensingService(options.database.db, keyring), rateLimit: options.licensing.rateLimit });

  return app;
}
