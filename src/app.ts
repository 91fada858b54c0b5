import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { Database } from './platform/db/database.js';
import { createTokenVerifier, type JwtSettings } from './platform/auth/jwt.js';
import { registerPolicy } from './platform/auth/policy.js';
import { registerBrowserSupport } from './platform/http/browser.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './platform/http/error-handler.js';
import { healthRoutes } from './platform/http/health.routes.js';
import { createHttpServer, DEFAULT_HTTP_LIMITS, type HttpLimits, registerHttpLimits } from './platform/http/limits.js';
import { deleteExpiredIdempotencyKeys, registerIdempotency } from './platform/http/idempotency.js';
import { registerMetrics, ServiceMetrics } from './platform/http/metrics.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { openApiOptions } from './openapi.js';
import { registerRateLimits } from './platform/http/rate-limits.js';
import { ProblemSchema } from './platform/http/schemas.js';
import { validatorCompiler } from './platform/http/validation.js';
import { IMPORT_MAX_BYTES } from './platform/import/errors.js';
import { JobRunner } from './platform/jobs/runner.js';
import { DEFAULT_ASYNC_IMPORT_THRESHOLD, ImportRunner } from './platform/import/import-runner.js';
import { importRoutes } from './modules/imports/imports.routes.js';
import { registerMailJobs } from './platform/mail/mail.jobs.js';
import { LogTransport, type MailTransport } from './platform/mail/transport.js';
import { customerRoutes } from './modules/customers/customers.routes.js';
import { LicenseKeyring } from './modules/licensing/licensing.keys.js';
import { licensingRoutes } from './modules/licensing/licensing.routes.js';
import { LicensingService } from './modules/licensing/licensing.service.js';
import { ConnectionTracker } from './modules/licensing/licensing.connections.js';
import { purchaseRoutes } from './modules/purchases/purchases.routes.js';
import { serialRoutes } from './modules/serials/serials.routes.js';
import { productRoutes } from './modules/products/products.routes.js';
import { FileMetadata, ProductRow, RestApi, ReviewRecord, VersionRecord } from './modules/products/products.schemas.js';
import { productFileRoutes } from './modules/products/product-files.routes.js';
import { ProductFiles } from './modules/products/product-files.service.js';
import { ProductCredentials } from './modules/products/product-credentials.service.js';
import { productDashboardRoutes } from './modules/products/product-dashboard.routes.js';
import { LinkSigner, PrivateLinks, registerPrivateLinkRoute } from './platform/links/private-links.js';
import { NoStorage, type PrivateStorage } from './platform/storage/storage.js';
import { registerStorageJobs } from './platform/storage/storage.jobs.js';
import { packageRoutes } from './modules/packages/packages.routes.js';
import { PartnerPortal } from './modules/partners/partner-portal.service.js';
import { partnerRoutes } from './modules/partners/partners.routes.js';
import { PartnerPrograms } from './modules/partners/partners.service.js';
import { ReferralContextSigner } from './modules/referrals/referral-context.js';
import { checkoutRoutes } from './modules/checkout/checkout.routes.js';
import { CheckoutEvents } from './modules/checkout/checkout.service.js';
import { registerLedgerJobs } from './modules/ledger/ledger.jobs.js';
import { ledgerRoutes } from './modules/ledger/ledger.routes.js';
import { DEFAULT_PAYOUT_MINIMUM, Transfers } from './modules/ledger/transfers.service.js';
import { ReferralVisitBuffer } from './modules/referrals/referral-visits.js';
import { DEFAULT_REFERRALS_PER_MINUTE, referralRoutes } from './modules/referrals/referrals.routes.js';
import { ReferralLinks } from './modules/referrals/referrals.service.js';
import { recipientSessionRoutes } from './modules/recipients/recipients.routes.js';
import { Recipients } from './modules/recipients/recipients.service.js';
import { payoutDestinationRoutes } from './modules/payouts/destinations.routes.js';
import { DEFAULT_DESTINATION_HOLD_HOURS, PayoutDestinations } from './modules/payouts/destinations.service.js';
import type { PayoutProviders } from './modules/payouts/providers.js';
import { sandboxOnboardingRoutes } from './modules/payouts/sandbox-onboarding.routes.js';
import { payoutProviders, SandboxCardProvider, SandboxWalletProvider } from './modules/payouts/sandbox-provider.js';
import { PackageService } from './modules/packages/packages.service.js';

/** Delivery files up to 2 GiB unless configured otherwise. */
export const DEFAULT_FILE_UPLOAD_MAX_BYTES = 2 * 1024 * 1024 * 1024;

export interface AppOptions {
  database: Database;
  jwt: JwtSettings;
  licensing: {
    /** Key-encryption key for license signing keys (32 bytes). */
    encryptionKey: Buffer;
    /** Requests per minute per client address, per serial and address, and per serial. */
    rateLimit: { perIp: number; perSerial: number; perSerialTotal: number };
    /** How often plugin connections are written (ms); default 5 s. */
    connectionFlushMs?: number;
  };
  /** Outgoing e-mail; default: the log transport. */
  mail?: { transport?: MailTransport; from?: string };
  /** Background jobs of this instance; `run: false` enqueues but never runs (tests that inspect the queue). */
  jobs?: { pollIntervalMs?: number; concurrency?: number; run?: boolean };
  logger?: FastifyServerOptions['logger'];
  /** A pino logger shared with the rest of the process (the server passes its own). */
  loggerInstance?: FastifyBaseLogger;
  /** Shared rate-limit counters (several instances); without it they are per process. */
  redis?: Redis | undefined;
  /** Redis key prefix of the rate-limit counters (tests isolate apps with it). */
  rateLimitNamespace?: string;
  /** Timeouts and per-address caps (defaults: DEFAULT_HTTP_LIMITS). */
  httpLimits?: Partial<HttpLimits>;
  /** Proxies whose X-Forwarded-For is believed (Fastify's trustProxy): false, true, a hop count or addresses. */
  trustProxy?: boolean | number | string[];
  /** Browser origins allowed to call the API (CORS). */
  corsOrigins?: string[];
  /** Bearer token that protects GET /metrics; unset: open (restrict it at the network). */
  metricsToken?: string | undefined;
  /** Process metrics (CPU, memory, event loop) on /metrics; the server turns them on. */
  processMetrics?: boolean;
  /** Imports above this many rows run as jobs (202); the lease of an import job, renewed while it runs. */
  imports?: { asyncThreshold?: number; leaseSeconds?: number };
  /** Private storage for delivery files and packages; default: none (routes that need it answer 503). */
  storage?: PrivateStorage;
  /** The largest delivery file accepted (bytes). */
  fileUploadMaxBytes?: number;
  /** The service's public URL, as plugins and browsers reach it (links, package configuration). */
  publicBaseUrl?: string;
  /** Plugin packages: build slots across instances, key rotation overlap, GET rate per product; `minBuildMs` is a test hook. */
  packages?: { buildSlots?: number; liveRotationOverlapDays?: number; downloadsPerMinute?: number; minBuildMs?: number };
  /** Partner programs: invitation limits and the partner portal's address. */
  partners?: PartnerOptions;
  /** Payout providers for live mode (test mode always has the built-in sandbox); none: live payout routes answer 503. */
  payouts?: { providers?: PayoutProviders; /** The smallest payable balance a payout run transfers (minor units, default 1000). */ minimumMinorUnits?: number };
  /** Secrets of the managed checkout's signed event webhook (the first signs in tests; any verifies); none: the route is absent. */
  checkout?: { webhookSecrets?: string[] };
}

export interface PartnerOptions {
  invitesPerWorkspacePerDay?: number;
  inviteResendCooldownSeconds?: number;
  inviteTtlHours?: number;
  /** Sign-in links one address may ask for per hour. */
  signInLinksPerHour?: number;
  /** The partner portal front end (sign-in and invitation links point there). */
  portalUrl?: string;
  /** How long transfers wait after a recipient changes a payout destination (default 72). */
  destinationHoldHours?: number;
  /** Referral link requests one client address may make per minute (default 60). */
  referralsPerMinute?: number;
}

export const DEFAULT_PACKAGE_BUILD_SLOTS = 2;
export const DEFAULT_LIVE_ROTATION_OVERLAP_DAYS = 7;
export const DEFAULT_PACKAGE_DOWNLOADS_PER_MINUTE = 30;

export const DEFAULT_MAIL_FROM = 'Patchbay <no-reply@patchbay.invalid>';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's background job runner (tests wait on it with `jobs.idle()`). */
    jobs: JobRunner;
    /** The import flow shared by the modules' import routes. */
    imports: ImportRunner;
    /** Payout providers by kind and mode (the payout run submits transfers through them). */
    payoutProviders: PayoutProviders;
    /** Payout runs and transfer confirmations (`patchbay payouts run` calls `transfers.run`). */
    transfers: Transfers;
  }
}

/** Trust the nearest `hops` proxies' X-Forwarded-For entries. */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

const REQUEST_ID = /^[A-Za-z0-9._\-]{8,128}$/;

export async function buildApp(options: AppOptions): Promise<App> {
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.httpLimits };
  const db = options.database.db;
  const app = Fastify({
    serverFactory: (handler) => createHttpServer(limits, handler),
    trustProxy: typeof options.trustProxy === 'number' ? trustHops(options.trustProxy) : (options.trustProxy ?? false),
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
    clientErrorHandler,
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON and multipart only: anything else is a 415, never a string body a handler might misread.
  app.removeContentTypeParser('text/plain');
  app.addSchema(ProblemSchema);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Answers to authenticated callers are personal: no shared cache may keep them.
    if ((request.scope || request.recipient) && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  // Background work: one runner per instance; modules register their job handlers on it.
  const runner = new JobRunner(db, { ...options.jobs, log: app.log });
  app.decorate('jobs', runner);
  const transport: MailTransport = options.mail?.transport ?? new LogTransport((entry, message) => app.log.info(entry, message));
  registerMailJobs(runner, transport, options.mail?.from ?? DEFAULT_MAIL_FROM);
  if (options.jobs?.run !== false) app.addHook('onReady', async () => runner.start());
  app.addHook('onClose', async () => {
    await runner.stop();
    await transport.close?.();
  });

  registerErrorHandling(app);
  registerHttpLimits(app, limits);
  await registerBrowserSupport(app, options.corsOrigins ?? []);
  await app.register(cookie);
  const publicUrl = (options.publicBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const portalUrl = (options.partners?.portalUrl ?? `${publicUrl}/partner-portal`).replace(/\/$/, '');
  const recipients = new Recipients(db, portalUrl);
  registerPolicy(app, db, createTokenVerifier(options.jwt), (token) => recipients.verify(token));
  // Keys belong to the caller: a workspace member's keys never meet another member's or workspace's.
  registerIdempotency(app, db, (request) => (request.scope ? `account:${request.scope.workspaceId}:${request.scope.accountId}` : null));
  runner.addMaintenance('idempotency-keys', () => deleteExpiredIdempotencyKeys(db));
  await registerOpenApi(app, openApiOptions(publicUrl));
  registerMetrics(
    app,
    new ServiceMetrics({ db, pool: options.database.pool, runner, processMetrics: options.processMetrics ?? false }),
    options.metricsToken,
  );
  await app.register(multipart, {
    limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 10, fieldSize: 1024 * 1024, parts: 12 },
  });
  await registerRateLimits(app, { redis: options.redis, ...(options.rateLimitNamespace ? { namespace: options.rateLimitNamespace } : {}) });

  const imports = new ImportRunner(options.database, {
    asyncThreshold: options.imports?.asyncThreshold ?? DEFAULT_ASYNC_IMPORT_THRESHOLD,
    leaseSeconds: options.imports?.leaseSeconds ?? 60,
  });
  app.decorate('imports', imports);
  imports.registerJobs(runner);

  const storage = options.storage ?? new NoStorage();
  registerStorageJobs(runner, storage);
  const links = new PrivateLinks(new LinkSigner([options.licensing.encryptionKey]));
  registerPrivateLinkRoute(app, links);
  const credentials = new ProductCredentials(db, options.licensing.encryptionKey);
  const keyring = new LicenseKeyring(db, options.licensing.encryptionKey);
  const publicBaseUrl = (options.publicBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const packages = new PackageService(db, storage, links, credentials, keyring, {
    publicBaseUrl,
    buildSlots: options.packages?.buildSlots ?? DEFAULT_PACKAGE_BUILD_SLOTS,
    rotationOverlapSeconds: { live: (options.packages?.liveRotationOverlapDays ?? DEFAULT_LIVE_ROTATION_OVERLAP_DAYS) * 86_400, test: 0 },
    ...(options.packages?.minBuildMs ? { minBuildMs: options.packages.minBuildMs } : {}),
  });
  const dashboard = { db, credentials, packages, publicBaseUrl };

  for (const schema of [ProductRow, FileMetadata, RestApi, VersionRecord, ReviewRecord]) app.addSchema(schema);
  healthRoutes(app, db);
  await app.register(importRoutes, { db, runner: imports });
  await app.register(productRoutes, { db });
  await app.register(productFileRoutes, { files: new ProductFiles(db, storage, links, options.fileUploadMaxBytes ?? DEFAULT_FILE_UPLOAD_MAX_BYTES) });
  await app.register(productDashboardRoutes, { ctx: dashboard });
  await app.register(recipientSessionRoutes, { recipients, linksPerHour: options.partners?.signInLinksPerHour ?? 5 });
  const partnerPrograms = new PartnerPrograms(
    db,
    {
      invitesPerWorkspacePerDay: options.partners?.invitesPerWorkspacePerDay ?? 200,
      inviteResendCooldownSeconds: options.partners?.inviteResendCooldownSeconds ?? 60,
      inviteTtlHours: options.partners?.inviteTtlHours ?? 168,
    },
    portalUrl,
    publicUrl,
  );
  await app.register(ledgerRoutes, { db, programs: partnerPrograms });
  await app.register(partnerRoutes, {
    programs: partnerPrograms,
    portal: new PartnerPortal(db, publicUrl),
  });
  const sandboxCard = new SandboxCardProvider(publicUrl);
  const providers = payoutProviders({ card: sandboxCard, wallet: new SandboxWalletProvider() }, options.payouts?.providers);
  app.decorate('payoutProviders', providers);
  const transfers = new Transfers(db, providers, BigInt(options.payouts?.minimumMinorUnits ?? DEFAULT_PAYOUT_MINIMUM));
  app.decorate('transfers', transfers);
  registerLedgerJobs(runner, db, transfers);
  const destinations = new PayoutDestinations(db, providers, sandboxCard, new PartnerPortal(db, publicUrl), {
    holdHours: options.partners?.destinationHoldHours ?? DEFAULT_DESTINATION_HOLD_HOURS,
  });
  await app.register(payoutDestinationRoutes, { destinations });
  await app.register(sandboxOnboardingRoutes, { destinations });
  // Referral visits are written in batches; the last one before the database closes.
  const referralVisits = new ReferralVisitBuffer(db, app.log);
  app.addHook('onClose', async () => referralVisits.stop());
  const referrals = new ReferralLinks(db, new ReferralContextSigner([options.licensing.encryptionKey]), referralVisits, options.licensing.encryptionKey, publicUrl);
  await app.register(referralRoutes, { links: referrals, perMinute: options.partners?.referralsPerMinute ?? DEFAULT_REFERRALS_PER_MINUTE });
  const webhookSecrets = (options.checkout?.webhookSecrets ?? []).filter((secret) => secret.length > 0);
  if (webhookSecrets.length > 0) {
    const referralContexts = new ReferralContextSigner([options.licensing.encryptionKey]);
    await app.register(checkoutRoutes, { events: new CheckoutEvents(db, (value) => referralContexts.verify(value), app.log), secrets: webhookSecrets });
  }
  await app.register(packageRoutes, { packages, downloadsPerMinute: options.packages?.downloadsPerMinute ?? DEFAULT_PACKAGE_DOWNLOADS_PER_MINUTE });
  await app.register(customerRoutes, { db });
  await app.register(serialRoutes, { db });
  await app.register(purchaseRoutes, { db });
  const connections = new ConnectionTracker(db, app.log, options.licensing.connectionFlushMs);
  app.addHook('onClose', async () => connections.stop());
  await app.register(licensingRoutes, { service: new LicensingService(db, keyring, connections), rateLimit: options.licensing.rateLimit });

  return app;
}
