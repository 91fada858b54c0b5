import fs from 'node:fs/promises';
import path from 'node:path';
import { jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { childEnv as baseEnv, CLI_ENTRY, describeOwnEmbeddedDatabase, SERVER_ENTRY, spawnTracked, startServer as start, stop, tempDataDir as tempDir } from '../helpers/process.js';

// The built server (dist/server.js, what `npm start` runs) as a real child process. The embedded cases always use a
// temporary DATA_DIR, whatever DATABASE_URL the test run has.

const childEnv = (dataDir: string, extra: Record<string, string> = {}) => baseEnv(dataDir, { PORT: '0', LOG_LEVEL: 'warn', ...extra });
const tempDataDir = () => tempDir('patchbay-server-');
const startServer = async (dataDir: string, extra: Record<string, string> = {}) => {
  const server = await start(dataDir, extra);
  return { ...server, exited: server.outcome };
};

const tokenLine = (stdout: string) => /^Demo owner token \(12 h\): (\S+)$/m.exec(stdout)?.[1];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function customerTotal(address: string, token: string): Promise<number> {
  const response = await fetch(`${address}/api/developer/customers?limit=1`, { headers: bearer(token) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { total: number }).total;
}

describeOwnEmbeddedDatabase('the server on a fresh embedded database with DEMO=1', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  let token: string;

  beforeAll(async () => {
    dir = await tempDataDir();
    server = await startServer(dir, { DEMO: '1' });
    token = tokenLine(server.stdout)!;
  });

  it('prints its URL, the API reference, the data directory and a demo owner token', async () => {
    const { stdout, address } = server;
    expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(address).port)).toBeGreaterThan(0); // the real port, not the PORT=0 asked for
    expect(stdout).toContain(`Patchbay API listening on ${address}\n`);
    expect(stdout).toContain(`API reference: ${address}/docs  (OpenAPI: ${address}/openapi.json)\n`);
    expect(stdout).toContain(`Embedded database: ${dir}\n`);
    expect(stdout).toContain(`Paste to use it:  export TOKEN=${tokenLine(stdout)}\n`);
    expect(stdout).toContain(`Then try:  curl -H "Authorization: Bearer $TOKEN" ${address}/api/developer/customers\n`);

    expect(token).toBeDefined();
    const secret = new TextEncoder().encode((await fs.readFile(path.join(dir, 'jwt-secret'), 'utf8')).trim());
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer: 'patchbay', audience: 'patchbay-api' });
    expect(payload.exp! - payload.iat!).toBe(12 * 3600);
  });

  it('answers /healthz and /readyz', async () => {
    const health = await fetch(`${server.address}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.address}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('serves the API reference and the OpenAPI document it prints', async () => {
    const docs = await fetch(`${server.address}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    const openapi = await fetch(`${server.address}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(((await openapi.json()) as { paths: Record<string, unknown> }).paths).toHaveProperty(['/api/developer/customers']);
  });

  it('lets the printed token list the 300 demo customers', async () => {
    expect(await customerTotal(server.address, token)).toBe(300);
  });

  it('prints a one-time console sign-in link for the demo owner, and the development outbox is there', async () => {
    const link = /^Console \(one-time sign-in link, 12 h\): (\S+)$/m.exec(server.stdout)?.[1];
    expect(link).toMatch(/\/console\/sign-in#token=dsl_[A-Za-z0-9_-]{43}$/);
    const signIn = (token: string) =>
      fetch(`${server.address}/api/developer/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    const token = new URL(link!).hash.slice('#token='.length);
    const opened = await signIn(token);
    expect(opened.status).toBe(201);
    const session = ((await opened.json()) as { token: string }).token;
    expect((await signIn(token)).status).toBe(401);
    const outbox = await fetch(`${server.address}/api/developer/outbox`, { headers: { cookie: `patchbay_developer_session=${session}` } });
    expect(outbox.status).toBe(200);
  });

  it('refuses the customer list without a token', async () => {
    const response = await fetch(`${server.address}/api/developer/customers`);
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('does not seed again when started on the same database', { timeout: 180_000 }, async () => {
    await stop(server.child);
    expect((await server.exited).code).toBe(0); // SIGTERM is a clean shutdown
    const firstToken = token;

    server = await startServer(dir, { DEMO: '1' });
    token = tokenLine(server.stdout)!;
    expect(token).toBeDefined(); // the demo owner still exists, so a fresh token is printed
    expect(await customerTotal(server.address, token)).toBe(300);
    // The secret kept in DATA_DIR survives restarts, so earlier tokens stay valid.
    expect(await customerTotal(server.address, firstToken)).toBe(300);
  });
});

describeOwnEmbeddedDatabase('the server on a fresh embedded database with DEMO=0', () => {
  it('seeds nothing and prints no token', { timeout: 180_000 }, async () => {
    const dir = await tempDataDir();
    const server = await startServer(dir, { DEMO: '0' });
    expect(server.stdout).toContain(`Patchbay API listening on ${server.address}\n`);
    expect(server.stdout).toContain(`Embedded database: ${dir}\n`);
    expect(server.stdout).not.toContain('Demo owner token');
    expect(server.stdout).not.toContain('Try: curl');
    expect((await fetch(`${server.address}/readyz`)).status).toBe(200);
    await stop(server.child);
    expect((await server.exited).code).toBe(0);

    // No demo owner was created.
    const cli = spawnTracked([CLI_ENTRY, 'token', 'create', '--account', 'owner@demo.patchbay.test'], childEnv(dir));
    const outcome = await cli.outcome;
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr.trim()).toBe('No account owner@demo.patchbay.test');
  });
});

describeOwnEmbeddedDatabase('the server with a bad configuration', () => {
  it('exits non-zero with the problems on stderr, before touching DATA_DIR', async () => {
    const dir = path.join(await tempDataDir(), 'never-created');
    const { outcome } = spawnTracked([SERVER_ENTRY], childEnv(dir, { PORT: 'abc', LOG_LEVEL: 'chatty' }));
    const result = await outcome;
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toContain('PORT must be a whole number between 0 and 65535 (got "abc")');
    expect(result.stderr).toContain('LOG_LEVEL must be one of');
    expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    await expect(fs.stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe.runIf(Boolean(process.env.DATABASE_URL))('the server on PostgreSQL', () => {
  it('neither seeds demo data nor prints embedded-database lines', { timeout: 180_000 }, async () => {
    const dir = await tempDataDir();
    const server = await startServer(dir, { DATABASE_URL: process.env.DATABASE_URL!, DEMO: '1' });
    expect(server.stdout).toContain(`Patchbay API listening on ${server.address}\n`);
    expect(server.stdout).not.toContain('Embedded database');
    expect(server.stdout).not.toContain('Demo owner token');
    expect((await fetch(`${server.address}/readyz`)).status).toBe(200);
    await stop(server.child);
    expect((await server.exited).code).toBe(0);
  });
});
