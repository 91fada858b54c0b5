import { parseKey } from './platform/crypto/sealed.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './platform/http/limit-settings.js';
import { parseAllowList } from './platform/net/address-policy.js';

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
  /** DB_PREPARED_STATEMENTS: name repeated statements (PostgreSQL). Off behind a pooler that cannot keep them. */
  dbPreparedStatements: boolean;
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
  licensingRateLimitPerSerialTotal: number;
  /** Redis for state shared by several instances (rate-limit counters); unset: per process. */
  redisUrl: string | undefined;
  /** Where outgoing e-mail goes: the log (default), JSON lines in a file under DATA_DIR, or SMTP. */
  mailTransport: 'log' | 'file' | 'smtp';
  mailFrom: string;
  smtpUrl: string | undefined;
  /** Keep sent e-mail for the console's outbox page: outside production, with the log or file transport only. */
  mailOutbox: boolean;
  /** Timeouts and per-address caps of the HTTP server. */
  httpLimits: HttpLimits;
  /** Proxies whose X-Forwarded-For is believed: false, true, a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  /** Browser origins allowed to call the API (CORS allowlist). */
  corsOrigins: string[];
  /** Bearer token for GET /metrics; unset: open. */
  metricsToken: string | undefined;
  /** How often the job runner looks for due jobs, and how many it runs at once. */
  jobsPollIntervalMs: number;
  jobsConcurrency: number;
  /** Imports with more rows run as jobs (202); the lease of an import job (renewed while it runs). */
  importAsyncThreshold: number;
  importJobLeaseSeconds: number;
  /** Where delivery files and packages are kept (never public). */
  storage:
    | { driver: 'none' }
    | { driver: 'local'; dir: string }
    | { driver: 's3'; bucket: string; endpoint: string | undefined; region: string; accessKeyId: string | undefined; secretAccessKey: string | undefined; forcePathStyle: boolean; prefix: string };
  fileUploadMaxBytes: number;
  packages: { buildSlots: number; liveRotationOverlapDays: number; downloadsPerMinute: number };
  partners: { invitesPerWorkspacePerDay: number; inviteResendCooldownSeconds: number; inviteTtlHours: number; signInLinksPerHour: number; referralsPerMinute: number; destinationHoldHours: number; portalUrl?: string };
  /** Console sign-in links one address may ask for per hour (DEVELOPER_SIGN_IN_LINKS_PER_HOUR). */
  accounts: { signInLinksPerHour: number };
  /** The managed checkout's webhook secrets (CHECKOUT_WEBHOOK_SECRET, comma-separated during a rotation) and the payout run. */
  checkout: { webhookSecrets: string[] };
  payouts: { minimumMinorUnits: number; transferLeaseSeconds: number };
  /** The buyers' portal: device releases a buyer may make per serial in 30 days. */
  customerPortal: { deviceReleasesPerSerial: number; signInLinksPerHour: number };
  /** The service's public URL (links, package configuration, OpenAPI servers). */
  publicBaseUrl: string;
  /** The web front end: `dev` runs Vite with hot reload inside the server (WEB_DEV=1, never in production); `dir` overrides the build directory (WEB_DIR). */
  web: { mode: 'static' | 'dev'; dir?: string };
  /** Outbound webhooks (WEBHOOK_*): non-public hosts allowed, attempts at once, per-attempt timeout, retry delays, secret rotation overlap. */
  webhooks: { allowedHosts: string[]; concurrency: number; timeoutMs: number; retryScheduleMs?: number[]; rotationOverlapHours: number };
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

function flagVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean, problems: string[]): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!['0', '1', 'true', 'false'].includes(raw)) problems.push(`${name} must be 0, 1, true or false (got "${raw}")`);
  return raw === '1' || raw === 'true';
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

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.every((e) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) return entries;
  problems.push('TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses or CIDR ranges');
  return false;
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

  const d = DEFAULT_HTTP_LIMITS;
  const httpLimits: HttpLimits = {
    headersTimeoutMs: intVar(env, 'HTTP_HEADERS_TIMEOUT_MS', d.headersTimeoutMs, 1_000, 600_000, problems),
    bodyTimeoutMs: intVar(env, 'HTTP_BODY_TIMEOUT_MS', d.bodyTimeoutMs, 0, 3_600_000, problems),
    requestTimeoutMs: intVar(env, 'HTTP_REQUEST_TIMEOUT_MS', d.requestTimeoutMs, 1_000, 3_600_000, problems),
    idleTimeoutMs: intVar(env, 'HTTP_IDLE_TIMEOUT_MS', d.idleTimeoutMs, 0, 3_600_000, problems),
    keepAliveTimeoutMs: intVar(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveTimeoutMs, 1, 600_000, problems),
    maxConnectionsPerIp: intVar(env, 'MAX_CONNECTIONS_PER_IP', d.maxConnectionsPerIp, 0, 1_000_000, problems),
    publicInflightPerIp: intVar(env, 'PUBLIC_INFLIGHT_PER_IP', d.publicInflightPerIp, 0, 1_000_000, problems),
  };
  const trustProxy = parseTrustProxy(env.TRUST_PROXY, problems);
  const corsOrigins = (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  for (const origin of corsOrigins) {
    let valid = false;
    try {
      const url = new URL(origin);
      valid = (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin.replace(/\/$/, '');
    } catch {
      valid = false;
    }
    if (!valid) problems.push(`CORS_ORIGINS entries must be origins such as https://console.example.com (got "${origin}")`);
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  if ((env.CHECKOUT_WEBHOOK_SECRET ?? '').split(',').some((v) => v.trim().length > 0 && v.trim().length < 32)) problems.push('CHECKOUT_WEBHOOK_SECRET values must be at least 32 characters each');

  const storageDriver = env.STORAGE_DRIVER || (env.STORAGE_S3_BUCKET ? 's3' : env.STORAGE_DIR || !databaseUrl ? 'local' : 'none');
  let storage: Config['storage'] = { driver: 'none' };
  if (storageDriver === 'local') storage = { driver: 'local', dir: env.STORAGE_DIR || `${(env.DATA_DIR || './data').replace(/\/$/, '')}/storage` };
  else if (storageDriver === 's3') {
    const endpoint = urlVar(env, 'STORAGE_S3_ENDPOINT', ['https:', 'http:'], problems);
    if (!env.STORAGE_S3_BUCKET) problems.push('STORAGE_DRIVER=s3 needs STORAGE_S3_BUCKET');
    storage = {
      driver: 's3',
      bucket: env.STORAGE_S3_BUCKET ?? '',
      endpoint,
      region: env.STORAGE_S3_REGION || 'us-east-1',
      accessKeyId: env.STORAGE_S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.STORAGE_S3_SECRET_ACCESS_KEY || undefined,
      forcePathStyle: (env.STORAGE_S3_FORCE_PATH_STYLE ?? (endpoint ? 'true' : 'false')) === 'true',
      prefix: env.STORAGE_S3_PREFIX ?? '',
    };
  } else if (storageDriver !== 'none') problems.push(`STORAGE_DRIVER must be local, s3 or none (got "${storageDriver}")`);
  const publicBaseUrl = urlVar(env, 'PUBLIC_BASE_URL', ['https:', 'http:'], problems);
  const partnerPortalUrl = urlVar(env, 'PARTNER_PORTAL_URL', ['https:', 'http:'], problems);
  const webhookHosts = (env.WEBHOOK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean);
  problems.push(...parseAllowList(webhookHosts).problems);
  const retryRaw = env.WEBHOOK_RETRY_SCHEDULE_SECONDS?.trim();
  const retrySeconds = retryRaw ? retryRaw.split(',').map((v) => v.trim()) : undefined;
  if (retrySeconds && (retrySeconds.length > 20 || retrySeconds.some((v) => !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 604_800))) {
    problems.push('WEBHOOK_RETRY_SCHEDULE_SECONDS must be up to 20 comma-separated delays in seconds, each 1 to 604800');
  }
  const webDev = env.WEB_DEV ?? '0';
  if (!['0', '1'].includes(webDev)) problems.push(`WEB_DEV must be 0 or 1 (got "${webDev}")`);
  if (webDev === '1' && production) problems.push('WEB_DEV=1 (Vite with hot reload) is for development; production serves the build (npm run build:web)');

  const config: Config = {
    port: intVar(env, 'PORT', 3000, 0, 65535, problems),
    host,
    databaseUrl,
    dbPoolSize: intVar(env, 'DB_POOL_SIZE', 10, 1, 500, problems),
    dbPreparedStatements: flagVar(env, 'DB_PREPARED_STATEMENTS', true, problems),
    dataDir: env.DATA_DIR || './data',
    jwtSecret,
    jwtIssuer: env.JWT_ISSUER || 'patchbay',
    jwtAudience: env.JWT_AUDIENCE || 'patchbay-api',
    jwksUrl,
    logLevel,
    licenseKeyEncryptionKey,
    licensingRateLimitPerIp: intVar(env, 'LICENSING_RATE_LIMIT_PER_IP', 600, 1, 10_000_000, problems),
    licensingRateLimitPerSerial: intVar(env, 'LICENSING_RATE_LIMIT_PER_SERIAL', 60, 1, 10_000_000, problems),
    licensingRateLimitPerSerialTotal: intVar(env, 'LICENSING_RATE_LIMIT_PER_SERIAL_TOTAL', 600, 1, 10_000_000, problems),
    redisUrl: urlVar(env, 'REDIS_URL', ['redis:', 'rediss:'], problems),
    mailTransport,
    mailFrom,
    smtpUrl,
    mailOutbox: !production && mailTransport !== 'smtp',
    httpLimits,
    trustProxy,
    storage,
    fileUploadMaxBytes: intVar(env, 'FILE_UPLOAD_MAX_BYTES', 2 * 1024 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024, problems),
    packages: {
      buildSlots: intVar(env, 'PACKAGE_BUILD_SLOTS', 2, 1, 64, problems),
      liveRotationOverlapDays: intVar(env, 'PRODUCT_KEY_ROTATION_OVERLAP_DAYS', 7, 0, 365, problems),
      downloadsPerMinute: intVar(env, 'PACKAGE_DOWNLOADS_PER_MINUTE', 30, 1, 10_000, problems),
    },
    checkout: { webhookSecrets: (env.CHECKOUT_WEBHOOK_SECRET ?? '').split(',').map((v) => v.trim()).filter((v) => v.length > 0) },
    payouts: {
      minimumMinorUnits: intVar(env, 'PAYOUT_MINIMUM_MINOR_UNITS', 1000, 1, 1_000_000_000, problems),
      transferLeaseSeconds: intVar(env, 'PAYOUT_TRANSFER_LEASE_SECONDS', 300, 1, 86_400, problems),
    },
    customerPortal: {
      deviceReleasesPerSerial: intVar(env, 'PORTAL_DEVICE_RELEASES_PER_SERIAL_PER_30_DAYS', 3, 1, 1_000, problems),
      signInLinksPerHour: intVar(env, 'PORTAL_SIGN_IN_LINKS_PER_HOUR', 5, 1, 1_000, problems),
    },
    accounts: { signInLinksPerHour: intVar(env, 'DEVELOPER_SIGN_IN_LINKS_PER_HOUR', 5, 1, 1_000, problems) },
    partners: {
      invitesPerWorkspacePerDay: intVar(env, 'INVITES_PER_WORKSPACE_PER_DAY', 200, 1, 100_000, problems),
      inviteResendCooldownSeconds: intVar(env, 'INVITE_RESEND_COOLDOWN_SECONDS', 60, 0, 86_400, problems),
      inviteTtlHours: intVar(env, 'INVITE_TTL_HOURS', 168, 1, 720, problems),
      signInLinksPerHour: intVar(env, 'PARTNER_SIGN_IN_LINKS_PER_HOUR', 5, 1, 1_000, problems),
      destinationHoldHours: intVar(env, 'PAYOUT_DESTINATION_HOLD_HOURS', 72, 0, 720, problems),
      referralsPerMinute: intVar(env, 'REFERRAL_REQUESTS_PER_MINUTE', 60, 1, 10_000_000, problems),
      ...(partnerPortalUrl ? { portalUrl: partnerPortalUrl } : {}),
    },
    publicBaseUrl: (publicBaseUrl ?? `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${env.PORT || 3000}`).replace(/\/$/, ''),
    corsOrigins,
    metricsToken,
    jobsPollIntervalMs: intVar(env, 'JOBS_POLL_INTERVAL_MS', 2_000, 100, 600_000, problems),
    jobsConcurrency: intVar(env, 'JOBS_CONCURRENCY', 4, 1, 64, problems),
    importAsyncThreshold: intVar(env, 'IMPORT_ASYNC_THRESHOLD', 10_000, 0, 100_000, problems),
    importJobLeaseSeconds: intVar(env, 'IMPORT_JOB_LEASE_SECONDS', 60, 5, 3_600, problems),
    web: { mode: webDev === '1' ? 'dev' : 'static', ...(env.WEB_DIR ? { dir: env.WEB_DIR } : {}) },
    webhooks: {
      allowedHosts: webhookHosts,
      concurrency: intVar(env, 'WEBHOOK_CONCURRENCY', 64, 1, 256, problems),
      timeoutMs: intVar(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 1_000, 60_000, problems),
      ...(retrySeconds ? { retryScheduleMs: retrySeconds.map((v) => Number(v) * 1000) } : {}),
      rotationOverlapHours: intVar(env, 'WEBHOOK_SECRET_OVERLAP_HOURS', 24, 0, 720, problems),
    },
    demo: demoRaw === '1' || demoRaw === 'true',
    production,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
