import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const SECRET = 'a-secret-that-is-long-enough-0123456789';

/** The problems loadConfig reports for `env`, or [] when it accepts it. */
function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
}

describe('production secrets', () => {
  it('requires the token source and the license key-encryption key in production, on either database', () => {
    for (const env of [{ NODE_ENV: 'production' }, { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/patchbay' }]) {
      const problems = problemsOf(env);
      expect(problems).toContain('JWT_SECRET or JWKS_URL is required when NODE_ENV=production');
      expect(problems).toContain('LICENSE_KEY_ENCRYPTION_KEY is required when NODE_ENV=production');
    }
  });

  it('rejects a license key-encryption key that is not 32 bytes', () => {
    expect(problemsOf({ LICENSE_KEY_ENCRYPTION_KEY: 'short' })).toEqual(['LICENSE_KEY_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64']);
  });
});

describe('loadConfig defaults', () => {
  it('runs with an empty environment: embedded database, port 3000, demo on', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dbPoolSize: 10,
      dataDir: './data',
      jwtSecret: undefined,
      jwtIssuer: 'patchbay',
      jwtAudience: 'patchbay-api',
      jwksUrl: undefined,
      logLevel: 'info',
      demo: true,
      production: false,
    });
  });

  it('treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '', JWT_SECRET: '', LOG_LEVEL: '', DATA_DIR: '', DB_POOL_SIZE: '', HOST: '' });
    expect(config.port).toBe(3000);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.jwtSecret).toBeUndefined();
    expect(config.logLevel).toBe('info');
    expect(config.dataDir).toBe('./data');
    expect(config.dbPoolSize).toBe(10);
    expect(config.dbPreparedStatements).toBe(true);
  });

  it('reads every variable it knows', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://app:pw@db.internal:5432/patchbay',
      DB_POOL_SIZE: '25',
      DB_PREPARED_STATEMENTS: '0',
      DATA_DIR: '/var/lib/patchbay',
      JWT_SECRET: SECRET,
      JWT_ISSUER: 'https://id.example',
      JWT_AUDIENCE: 'commerce',
      JWKS_URL: 'https://id.example/.well-known/jwks.json',
      LOG_LEVEL: 'debug',
      DEMO: 'false',
    });
    expect(config).toMatchObject({
      dbPreparedStatements: false,
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgresql://app:pw@db.internal:5432/patchbay',
      dbPoolSize: 25,
      dataDir: '/var/lib/patchbay',
      jwtSecret: SECRET,
      jwtIssuer: 'https://id.example',
      jwtAudience: 'commerce',
      jwksUrl: 'https://id.example/.well-known/jwks.json',
      logLevel: 'debug',
      demo: false,
      production: false,
    });
  });

  it.each([
    { label: '0 (any free port)', PORT: '0', port: 0 },
    { label: 'the highest port', PORT: '65535', port: 65535 },
    { label: 'surrounding spaces', PORT: ' 8080 ', port: 8080 },
  ])('accepts PORT $label', ({ PORT, port }) => {
    expect(loadConfig({ PORT }).port).toBe(port);
  });

  it.each([
    { DEMO: '1', demo: true },
    { DEMO: 'true', demo: true },
    { DEMO: '0', demo: false },
    { DEMO: 'false', demo: false },
  ])('reads DEMO=$DEMO as $demo', ({ DEMO, demo }) => {
    expect(loadConfig({ DEMO }).demo).toBe(demo);
  });

  it('reads NODE_ENV=production', () => {
    const secrets = { JWT_SECRET: SECRET, LICENSE_KEY_ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(loadConfig({ NODE_ENV: 'production', ...secrets }).production).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).production).toBe(false);
  });

  it('accepts token verification in production on PostgreSQL from either a secret or a JWKS URL', () => {
    // Other production requirements may apply; this is about the token source only.
    const base = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/patchbay' };
    for (const env of [{ ...base, JWT_SECRET: SECRET }, { ...base, JWKS_URL: 'https://id.example/jwks.json' }]) {
      expect(problemsOf(env).filter((p) => /JWT_SECRET|JWKS_URL/.test(p))).toEqual([]);
    }
  });

  it.each([
    { label: 'the log by default', env: {}, transport: 'log' },
    { label: 'SMTP when SMTP_URL is set', env: { SMTP_URL: 'smtps://u:p@smtp.example:465' }, transport: 'smtp' },
    { label: 'a file when asked', env: { MAIL_TRANSPORT: 'file' }, transport: 'file' },
  ])('sends e-mail to $label', ({ env, transport }) => {
    expect(loadConfig(env)).toMatchObject({ mailTransport: transport, mailFrom: 'Patchbay <no-reply@patchbay.invalid>' });
  });

  it.each([
    { label: 'the log transport in development', env: { NODE_ENV: 'development' }, outbox: true },
    { label: 'the file transport', env: { MAIL_TRANSPORT: 'file' }, outbox: true },
    { label: 'SMTP', env: { SMTP_URL: 'smtps://u:p@smtp.example:465' }, outbox: false },
    { label: 'production', env: { NODE_ENV: 'production', JWT_SECRET: SECRET, LICENSE_KEY_ENCRYPTION_KEY: 'a'.repeat(64) }, outbox: false },
  ])('keeps the console outbox with $label: $outbox', ({ env, outbox }) => {
    expect(loadConfig(env).mailOutbox).toBe(outbox);
  });

  it('reads DEVELOPER_SIGN_IN_LINKS_PER_HOUR (default 5) and refuses 0', () => {
    expect(loadConfig({}).accounts.signInLinksPerHour).toBe(5);
    expect(loadConfig({ DEVELOPER_SIGN_IN_LINKS_PER_HOUR: '12' }).accounts.signInLinksPerHour).toBe(12);
    expect(problemsOf({ DEVELOPER_SIGN_IN_LINKS_PER_HOUR: '0' })).toEqual(['DEVELOPER_SIGN_IN_LINKS_PER_HOUR must be between 1 and 1000 (got 0)']);
  });

  it('does not read process.env when given an environment', () => {
    expect(loadConfig({ PORT: '4321' }).port).toBe(4321);
  });
});

describe('loadConfig rejects bad values with a clear message', () => {
  it.each([
    { label: 'PORT that is not a number', env: { PORT: 'abc' }, message: 'PORT must be a whole number between 0 and 65535 (got "abc")' },
    { label: 'negative PORT', env: { PORT: '-1' }, message: 'PORT must be a whole number between 0 and 65535 (got "-1")' },
    { label: 'fractional PORT', env: { PORT: '80.5' }, message: 'PORT must be a whole number between 0 and 65535 (got "80.5")' },
    { label: 'PORT above 65535', env: { PORT: '70000' }, message: 'PORT must be between 0 and 65535 (got 70000)' },
    { label: 'DB_POOL_SIZE of 0', env: { DB_POOL_SIZE: '0' }, message: 'DB_POOL_SIZE must be between 1 and 500 (got 0)' },
    { label: 'DB_PREPARED_STATEMENTS of yes', env: { DB_PREPARED_STATEMENTS: 'yes' }, message: 'DB_PREPARED_STATEMENTS must be 0, 1, true or false (got "yes")' },
    {
      label: 'DATABASE_URL with another protocol',
      env: { DATABASE_URL: 'mysql://root@localhost/patchbay' },
      message: 'DATABASE_URL must use postgres: or postgresql: (got "mysql:")',
    },
    { label: 'DATABASE_URL of host:port without a scheme', env: { DATABASE_URL: 'localhost:5432/patchbay' }, message: 'DATABASE_URL must use postgres: or postgresql: (got "localhost:")' },
    { label: 'DATABASE_URL that is not a URL', env: { DATABASE_URL: 'not a url' }, message: 'DATABASE_URL is not a valid URL' },
    { label: 'JWKS_URL over ftp', env: { JWKS_URL: 'ftp://id.example/jwks' }, message: 'JWKS_URL must use https: or http: (got "ftp:")' },
    { label: 'JWT_SECRET shorter than 32 bytes', env: { JWT_SECRET: 'short' }, message: 'JWT_SECRET must be at least 32 bytes long' },
    { label: 'JWT_SECRET of 31 bytes', env: { JWT_SECRET: 'x'.repeat(31) }, message: 'JWT_SECRET must be at least 32 bytes long' },
    {
      label: 'unknown LOG_LEVEL',
      env: { LOG_LEVEL: 'verbose' },
      message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    },
    { label: 'upper-case LOG_LEVEL', env: { LOG_LEVEL: 'INFO' }, message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "INFO")' },
    { label: 'DEMO=yes', env: { DEMO: 'yes' }, message: 'DEMO must be 0, 1, true or false (got "yes")' },
    { label: 'unknown MAIL_TRANSPORT', env: { MAIL_TRANSPORT: 'pigeon' }, message: 'MAIL_TRANSPORT must be log, file or smtp (got "pigeon")' },
    { label: 'MAIL_TRANSPORT=smtp without SMTP_URL', env: { MAIL_TRANSPORT: 'smtp' }, message: 'MAIL_TRANSPORT=smtp needs SMTP_URL' },
    { label: 'SMTP_URL over http', env: { SMTP_URL: 'http://mail.example' }, message: 'SMTP_URL must use smtp: or smtps: (got "http:")' },
    {
      label: 'production on PostgreSQL without JWT_SECRET or JWKS_URL',
      env: { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/patchbay' },
      message: 'JWT_SECRET or JWKS_URL is required when NODE_ENV=production',
      alone: false, // production on PostgreSQL may have further requirements
    },
  ])('$label', ({ env, message, alone = true }) => {
    const problems = problemsOf(env);
    expect(problems).toContain(message);
    if (alone) expect(problems).toEqual([message]);
  });

  it('counts JWT_SECRET length in bytes, not characters', () => {
    // 16 two-byte characters: 16 characters, 32 bytes.
    expect(problemsOf({ JWT_SECRET: 'é'.repeat(16) })).toEqual([]);
    expect(problemsOf({ JWT_SECRET: 'é'.repeat(15) })).toEqual(['JWT_SECRET must be at least 32 bytes long']);
  });

  it('does not echo secrets in its messages', () => {
    let message = '';
    try {
      loadConfig({ JWT_SECRET: 'hunter2-password', DATABASE_URL: 'mysql://root:hunter2-password@db/patchbay' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/JWT_SECRET/);
    expect(message).not.toContain('hunter2');
  });

  it('reports several problems together, in one error', () => {
    let caught: unknown;
    try {
      loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://db/x', JWT_SECRET: 'short', LOG_LEVEL: 'loud', DEMO: 'maybe' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.problems).toHaveLength(5);
    expect(error.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT /),
        expect.stringMatching(/^DATABASE_URL /),
        expect.stringMatching(/^JWT_SECRET /),
        expect.stringMatching(/^LOG_LEVEL /),
        expect.stringMatching(/^DEMO /),
      ]),
    );
    // The message an operator sees lists every problem, one per line.
    expect(error.message.split('\n')).toEqual(['Invalid configuration:', ...error.problems.map((p) => `  - ${p}`)]);
    expect(error.name).toBe('ConfigError');
  });
});
