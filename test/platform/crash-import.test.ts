import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_JWT, unique } from '../helpers/app.js';
import { childEnv, CLI_ENTRY, migratedDataDir, spawnTracked, startServer } from '../helpers/process.js';

// kill -9 during a running import: the import is one transaction, so what survives is every
// row or none; after a restart the job runs again (its lease ran out) and completes.

const ROWS = 60_000;

describe('an import killed with SIGKILL while it runs', () => {
  it('leaves every row or none, and completes after a restart', { timeout: 300_000 }, async () => {
    const dir = await migratedDataDir('patchbay-crash-');
    const env: Record<string, string> = {
      JWT_SECRET: TEST_JWT.secret!,
      DEMO: '0',
      IMPORT_ASYNC_THRESHOLD: '1000',
      IMPORT_JOB_LEASE_SECONDS: '5',
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    };
    const tag = unique();
    const fixture = path.join(dir, '..', `${path.basename(dir)}-fixture.json`);
    await fs.writeFile(
      fixture,
      JSON.stringify({
        workspaces: [{ key: 'ws', name: `Crash ${tag}` }],
        accounts: [{ key: 'owner', email: `crash-${tag}@dev.test` }],
        memberships: [{ account: 'owner', workspace: 'ws', owner: true }],
        tokens: [{ key: 'owner', account: 'owner', workspace: 'ws' }],
      }),
    );
    const loaded = await spawnTracked([CLI_ENTRY, 'fixtures', 'load', fixture], childEnv(dir, env)).outcome;
    await fs.rm(fixture, { force: true });
    expect(loaded.code, loaded.stderr).toBe(0);
    const { tokens, ids } = JSON.parse(loaded.stdout) as { tokens: { owner: string }; ids: { workspaces: { ws: number } } };
    const auth = { authorization: `Bearer ${tokens.owner}` };

    let server = await startServer(dir, env);
    const customers = Array.from({ length: ROWS }, (_, i) => ({ email: `row-${i}-${tag}@crash.test`, firstName: `R${i}` }));
    const queued = await fetch(`${server.address}/api/developer/customers/import`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ customers }),
    });
    expect(queued.status).toBe(202);
    const location = queued.headers.get('location')!;

    if (process.env.DATABASE_URL) {
      // Kill once the job has written its first batches (read from the database directly).
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      const importId = Number(location.split('/').pop());
      for (let i = 0; i < 600; i += 1) {
        const { rows } = await client.query<{ state: string; processed_rows: number }>('select state, processed_rows from imports where id = $1', [importId]);
        if (rows[0]?.state === 'running' && rows[0].processed_rows > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      server.child.kill('SIGKILL');
      await server.outcome;
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from developer_customers where workspace_id = $1', [ids.workspaces.ws]);
      await client.end();
      expect([0, ROWS]).toContain(rows[0]!.n);
    } else {
      // The embedded database has one connection, held by the import: kill while it runs.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      server.child.kill('SIGKILL');
      await server.outcome;
    }

    server = await startServer(dir, env);
    const total = async () => ((await (await fetch(`${server.address}/api/developer/customers?limit=1`, { headers: auth })).json()) as { total: number }).total;
    expect([0, ROWS]).toContain(await total());
    let state = '';
    for (let i = 0; i < 240 && state !== 'succeeded'; i += 1) {
      state = ((await (await fetch(`${server.address}${location}`, { headers: auth })).json()) as { state: string }).state;
      if (state !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(state).toBe('succeeded');
    expect(await total()).toBe(ROWS);
    server.child.kill('SIGTERM');
    await server.outcome;
  });
});
