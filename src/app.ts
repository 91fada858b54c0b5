import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { Database } from './platform/db/database.js';
import { createTokenVerifier, type JwtSettings } from './platform/auth/jwt.js';
import { registerPolicy } from './platform/auth/policy.js';
import { registerWeb, type WebOptions } from './platform/http/web.js';
import { healthRoutes } from './platform/http/health.routes.js';
import { registerErrorDocs } from './platform/http/error-docs.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './platform/http/limits.js';
import { createServer, registerHttpProtections, registerRequestServices } from './platform/http/setup.js';
import { registerCounterFolding } from './platform/counters/counters.js';
import { registerJobRunner } from './platform/jobs/setup.js';
import { openApiOptions } from './openapi.js';
import { DEFAULT_ASYNC_IMPORT_THRESHOLD, ImportRunner } from './platform/import/import-runner.js';
import * as importsModule from './modules/imports/index.js';
import * as accountsModule from './modules/accounts/index.js';
import * as workspacesModule from './modules/workspaces/index.js';
import { registerMailJobs } from './platform/mail/mail.jobs.js';
import { LinkTokens } from './platform/mail/link-tokens.js';
import { LogTransport, type MailTransport } from './platform/mail/transport.js';
import * as customersModule from './modules/customers/index.js';
import * as licensingModule from './modules/licensing/index.js';
import * as customerPortalModule from './modules/customer-portal/index.js';
import * as purchasesModule from './modules/purchases/index.js';
import * as serialsModule from './modules/serials/index.js';
import * as productsModule from './modules/products/index.js';
import { LinkSigner, PrivateLinks, registerPrivateLinkRoute } from './platform/links/private-links.js';
import { NoStorage, type PrivateStorage } from './platform/storage/storage.js';
import * as packagesModule from './modules/packages/index.js';
import * as partnersModule from './modules/partners/index.js';
import * as referralsModule from './modules/referrals/index.js';
import * as checkoutModule from './modules/checkout/index.js';
import * as checkoutConnectionsModule from './modules/checkout-connections/index.js';
import * as webhooksModule from './modules/webhooks/index.js';
import * as ledgerModule from './modules/ledger/index.js';
import * as recipientsModule from './modules/recipients/index.js';
import * as payoutsModule from './modules/payouts/index.js';

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
  /** Outgoing e-mail; `outbox`: keep what is sent for the console's outbox page (development only: server.ts decides). */
  mail?: { transport?: MailTransport; from?: string; outbox?: boolean };
  /** Console sign-in links one address may ask for per hour (default 5). */
  accounts?: { signInLinksPerHour?: number };
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
  payouts?: {
    providers?: payoutsModule.PayoutProviders;
    /** The smallest payable balance a payout run transfers (minor units, default 1000). */
    minimumMinorUnits?: number;
    /** How long a payout run owns a transfer before the next run may take it over (seconds, default 300). */
    transferLeaseSeconds?: number;
  };
  /** Secrets of the managed checkout's signed event webhook (the first signs in tests; any verifies); none: the route is absent. Bound: events booked at once (default 4 booking, 500 waiting). */
  checkout?: { webhookSecrets?: string[]; bound?: checkoutModule.CheckoutEventBound };
  /** Checkout connections (Stripe, Paddle, Lemon Squeezy): where Stripe's library reaches its API (tests: a local server). */
  checkoutConnections?: { stripeApi?: checkoutConnectionsModule.StripeApiOptions };
  /** The buyers' portal: device releases per serial in 30 days (default 3), sign-in links per address and hour, key e-mails per buyer and hour. */
  customerPortal?: { deviceReleasesPerSerial?: number; signInLinksPerHour?: number; keyResendsPerHour?: number };
  /** The web front end: the build (default), Vite with hot reload, or none. */
  web?: WebOptions;
  /** Outbound webhooks: the allow-list of non-public hosts, the retry schedule, the runner's concurrency (tests: a resolver and a clock). */
  webhooks?: webhooksModule.WebhookOptions;
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

export const DEFAULT_MAIL_FROM = 'Patchbay <no-reply@patchbay.invalid>';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** The import flow shared by the modules' import routes. */
    imports: ImportRunner;
  }
}

/**
 * The app: the platform first (the server, background work and e-mail, the protections every
 * request passes, who is calling, the services routes share), then each module through its face,
 * in the order their routes appear in the API document.
 */
export async function buildApp(options: AppOptions): Promise<App> {
  const db = options.database.db;
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.httpLimits };
  const publicUrl = (options.publicBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const portalUrl = (options.partners?.portalUrl ?? `${publicUrl}/partner-portal`).replace(/\/$/, '');

  const app = createServer({ limits, trustProxy: options.trustProxy, logger: options.logger, loggerInstance: options.loggerInstance });
  const configuredTransport: MailTransport = options.mail?.transport ?? new LogTransport((entry, message) => app.log.info(entry, message));
  const outbox = options.mail?.outbox ? new accountsModule.OutboxRecorder(configuredTransport) : undefined;
  const transport = outbox ?? configuredTransport;
  const runner = registerJobRunner(app, db, options.jobs, transport);
  registerCounterFolding(app, db, runner, { run: options.jobs?.run });
  await registerHttpProtections(app, { limits, publicBaseUrl: publicUrl, corsOrigins: options.corsOrigins ?? [] });
  const linkTokens = new LinkTokens(options.licensing.encryptionKey);
  registerMailJobs(runner, transport, { from: options.mail?.from ?? DEFAULT_MAIL_FROM, context: { db, tokens: linkTokens, urls: { publicBaseUrl: publicUrl, portalUrl } } });
  // Who is calling: each kind of caller's credentials are resolved by the module that issues them.
  const recipients = new recipientsModule.Recipients(db, linkTokens);
  const accounts = accountsModule.createAccounts(db, linkTokens);
  const customerPortal = customerPortalModule.createCustomerPortal(db, publicUrl, linkTokens);
  registerPolicy(app, db, createTokenVerifier(options.jwt), (token) => recipients.verify(token), accounts.credentials, customerPortal.verify);
  await registerRequestServices(app, {
    db,
    runner,
    openApi: openApiOptions(publicUrl),
    metrics: { pool: options.database.pool, processMetrics: options.processMetrics ?? false, token: options.metricsToken },
    rateLimits: { redis: options.redis, namespace: options.rateLimitNamespace },
  });

  // What several modules share: the import flow, private storage and links, product credentials, license keys, plugin packages.
  const imports = new ImportRunner(options.database, {
    asyncThreshold: options.imports?.asyncThreshold ?? DEFAULT_ASYNC_IMPORT_THRESHOLD,
    leaseSeconds: options.imports?.leaseSeconds ?? 60,
    onFinished: importsModule.announceImportFinished,
  });
  app.decorate('imports', imports);
  importsModule.registerImportJobs(runner, imports);

  const storage = options.storage ?? new NoStorage();
  productsModule.registerProductJobs(runner, storage);
  const links = new PrivateLinks(new LinkSigner([options.licensing.encryptionKey]), publicUrl);
  registerPrivateLinkRoute(app, links);
  const credentials = new productsModule.ProductCredentials(db, options.licensing.encryptionKey);
  const keyring = new licensingModule.LicenseKeyring(db, options.licensing.encryptionKey);
  const packages = packagesModule.createPackages({ db, storage, links, credentials, keyring, publicBaseUrl: publicUrl, ...options.packages });

  healthRoutes(app, db);
  registerErrorDocs(app);

  // The modules, each through its face.
  importsModule.register(app, { db, runner: imports });
  accountsModule.register(app, { db, accounts, runner, linksPerHour: options.accounts?.signInLinksPerHour, outbox });
  workspacesModule.register(app, { db, publicBaseUrl: publicUrl });
  productsModule.register(app, { db, storage, links, credentials, packages, publicBaseUrl: publicUrl, fileUploadMaxBytes: options.fileUploadMaxBytes });
  recipientsModule.register(app, { recipients, linksPerHour: options.partners?.signInLinksPerHour });
  const partners = partnersModule.createPartners(db, { limits: options.partners, tokens: linkTokens, portalUrl, publicBaseUrl: publicUrl });
  partnersModule.register(app, partners);
  const payouts = payoutsModule.createPayouts(db, { publicBaseUrl: publicUrl, configured: options.payouts?.providers });
  ledgerModule.register(app, {
    db,
    runner,
    providers: payouts.providers,
    minimumMinorUnits: options.payouts?.minimumMinorUnits,
    transferLeaseSeconds: options.payouts?.transferLeaseSeconds,
  });
  await payoutsModule.register(app, { db, payouts, agreements: partners.portal, holdHours: options.partners?.destinationHoldHours });
  const referrals = referralsModule.register(app, { db, secret: options.licensing.encryptionKey, publicBaseUrl: publicUrl, perMinute: options.partners?.referralsPerMinute });
  const webhookSecrets = (options.checkout?.webhookSecrets ?? []).filter((secret) => secret.length > 0);
  if (webhookSecrets.length > 0) {
    await checkoutModule.register(app, { db, secrets: webhookSecrets, verifyReferral: referrals.verifyContext, bound: options.checkout?.bound });
  }
  await checkoutConnectionsModule.register(app, {
    db,
    runner,
    encryptionKey: options.licensing.encryptionKey,
    publicBaseUrl: publicUrl,
    verifyReferral: referrals.verifyContext,
    stripeApi: options.checkoutConnections?.stripeApi,
  });
  packagesModule.register(app, { packages, downloadsPerMinute: options.packages?.downloadsPerMinute });
  customersModule.register(app, { db, runner: imports, pool: options.database.pool });
  serialsModule.register(app, { db, runner: imports });
  purchasesModule.register(app, { db, runner: imports });
  const licensing = licensingModule.createLicensing(app, { db, keyring, connectionFlushMs: options.licensing.connectionFlushMs });
  licensingModule.register(app, { service: licensing, rateLimit: options.licensing.rateLimit });
  customerPortalModule.register(app, {
    db,
    portal: customerPortal,
    runner,
    licensing,
    storage,
    links,
    publicBaseUrl: publicUrl,
    releasesPerSerial: options.customerPortal?.deviceReleasesPerSerial,
    linksPerHour: options.customerPortal?.signInLinksPerHour,
    keyResendsPerHour: options.customerPortal?.keyResendsPerHour,
  });
  webhooksModule.register(app, { db, encryptionKey: options.licensing.encryptionKey, run: options.jobs?.run !== false, pollIntervalMs: options.jobs?.pollIntervalMs, log: app.log, options: options.webhooks });
  await registerWeb(app, options.web);

  return app;
}
