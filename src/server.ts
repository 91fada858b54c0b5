import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { signAccessToken } from './platform/auth/jwt.js';
import { DataDirLockedError } from './platform/db/database.js';
import { countWorkspaces, membershipsOf, findAccount } from './modules/workspaces/workspaces.repo.js';
import { DEMO_OWNER_EMAIL, seedDemo } from './operator/demo.js';
import { join } from 'node:path';
import { FileTransport, SmtpTransport } from './platform/mail/transport.js';
import { openMigratedDatabase, resolveJwtSettings, resolveLicenseKeyEncryptionKey } from './runtime.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const jwt = resolveJwtSettings(config);
  const database = await openMigratedDatabase(config);
  const embedded = database.kind === 'pglite';

  if (embedded && config.demo && (await countWorkspaces(database.db)) === 0) {
    await seedDemo(database.db, jwt);
  }

  const app = await buildApp({
    database,
    jwt,
    licensing: {
      encryptionKey: resolveLicenseKeyEncryptionKey(config),
      rateLimit: { perIp: config.licensingRateLimitPerIp, perSerial: config.licensingRateLimitPerSerial },
    },
    mail: {
      from: config.mailFrom,
      ...(config.mailTransport === 'smtp' ? { transport: new SmtpTransport(config.smtpUrl!) } : {}),
      ...(config.mailTransport === 'file' ? { transport: new FileTransport(join(config.dataDir, 'mail')) } : {}),
    },
    logger: { level: config.logLevel, redact: ['req.headers.authorization'] },
  });
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
      lines.push(`Try: curl -H "Authorization: Bearer $TOKEN" ${address}/api/developer/customers`);
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n`);

  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
