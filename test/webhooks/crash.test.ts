import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_JWT, unique } from '../helpers/app.js';
import { childEnv, CLI_ENTRY, migratedDataDir, spawnTracked, startServer } from '../helpers/process.js';
import { Receiver } from './receiver.js';

// kill -9 between commit and delivery: the server process dies while its deliveries are in
// flight (the receiver holds the requests open); the events were committed with the change, so a
// new instance on the same database delivers them. Nothing is lost.

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

describe('a server killed with SIGKILL between commit and delivery', () => {
  it('loses no event: the next instance delivers what the dead one had committed', { timeout: 300_000 }, async () => {
    const dir = await migratedDataDir('patchbay-webhooks-crash-');
    const env: Record<string, string> = {
      JWT_SECRET: TEST_JWT.secret!,
      DEMO: '0',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_TIMEOUT_MS: '2000',
      JOBS_POLL_INTERVAL_MS: '500',
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    };
    const tag = unique();
    const fixture = path.join(dir, '..', `${path.basename(dir)}-fixture.json`);
    await fs.writeFile(
      fixture,
      JSON.stringify({
        workspaces: [{ key: 'ws', name: `Webhook crash ${tag}` }],
        accounts: [{ key: 'owner', email: `hook-crash-${tag}@dev.test` }],
        memberships: [{ account: 'owner', workspace: 'ws', owner: true }],
        tokens: [{ key: 'owner', account: 'owner', workspace: 'ws' }],
      }),
    );
    const loaded = await spawnTracked([CLI_ENTRY, 'fixtures', 'load', fixture], childEnv(dir, env)).outcome;
    await fs.rm(fixture, { force: true });
    expect(loaded.code, loaded.stderr).toBe(0);
    const { tokens } = JSON.parse(loaded.stdout) as { tokens: { owner: string } };
    const headers = { authorization: `Bearer ${tokens.owner}`, 'content-type': 'application/json' };

    // The first instance's deliveries never get an answer.
    receiver.behaviour = () => 'hang';
    let server = await startServer(dir, env);
    const hookPath = `/crash-${tag}`;
    const endpoint = await fetch(`${server.address}/api/developer/webhooks/endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url(hookPath), events: ['customer.created'] }) });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [((await endpoint.json()) as { secret: string }).secret];
    const emails = [`one-${tag}@crash.test`, `two-${tag}@crash.test`];
    const imported = await fetch(`${server.address}/api/developer/customers/import`, { method: 'POST', headers, body: JSON.stringify({ customers: emails.map((email) => ({ email })) }) });
    expect(imported.status).toBe(201);
    // Committed, and on their way: kill the process while it waits for the receiver.
    await receiver.until((r) => r.filter((x) => x.path === hookPath).length >= 2, 30_000);
    server.child.kill('SIGKILL');
    expect((await server.outcome).signal).toBe('SIGKILL');
    const sentBefore = receiver.received.filter((r) => r.path === hookPath).map((r) => r.event!.id);

    receiver.behaviour = () => 200;
    server = await startServer(dir, env);
    // The dead worker's claims run out (timeout + 5 s), then the new instance delivers the same events.
    const delivered = () => new Set(receiver.received.filter((r) => r.path === hookPath && r.verifiedWith.length === 1).map((r) => `${r.event!.id} ${String(r.event!.data.email)}`));
    await receiver.until(() => delivered().size === 2 && receiver.received.filter((r) => r.path === hookPath).length >= 4, 60_000);
    expect([...delivered()].map((d) => d.split(' ')[1]).sort()).toEqual([...emails].sort());
    // The same event ids as the attempts the dead process made: a receiver deduplicates on them.
    expect([...delivered()].map((d) => d.split(' ')[0]).sort()).toEqual([...sentBefore].sort());
    server.child.kill('SIGTERM');
    await server.outcome;
  });
});
