import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { JwtSettings } from './platform/auth/jwt.js';
import { parseKey } from './platform/crypto/sealed.js';
import { type DbLogger, migrate, openDatabase, type Database } from './platform/db/database.js';

/**
 * Without JWT_SECRET (and outside production) a secret is generated once and
 * kept in DATA_DIR, so the server and the CLI agree across restarts.
 */
export function resolveJwtSettings(config: Config): JwtSettings {
  let secret = config.jwtSecret;
  if (!secret && !(config.production && config.jwksUrl)) {
    if (config.production) throw new Error('JWT_SECRET or JWKS_URL is required in production');
    secret = keptSecret(config, 'jwt-secret', () => randomBytes(48).toString('base64url'));
  }
  return { secret, issuer: config.jwtIssuer, audience: config.jwtAudience, jwksUrl: config.jwksUrl };
}

function keptSecret(config: Config, name: string, make: () => string): string {
  const file = path.join(path.resolve(config.dataDir), name);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const value = make();
  try {
    fs.writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process created it first: use theirs, so both agree.
    if ((error as { code?: string }).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
  return value;
}

/**
 * The key that encrypts license signing keys. Outside production a missing
 * key is generated once and kept in DATA_DIR beside the database it protects.
 */
export function resolveLicenseKeyEncryptionKey(config: Config): Buffer {
  const text = config.licenseKeyEncryptionKey ?? keptSecret(config, 'license-key-encryption-key', () => randomBytes(32).toString('base64'));
  const key = parseKey(text);
  if (!key) throw new Error('LICENSE_KEY_ENCRYPTION_KEY must be 32 bytes');
  return key;
}

export async function openMigratedDatabase(config: Config, log?: DbLogger): Promise<Database> {
  // The migrations (about thirty modules) load while the database starts instead of after it; `migrate` imports
  // the same module and finds it loaded, or reports its error.
  import('./migrations/index.js').catch(() => undefined);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize, preparedStatements: config.dbPreparedStatements, dataDir: config.dataDir, ...(log ? { log } : {}) });
  try {
    await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
