import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from './app.js';
import { type Config, loadConfig } from './config.js';
import { signAccessToken } from './platform/auth/jwt.js';
import { type Database, describeDbError } from './platform/db/database.js';
import { loggerOptions } from './platform/http/logging.js';
import { FileTransport, SmtpTransport } from './platform/mail/transport.js';
import { openRedis } from './platform/redis/redis.js';
import { LocalStorage, NoStorage, type PrivateStorage, S3Storage } from './platform/storage/storage.js';
import { countWorkspaces, findAccount, membershipsOf } from './modules/workspaces/workspaces.repo.js';
import { DEMO_OWNER_EMAIL, pluginConnectionHints, seedDemo } from './operator/demo.js';
import { describeStartupFailure } from './operator/startup-errors.js';
import { firstStepsHint } from './operator/provision.js';
import { openMigratedDatabase, resolveJwtSettings, resolveLicenseKeyEncryptionKey } from './runtime.js';

/** Graceful shutdown gets this long to finish in-flight requests and jobs before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 25_000;

let config: Config | undefined;

function storageOf(c: Config): PrivateStorage {
  if (c.storage.driver === 'local') return new LocalStorage(c.storage.dir);
  if (c.storage.driver === 's3') return new S3Storage(c.storage);
  return new NoStorage();
}

async function main(): Promise<void> {
  config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const jwt = resolveJwtSettings(config);
  const database: Database = await openMigratedDatabase(config, logger);
  const embedded = database.kind === 'pglite';

  if (embedded && config.demo && (await countWorkspaces(database.db)) === 0) {
    await seedDemo(database.db, jwt);
  }

  const redis = config.redisUrl ? openRedis(config.redisUrl, logger) : undefined;
  const app = await buildApp({
    database,
    jwt,
    licensing: {
      encryptionKey: resolveLicenseKeyEncryptionKey(config),
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
    },
    loggerInstance: logger,
    httpLimits: config.httpLimits,
    trustProxy: config.trustProxy,
    redis,
    corsOrigins: config.corsOrigins,
    metricsToken: config.metricsToken,
    processMetrics: true,
    storage: storageOf(config),
    fileUploadMaxBytes: config.fileUploadMaxBytes,
    packages: config.packages,
    partners: config.partners,
    checkout: { webhookSecrets: config.checkout.webhookSecrets },
    payouts: { minimumMinorUnits: config.payouts.minimumMinorUnits },
    publicBaseUrl: config.publicBaseUrl,
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
      lines.push(`Connect a plugin (licensing runtime: ${address}/api/licensing/v1):`);
      for (const hint of await pluginConnectionHints(database.db, membership.workspace_id)) {
        lines.push(`  ${hint.name}: productAppId ${hint.appId}  serial ${hint.serial ?? '(none available)'}`);
      }
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  if (!embedded && (await countWorkspaces(database.db)) === 0) process.stderr.write(`${firstStepsHint(address, { tokensFromJwks: !jwt.secret })}\n\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${describeStartupFailure(error, { host: config?.host, port: config?.port, databaseUrl: config?.databaseUrl })}\n`);
  if (config?.logLevel === 'debug' || config?.logLevel === 'trace') {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
