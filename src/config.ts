import { parseKey } from './platform/crypto/sealed.js';

/**
 * Environment configuration, read and validated once. Every problem is reported
 * together so an operator can fix a bad deployment in one pass.
 */
export interface Config {
  port: number;
  host: string;
  /** Set: a PostgreSQL server (production path). Unset: embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  dbPoolSize: number;
  dataDir: string;
  jwtSecret: string | undefined;
  jwtIssuer: string;
  jwtAudience: string;
  jwksUrl: string | undefined;
  logLevel: string;
  /** 32-byte key that encrypts license signing keys at rest (hex or base64). */
  licenseKeyEncryptionKey: string | undefined;
  /** Licensing runtime rate limits, requests per minute. */
  licensingRateLimitPerIp: number;
  licensingRateLimitPerSerial: number;
  /** Where outgoing e-mail goes: the log (default), JSON lines in a file under DATA_DIR, or SMTP. */
  mailTransport: 'log' | 'file' | 'smtp';
  mailFrom: string;
  smtpUrl: string | undefined;
  /** Seed demo data into an empty embedded database on start. */
  demo: boolean;
  production: boolean;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    problems.push(`${name} must be a whole number between ${min} and ${max} (got "${raw}")`);
    return fallback;
  }
  const value = Number(raw);
  if (value < min || value > max) problems.push(`${name} must be between ${min} and ${max} (got ${value})`);
  return value;
}

function urlVar(env: NodeJS.ProcessEnv, name: string, protocols: string[], problems: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    const url = new URL(raw);
    if (!protocols.includes(url.protocol)) {
      problems.push(`${name} must use ${protocols.join(' or ')} (got "${url.protocol}")`);
    }
  } catch {
    problems.push(`${name} is not a valid URL`);
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const production = env.NODE_ENV === 'production';
  const databaseUrl = urlVar(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], problems);
  const jwksUrl = urlVar(env, 'JWKS_URL', ['https:', 'http:'], problems);
  const jwtSecret = env.JWT_SECRET || undefined;
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32) {
    problems.push('JWT_SECRET must be at least 32 bytes long');
  }
  if (production && !jwtSecret && !jwksUrl) {
    problems.push('JWT_SECRET or JWKS_URL is required when NODE_ENV=production');
  }
  const licenseKeyEncryptionKey = env.LICENSE_KEY_ENCRYPTION_KEY || undefined;
  if (licenseKeyEncryptionKey !== undefined && !parseKey(licenseKeyEncryptionKey)) {
    problems.push('LICENSE_KEY_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  if (production && !licenseKeyEncryptionKey) {
    problems.push('LICENSE_KEY_ENCRYPTION_KEY is required when NODE_ENV=production');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  const demoRaw = env.DEMO || '1';
  if (!['0', '1', 'true', 'false'].includes(demoRaw)) problems.push(`DEMO must be 0, 1, true or false (got "${demoRaw}")`);
  const host = env.HOST || '127.0.0.1';
  const smtpUrl = urlVar(env, 'SMTP_URL', ['smtp:', 'smtps:'], problems);
  const mailTransport = (env.MAIL_TRANSPORT || (smtpUrl ? 'smtp' : 'log')) as Config['mailTransport'];
  if (!['log', 'file', 'smtp'].includes(mailTransport)) problems.push(`MAIL_TRANSPORT must be log, file or smtp (got "${mailTransport}")`);
  if (mailTransport === 'smtp' && !smtpUrl) problems.push('MAIL_TRANSPORT=smtp needs SMTP_URL');
  const mailFrom = env.MAIL_FROM || 'Patchbay <no-reply@patchbay.invalid>';

  const config: Config = {
    port: intVar(env, 'PORT', 3000, 0, 65535, problems),
    host,
    databaseUrl,
    dbPoolSize: intVar(env, 'DB_POOL_SIZE', 10, 1, 500, problems),
    dataDir: env.DATA_DIR || './data',
    jwtSecret,
    jwtIssuer: env.JWT_ISSUER || 'patchbay',
    jwtAudience: env.JWT_AUDIENCE || 'patchbay-api',
    jwksUrl,
    logLevel,
    licenseKeyEncryptionKey,
    licensingRateLimitPerIp: intVar(env, 'LICENSING_RATE_LIMIT_PER_IP', 600, 1, 10_000_000, problems),
    licensingRateLimitPerSerial: intVar(env, 'LICENSING_RATE_LIMIT_PER_SERIAL', 60, 1, 10_000_000, problems),
    mailTransport,
    mailFrom,
    smtpUrl,
    demo: demoRaw === '1' || demoRaw === 'true',
    production,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
