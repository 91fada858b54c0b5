import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp } from '../helpers/app.js';
import { childEnv, describeOwnEmbeddedDatabase, migratedDataDir, type Outcome, ROOT, tempDataDir } from '../helpers/process.js';

// `patchbay token create --customer` and `patchbay workspace portal`, run as real child processes
// on an embedded database in a temporary DATA_DIR (the build, as operators run it); the PostgreSQL suite skips it.
vi.setConfig({ testTimeout: 240_000 });

function cli(dataDir: string, ...args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/patchbay.js', ...args], { cwd: ROOT, env: childEnv(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describeOwnEmbeddedDatabase('the customer portal from the CLI', () => {
  it('sets the slug and the switch through fixtures and `workspace portal`, and opens a buyer session with `token create --customer`', async () => {
    const dir = await migratedDataDir('patchbay-portal-cli-');
    const file = path.join(await tempDataDir('patchbay-portal-fixture-'), 'store.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        workspaces: [{ key: 'ws', name: 'Portal Store', slug: 'portal-store' }],
        customers: [{ key: 'c', workspace: 'ws', email: 'buyer@store.test', firstName: 'Bo' }],
      }),
    );
    const loaded = await cli(dir, 'fixtures', 'load', file);
    expect(loaded.code, loaded.stderr).toBe(0);
    const workspaceId = JSON.parse(loaded.stdout).ids.workspaces.ws as number;

    const token = await cli(dir, 'token', 'create', '--customer', 'Buyer@Store.test', '--workspace', 'portal-store');
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toMatch(/^\{"token":"pcs_[A-Za-z0-9_-]{43}"\}\n$/);
    const byId = await cli(dir, 'token', 'create', '--customer', 'buyer@store.test', '--workspace', String(workspaceId));
    expect(byId.code).toBe(0);

    const unknown = await cli(dir, 'token', 'create', '--customer', 'nobody@store.test', '--workspace', 'portal-store');
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('No active customer nobody@store.test');
    expect((await cli(dir, 'token', 'create', '--customer', 'buyer@store.test')).code).toBe(2);
    expect((await cli(dir, 'token', 'create', '--customer', 'buyer@store.test', '--workspace', 'x', '--ttl', '5')).code).toBe(2);

    const shown = await cli(dir, 'workspace', 'portal', '--workspace', String(workspaceId));
    expect(JSON.parse(shown.stdout)).toEqual({ workspaceId, enabled: true, slug: 'portal-store', url: 'http://127.0.0.1:3000/portal/portal-store' });
    expect((await cli(dir, 'workspace', 'portal', '--workspace', String(workspaceId), '--slug', '1234')).code).toBe(2);
    expect((await cli(dir, 'workspace', 'portal', '--workspace', String(workspaceId), '--enable', '--disable')).code).toBe(2);
    const off = await cli(dir, 'workspace', 'portal', '--workspace', String(workspaceId), '--disable', '--clear-slug');
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, slug: null, url: `http://127.0.0.1:3000/portal/${workspaceId}` });

    // The session the CLI opened is a real one: refused (404) while the portal is off.
    const app = await buildTestApp({ dataDir: dir, databaseUrl: '' });
    try {
      const session = JSON.parse(token.stdout).token as string;
      expect((await app.app.inject({ method: 'GET', url: '/api/customer-portal/session', headers: bearer(session) })).statusCode).toBe(404);
    } finally {
      await app.app.close();
      await app.database.close();
    }
    const on = await cli(dir, 'workspace', 'portal', '--workspace', String(workspaceId), '--enable');
    expect(JSON.parse(on.stdout).enabled).toBe(true);
    const again = await buildTestApp({ dataDir: dir, databaseUrl: '' });
    try {
      const res = await again.app.inject({ method: 'GET', url: '/api/customer-portal/session', headers: bearer(JSON.parse(token.stdout).token) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ customer: { email: 'buyer@store.test', firstName: 'Bo' }, workspace: { id: workspaceId, name: 'Portal Store' } });
    } finally {
      await again.app.close();
      await again.database.close();
    }
    // Six CLI processes one after another, each starting the embedded database: 60 s was not enough on a loaded machine.
  }, 180_000);
});
