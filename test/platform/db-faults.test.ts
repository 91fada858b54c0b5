import net from 'node:net';
import pg from 'pg';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/database.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, useTestApp } from '../helpers/app.js';

// Connection faults on a real PostgreSQL server: a restart, a failover or a proxy's idle
// timeout ends the service's connections. The process must stay up and serve again.

// Test files run side by side on one database: each fault test tags its connections with an
// application_name of its own and terminates only those, never another file's.
async function terminateBackends(databaseUrl: string, applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and application_name = $1`,
      [applicationName],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await admin.end();
  }
}

function taggedUrl(applicationName: string): string {
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!onPostgres)('database connection faults (PostgreSQL)', () => {
  const tag = `patchbay-faults-${process.pid}`;
  const ctx = useTestApp(onPostgres ? { databaseUrl: taggedUrl(tag) } : {});

  it('survives connections terminated while idle and serves again at once', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{}, {}] });
    const list = () => ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
    expect((await list()).statusCode).toBe(200);

    // The pool holds idle connections now; end them all from the server side.
    expect(await terminateBackends(process.env.DATABASE_URL!, tag)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const recovered = await eventually(async () => (await list()).statusCode === 200);
    expect(recovered).toBeLessThan(5_000);
    expect((await ctx().app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('survives connections terminated under load: failures are 503, never 500, and service resumes', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{}, {}, {}] });
    const statuses: number[] = [];
    const failures: string[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const response = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers?search=c', headers: bearer(ws.owner) });
        statuses.push(response.statusCode);
        if (response.statusCode !== 200) failures.push(`${response.headers['content-type']} ${response.json().code}`);
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let round = 0; round < 3; round += 1) {
      await terminateBackends(process.env.DATABASE_URL!, tag);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop = true;
    await Promise.all(workers);

    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(new Set(failures).size <= 1 && failures.every((f) => f === 'application/problem+json; charset=utf-8 SERVICE_UNAVAILABLE')).toBe(true);
    const after = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
    expect(after.statusCode).toBe(200);
  });

  it('answers 503 while the database is unreachable and serves again without a restart', async () => {
    // A TCP proxy in front of the test database that the test can cut and restore.
    const target = new URL(process.env.DATABASE_URL!);
    const sockets = new Set<net.Socket>();
    let cut = false;
    const proxy = net.createServer((client) => {
      if (cut) return void client.destroy();
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(target);
    viaProxy.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const app = await buildTestApp({ databaseUrl: viaProxy.toString() });
    try {
      const ws = await seedWorkspace(app, { customers: [{}] });
      const list = () => app.app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
      const ready = () => app.app.inject({ method: 'GET', url: '/readyz' });
      expect((await list()).statusCode).toBe(200);

      cut = true;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const down = await ready();
      expect(down.statusCode).toBe(503);
      expect(down.json().code).toBe('SERVICE_UNAVAILABLE');
      const refused = await list();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();

      cut = false;
      const recovered = await eventually(async () => (await ready()).statusCode === 200);
      expect(recovered).toBeLessThan(5_000);
      expect((await list()).statusCode).toBe(200);
    } finally {
      await app.app.close();
      await app.database.close();
      proxy.close();
    }
  });
});

describe.skipIf(!onPostgres)('the log line of a lost connection (PostgreSQL)', () => {
  it('names the error without the client’s internals (backend pid, cancel key)', async () => {
    const logged: Record<string, unknown>[] = [];
    const tag = `patchbay-log-${process.pid}`;
    const database = await openDatabase({
      databaseUrl: taggedUrl(tag),
      dataDir: null,
      poolSize: 2,
      log: { warn: (obj) => logged.push(obj) },
    });
    try {
      await sql`select 1`.execute(database.db);
      expect(await terminateBackends(process.env.DATABASE_URL!, tag)).toBeGreaterThan(0);
      await eventually(async () => logged.length > 0);
      const text = JSON.stringify(logged);
      expect(text).toMatch(/terminat/i);
      expect(text).not.toMatch(/processID|secretKey|_connection|"client"/);
      expect(Object.keys(logged[0]!.db as object).sort()).toEqual(['code', 'message']);
    } finally {
      await database.close();
    }
  });
});
