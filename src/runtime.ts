import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { JwtSettings } from './platform/auth/jwt.js';
import { migrate, openDatabase, type Database } from './platform/db/database.js';

/**
 * Without JWT_SECRET (and outside production) a secret is generated once and
 * kept in DATA_DIR, so the server and the CLI agree across restarts.
 */
export function resolveJwtSettings(config: Config): JwtSettings {
  let secret = config.jwtSecret;
  if (!secret && !(config.production && config.jwksUrl)) {
    if (config.production) throw new Error('JWT_SECRET or JWKS_URL is required in production');
    const file = path.join(path.resolve(config.dataDir), 'jwt-secret');
    if (fs.existsSync(file)) {
      secret = fs.readFileSync(file, 'utf8').trim();
    } else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      secret = randomBytes(48).toString('base64url');
      fs.writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
    }
  }
  return { secret, issuer: config.jwtIssuer, audience: config.jwtAudience, jwksUrl: config.jwksUrl };
}

export async function openMigratedDatabase(config: Config): Promise<Database> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize, dataDir: config.dataDir });
  try {
    await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
