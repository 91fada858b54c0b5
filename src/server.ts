import { join } from 'node:path';
import pino from 'pino';
import { type Config, loadConfig } from './config.js';
import { describeDbError } from './platform/db/database.js';
import { loggerOptions } from './platform/http/logging.js';
import type { PrivateStorage } from './platform/storage/storage.js';
import { storageNotice } from './operator/storage-notice.js';
import { openMigratedDatabase, resolveJwtSettings, resolveLicenseKeyEncryptionKey } from './runtime.js';

/**
 * The application's modules. Imported after the embedded database's worker thread has started, so they load while
 * PGlite starts (the two longest parts of start-up run side by side; docs/performance.md, "Start-up").
 */
const importApplication = () =>
  Promise.all([
    import('./app.js'),
    import('./platform/auth/jwt.js'),
    import('./platform/mail/transport.js'),
    import('./platform/redis/redis.js'),
    import('./platform/storage/storage.js'),
    import('./modules/workspaces/index.js'),
    import('./operator/demo.js'),
    import('./operator/provision.js'),
  ]);

/** Graceful shutdown gets this long to finish in-flight requests and jobs before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 25_000;

let config: Config | undefined;

function storageOf(c: Config, { LocalStorage, NoStorage, S3Storage }: typeof import('./platform/storage/storage.js')): PrivateStorage {
  if (c.storage.driver === 'local') return new LocalStorage(c.storage.dir);
  if (c.storage.driver === 's3') return new S3Storage(c.storage);
  return new NoStorage();
}

async function main(): Promise<void> {
  config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const jwt = resolveJwtSettings(config);
  const [database, modules] = await Promise.all([openMigratedDatabase(config, logger), importApplication()]);
  const [{ buildApp }, { signAccessToken }, { FileTransport, SmtpTransport }, { openRedis }, storage, { countWorkspaces, findAccount, membershipsOf }, { DEMO_OWNER_EMAIL, pluginConnectionHints, seedDemo }, { firstStepsHint }] =
    modules;
  const embedded = database.kind === 'pglite';

  if (embedded && config.demo && (await countWorkspaces(database.db)) === 0) {
    await seedDemo(database.db, jwt);
  }

  const noStorage = storageNotice(config.storage);
  if (noStorage) logger.warn(noStorage);

  const redis = config.redisUrl ? openRedis(config.redisUrl, logger) : undefined;
  const encryptionKey = resolveLicenseKeyEncryptionKey(config);
  const app = await buildApp({
    database,
    jwt,
    licensing: {
      encryptionKey,
      rateLimit: {
        perIp: config.licensingRateLimitPerIp,
        perSerial: config.licensingRateLimitPerSerial,
        perSerialTotal: config.licensingRateLimitPerSerialTotal,
      },
    },
    mail: {
      from: config.mailFrom,
      ...(config.mailTransport === 'smtp' ? { transport: new SmtpTransport(config.smtpUrl!) } : {}),
      ...(config.mailTransport === 'file' ? { transport: new FileTransport(join(config.dataDir, 'mail')) } : {}),
      // The console's outbox page (a mail catcher) exists only in development, without SMTP.
      outbox: config.mailOutbox,
    },
    loggerInstance: logger,
    httpLimits: config.httpLimits,
    trustProxy: config.trustProxy,
    redis,
    corsOrigins: config.corsOrigins,
    metricsToken: config.metricsToken,
    processMetrics: true,
    storage: storageOf(config, storage),
    fileUploadMaxBytes: config.fileUploadMaxBytes,
    packages: config.packages,
    partners: config.partners,
    accounts: config.accounts,
    checkout: { webhookSecrets: config.checkout.webhookSecrets },
    customerPortal: config.customerPortal,
    payouts: { minimumMinorUnits: config.payouts.minimumMinorUnits, transferLeaseSeconds: config.payouts.transferLeaseSeconds },
    publicBaseUrl: config.publicBaseUrl,
    web: config.web,
    webhooks: config.webhooks,
    jobs: { pollIntervalMs: config.jobsPollIntervalMs, concurrency: config.jobsConcurrency },
    imports: { asyncThreshold: config.importAsyncThreshold, leaseSeconds: config.importJobLeaseSeconds },
  });

  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests; in-flight requests and jobs finish');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await app.close();
      redis?.disconnect();
      await database.close();
    } finally {
      process.exit(exitCode);
    }
  };
  // A stray error must never print driver internals (a PostgreSQL client carries its backend pid and
  // cancel key): log its code and message only. A rejected promise nobody awaited is logged and the
  // service keeps serving; an uncaught exception leaves the process in an unknown state, so it exits
  // (a supervisor restarts it) after closing what it can.
  process.on('unhandledRejection', (reason) => logger.error({ err: describeDbError(reason) }, 'unhandled rejection'));
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: describeDbError(error) }, 'uncaught exception: exiting');
    void shutdown('uncaughtException', 1);
  });
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  const address = await app.listen({ port: config.port, host: config.host });
  const lines = [`Patchbay API listening on ${address}`, `API reference: ${address}/docs  (OpenAPI: ${address}/openapi.json)`];
  if (embedded) {
    lines.push(`Embedded database: ${config.dataDir}`);
    const owner = await findAccount(database.db, DEMO_OWNER_EMAIL);
    const membership = owner ? (await membershipsOf(database.db, owner.id))[0] : undefined;
    if (owner && membership && jwt.secret) {
      const token = await signAccessToken(
        { secret: jwt.secret, issuer: jwt.issuer, audience: jwt.audience },
        { accountId: owner.id, workspaceId: membership.workspace_id, ttlSeconds: 12 * 3600 },
      );
      lines.push(`Demo owner token (12 h): ${token}`);
      lines.push(`Paste to use it:  export TOKEN=${token}`);
      lines.push(`Then try:  curl -H "Authorization: Bearer $TOKEN" ${address}/api/developer/customers`);
      const { bannerSignInUrl } = await import('./modules/accounts/index.js');
      const signIn = await bannerSignInUrl(database.db, encryptionKey, { accountId: owner.id, publicBaseUrl: config.publicBaseUrl, ttlMs: 12 * 3_600_000 });
      lines.push(`Console (one-time sign-in link, 12 h): ${signIn}`);
      lines.push(`Connect a plugin (licensing runtime: ${address}/api/licensing/v1):`);
      for (const hint of await pluginConnectionHints(database.db, membership.workspace_id)) {
        lines.push(`  ${hint.name}: productAppId ${hint.appId}  serial ${hint.serial ?? '(none available)'}`);
      }
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  if (!embedded && (await countWorkspaces(database.db)) === 0) process.stderr.write(`${firstStepsHint(address, { tokensFromJwks: !jwt.secret })}\n\n`);
}

main().catch(async (error: unknown) => {
  const { describeStartupFailure } = await import('./operator/startup-errors.js');
  process.stderr.write(`${describeStartupFailure(error, { host: config?.host, port: config?.port, databaseUrl: config?.databaseUrl })}\n`);
  if (config?.logLevel === 'debug' || config?.logLevel === 'trace') {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
