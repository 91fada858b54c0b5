import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { describeStartupFailure } from '../../src/operator/startup-errors.js';
import { childEnv, describeOwnEmbeddedDatabase, itOwnEmbeddedDatabase, migratedDataDir, SERVER_ENTRY, spawnTracked, startServer, tempDataDir } from '../helpers/process.js';

// Start-up and shutdown of the real process, as an operator meets them.

const waitForClose = (address: string, timeoutMs: number) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const url = new URL(address);
    const probe = () => {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.once('connect', () => {
        socket.destroy();
        if (Date.now() - started > timeoutMs) reject(new Error('still listening'));
        else setTimeout(probe, 100);
      });
      socket.once('error', () => resolve());
    };
    probe();
  });

describeOwnEmbeddedDatabase('graceful shutdown', () => {
  it('stops the server when SIGTERM is sent to `npm start`, and npm exits', { timeout: 180_000 }, async () => {
    const dir = await migratedDataDir();
    const server = await startServer(dir, { DEMO: '0' }, { command: 'npm', args: ['start', '--silent'] });
    expect((await fetch(`${server.address}/healthz`)).status).toBe(200);
    server.child.kill('SIGTERM');
    const outcome = await server.outcome;
    expect(outcome.code === 0 || outcome.signal === 'SIGTERM').toBe(true);
    await waitForClose(server.address, 5_000);
  });

  it('finishes a request in flight before exiting when SIGTERM reaches `npm start`', { timeout: 180_000 }, async () => {
    const dir = await migratedDataDir();
    const server = await startServer(dir, { DEMO: '1' }, { command: 'npm', args: ['start', '--silent'] });
    const token = /export TOKEN=(\S+)/.exec(server.stdout)![1]!;
    const url = new URL(server.address);
    // An import whose body arrives slowly: still in flight when SIGTERM arrives.
    const body = JSON.stringify({ customers: [{ email: 'late@x.test' }] });
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (chunk) => (response += chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /api/developer/customers/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write(body.slice(5));
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    const outcome = await server.outcome;
    expect(outcome.code === 0 || outcome.signal === 'SIGTERM').toBe(true);
    await waitForClose(server.address, 5_000);
  });
});

describe('start-up failures', () => {
  itOwnEmbeddedDatabase('names a port that is in use in one line, without a stack trace, and exits non-zero', { timeout: 120_000 }, async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const { outcome } = spawnTracked([SERVER_ENTRY], childEnv(await migratedDataDir(), { PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn' }));
      const result = await outcome;
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`Cannot listen on 127.0.0.1:${port}: the port is in use by another process (stop it, or set PORT to another port)`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      blocker.close();
    }
  });

  itOwnEmbeddedDatabase('names an unreachable database in one line and exits non-zero', { timeout: 120_000 }, async () => {
    const { outcome } = spawnTracked(
      [SERVER_ENTRY],
      childEnv(await tempDataDir(), { DATABASE_URL: 'postgres://patchbay:secret@127.0.0.1:1/patchbay', LOG_LEVEL: 'warn' }),
    );
    const result = await outcome;
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Cannot connect to PostgreSQL at 127\.0\.0\.1:1\/patchbay as user "patchbay": .*ECONNREFUSED/);
    expect(result.stderr).not.toContain('secret');
  });

  it.runIf(Boolean(process.env.DATABASE_URL))('names missing schema rights in one line (PostgreSQL)', { timeout: 120_000 }, async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const role = `patchbay_norights_${process.pid}`;
    const database = `patchbay_norights_${process.pid}_${Date.now()}`;
    try {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`CREATE DATABASE ${database}`);
      // PostgreSQL 15+ no longer lets every role create in schema public; make sure of it on older servers too.
      const inDb = new pg.Client({ connectionString: process.env.DATABASE_URL!.replace(/\/[^/]*$/, `/${database}`) });
      await inDb.connect();
      await inDb.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
      await inDb.end();
      const url = new URL(process.env.DATABASE_URL!);
      url.username = role;
      url.password = '';
      url.pathname = `/${database}`;
      const { outcome } = spawnTracked([SERVER_ENTRY], childEnv(await tempDataDir(), { DATABASE_URL: url.toString(), LOG_LEVEL: 'warn' }));
      const result = await outcome;
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^The database user lacks the rights the migrations need/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it.each([
    [{ code: '58P01', message: 'could not open extension control file "/usr/share/postgresql/15/extension/pg_trgm.control": No such file or directory' }, /^The PostgreSQL extension pg_trgm is not available/],
    [{ code: '28P01', message: 'password authentication failed for user "x"' }, /^Cannot connect to PostgreSQL at db:5432\/app as user "x": authentication failed/],
    [{ code: '3D000', message: 'database "app" does not exist' }, /the database does not exist/],
    [new Error('something else\n    at frame'), /^Failed to start: something else$/],
  ])('describes %o', (error, expected) => {
    expect(describeStartupFailure(error, { databaseUrl: 'postgres://x:pw@db:5432/app' })).toMatch(expected);
  });
});
