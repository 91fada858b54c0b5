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
import { OutboxDispatcher } from './platform/mail/dispatcher.js';
import { LogTransport, type MailTransport } from './platform/mail/transport.js';
import { purchaseRoutes } from './modules/purchases/purchases.routes.js';

export interface AppOptions {
  database: Database;
  jwt: JwtSettings;
  licensing: {
    /** Key-encryption key for license signing keys (32 bytes). */
    encryptionKey: Buffer;
    /** Requests per minute per client address and per serial. */
    rateLimit: { perIp: number; perSerial: number };
  };
  /** Outgoing e-mail; default: the log transport. */
  mail?: { transport?: MailTransport; from?: string; pollIntervalMs?: number };
  logger?: FastifyServerOptions['logger'];
}

export const DEFAULT_MAIL_FROM = 'Patchbay <no-reply@patchbay.invalid>';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** The e-mail outbox sender (tests wait on it with `outbox.idle()`). */
    outbox: OutboxDispatcher;
  }
}

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

  const transport = options.mail?.transport ?? new LogTransport((entry, message) => app.log.info(entry, message));
  const outbox = new OutboxDispatcher(options.database.db, transport, options.mail?.from ?? DEFAULT_MAIL_FROM, app.log, options.mail?.pollIntervalMs);
  app.decorate('outbox', outbox);
  app.addHook('onReady', async () => outbox.start());
  app.addHook('onClose', async () => outbox.stop());
  await app.register(purchaseRoutes, { db: options.database.db, mail: outbox });
  const keyring = new LicenseKeyring(options.database.db, options.licensing.encryptionKey);
  await app.register(licensingRoutes, { service: new LicensingService(options.database.db, keyring), rateLimit: options.licensing.rateLimit });

  return app;
}
