import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as provision from '../../src/operator/provision.js';
import { loadFixtures } from '../../src/operator/fixtures.js';
import { bearer, seedWorkspace, TEST_JWT, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';
import { childEnv, CLI_ENTRY, describeOwnEmbeddedDatabase, itOwnEmbeddedDatabase, migratedDataDir, type Outcome, ROOT, spawnTracked, startServer, stop, tempDataDir } from '../helpers/process.js';

// Every test here starts `patchbay` processes: the build (bin/patchbay.js runs dist/, which vitest's global set-up
// builds), each opening the embedded database. About a second each on a quiet 2-core machine, several times that on a
// loaded CI machine, so the default 60 s is too tight for the tests that start several.
vi.setConfig({ testTimeout: 240_000 });

// The provisioning commands of the `patchbay` CLI, run as real child processes on an embedded
// database in a temporary DATA_DIR (and, on a PostgreSQL test run, on a fresh PostgreSQL database). The embedded ones
// run the same way whichever database the suite uses, so the PostgreSQL suite skips them (describeOwnEmbeddedDatabase).

const SLOW = { timeout: 600_000 };

function cliIn(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const cli = (dataDir: string, ...args: string[]) => cliIn(childEnv(dataDir), ...args);

/** Runs the CLI, expects success with nothing on stderr, and returns its JSON output. */
async function json<T = Record<string, any>>(dataDir: string, ...args: string[]): Promise<T> {
  const outcome = await cli(dataDir, ...args);
  expect(outcome.stderr, `${args.join(' ')}: ${outcome.stderr}`).toBe('');
  expect(outcome.code).toBe(0);
  return JSON.parse(outcome.stdout) as T;
}

/** Expects a refusal: the given exit code, nothing on stdout, a one-line-ish message (no stack trace). */
async function refused(dataDir: string, code: number, args: string[]): Promise<string> {
  const outcome = await cli(dataDir, ...args);
  expect(outcome.code, `${args.join(' ')}: ${outcome.stderr}`).toBe(code);
  expect(outcome.stdout).toBe('');
  expect(outcome.stderr).not.toMatch(/\n\s+at /);
  return outcome.stderr.trim();
}

describeOwnEmbeddedDatabase('patchbay workspace, account, member, product, serial and license-key commands', () => {
  let dir: string;
  let ws: Record<string, any>;
  let other: Record<string, any>;
  let synth: Record<string, any>;

  // One data directory for this group (each CLI run opens it anew); every test below reads only what is made here.
  beforeAll(async () => {
    dir = await migratedDataDir('patchbay-provision-');
    ws = await json(dir, 'workspace', 'create', '--name', 'Acme Audio', '--billing-eligible');
    other = await json(dir, 'workspace', 'create', '--name', 'Other Label');
    synth = await json(dir, 'product', 'create', '--workspace', String(ws.id), '--name', 'Nebula Synth', '--max-activations', '2', '--price-cents', '14900');
    await json(dir, 'account', 'create', '--email', 'Owner@Acme.test', '--verified');
  }, 600_000);

  it('creates and lists workspaces, refusing a name in use unless --allow-duplicate', SLOW, async () => {
    expect(ws).toEqual({ id: expect.any(Number), name: 'Acme Audio', billingEligible: true, storefrontUrl: null, createdAt: expect.any(String) });
    expect(other).toMatchObject({ name: 'Other Label', billingEligible: false });

    const message = await refused(dir, 1, ['workspace', 'create', '--name', '  acme AUDIO ']);
    expect(message).toBe(`A workspace with this name already exists: "Acme Audio" (id ${ws.id}). Pass --allow-duplicate to create another one anyway`);
    const twin = await json(dir, 'workspace', 'create', '--name', 'Acme Audio', '--allow-duplicate');
    expect(twin).toMatchObject({ name: 'Acme Audio', billingEligible: false });
    expect(twin.id).not.toBe(ws.id);

    const list = await json(dir, 'workspace', 'list');
    expect(list.workspaces).toEqual(expect.arrayContaining([{ ...ws, members: expect.any(Number), products: expect.any(Number) }, { ...twin, members: 0, products: 0 }]));
    expect(list.workspaces.filter((w: { name: string }) => w.name === 'Acme Audio')).toHaveLength(2);
  });

  it('creates accounts (an existing address is returned unchanged) and products with their productAppId', SLOW, async () => {
    const account = await json(dir, 'account', 'create', '--email', 'Buyer@Acme.test', '--verified');
    expect(account).toEqual({ id: expect.any(Number), email: 'Buyer@Acme.test', emailVerified: true, created: true });
    expect(await json(dir, 'account', 'create', '--email', 'buyer@acme.test')).toEqual({ ...account, created: false });

    expect(synth).toMatchObject({ name: 'Nebula Synth', status: 'active', maxActivations: 2, priceCents: 14900, currency: 'usd', offlineGraceDays: 14 });
    expect(synth.productAppId).toMatch(/^app_[a-z0-9]+$/);
    expect(synth.productAppId).toBe(synth.appId);
    const reverb = await json(dir, 'product', 'create', '--workspace', String(other.id), '--name', 'Cathedral Reverb', '--status', 'draft', '--currency', 'EUR');
    expect(reverb).toMatchObject({ status: 'draft', currency: 'eur' });

    const list = await json(dir, 'product', 'list', '--workspace', String(other.id));
    expect(list.products.map((p: { name: string; productAppId: string }) => [p.name, p.productAppId])).toEqual([['Cathedral Reverb', reverb.productAppId]]);
  });

  it('adds, updates and removes members with permissions, product assignment and the owner flag', SLOW, async () => {
    const w = String(ws.id);
    await json(dir, 'account', 'create', '--email', 'support@acme.test');
    expect(await json(dir, 'member', 'add', '--workspace', w, '--account', 'owner@acme.test', '--owner')).toEqual({
      workspaceId: ws.id,
      accountId: expect.any(Number),
      email: 'Owner@Acme.test',
      owner: true,
      permissions: ['*'],
      products: 'all',
    });
    expect(await json(dir, 'member', 'add', '--workspace', w, '--account', 'support@acme.test', '--permissions', 'serials.view,serials.manage', '--products', String(synth.id))).toMatchObject({
      owner: false,
      permissions: ['serials.view', 'serials.manage'],
      products: [synth.id],
    });
    expect(await json(dir, 'member', 'update', '--workspace', w, '--account', 'support@acme.test', '--permissions', 'customers.view', '--products', 'all')).toMatchObject({
      permissions: ['customers.view'],
      products: 'all',
    });
    // A workspace keeps an owner (the other refusals are covered in-process below).
    expect(await refused(dir, 1, ['member', 'remove', '--workspace', w, '--account', 'owner@acme.test'])).toMatch(/is the only owner of workspace/);

    const accounts = await json(dir, 'account', 'list', '--workspace', w);
    expect(accounts.accounts.map((a: { email: string }) => a.email)).toEqual(['Owner@Acme.test', 'support@acme.test']);
    expect(accounts.accounts[1].memberships).toEqual([{ workspaceId: ws.id, owner: false, permissions: ['customers.view'], products: 'all' }]);

    const support = accounts.accounts[1].id;
    expect(await json(dir, 'member', 'remove', '--workspace', w, '--account', String(support))).toEqual({
      removed: true,
      workspaceId: ws.id,
      accountId: support,
      email: 'support@acme.test',
    });
  });

  it('generates serials through the API use case and rotates the license signing key', SLOW, async () => {
    const generated = await json(dir, 'serial', 'generate', '--workspace', String(ws.id), '--product', String(synth.id), '--quantity', '3', '--prefix', 'NEB');
    expect(generated).toMatchObject({ count: 3, product: { id: synth.id, name: 'Nebula Synth' } });
    expect(generated.serials.map((s: { serial: string; status: string; max_activations: number }) => [s.serial.slice(0, 4), s.status, s.max_activations])).toEqual(
      Array(3).fill(['NEB-', 'available', 2]),
    );
    // The product belongs to another workspace: the use case's own refusal, with its code.
    expect(await refused(dir, 1, ['serial', 'generate', '--workspace', String(other.id), '--product', String(synth.id)])).toBe('NOT_FOUND: Product not found');
    // A window that ends before it starts is a bad command line: exit 2.
    expect(
      await refused(dir, 2, ['serial', 'generate', '--workspace', String(ws.id), '--product', String(synth.id), '--active-from', '2030-01-02T00:00:00Z', '--active-to', '2030-01-01T00:00:00Z']),
    ).toMatch(/^INVALID_WINDOW: /);

    const first = await json(dir, 'license-key', 'rotate', '--workspace', String(ws.id));
    expect(first).toEqual({ workspaceId: ws.id, previousKid: expect.stringMatching(/^lk_/), kid: expect.stringMatching(/^lk_/), publishedKids: expect.any(Array) });
    expect(first.kid).not.toBe(first.previousKid);
    const second = await json(dir, 'license-key', 'rotate', '--workspace', String(ws.id));
    expect(second.previousKid).toBe(first.kid);
    // Retired keys stay published, so tokens signed before a rotation keep verifying.
    expect(second.publishedKids).toEqual(expect.arrayContaining([first.previousKid, first.kid, second.kid]));
  });
});

describeOwnEmbeddedDatabase('patchbay fixtures load and workspace names', () => {
  it('refuses to create a workspace whose name exists, unless --allow-duplicate', SLOW, async () => {
    const dir = await migratedDataDir('patchbay-provision-');
    const file = path.join(await tempDataDir('patchbay-fixture-'), 'studio.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        workspaces: [{ key: 'studio', name: 'Studio One' }],
        accounts: [{ key: 'owner', email: 'owner@studio.test', emailVerified: true }],
        memberships: [{ account: 'owner', workspace: 'studio', owner: true, permissions: ['*'] }],
      }),
    );
    const first = await json(dir, 'fixtures', 'load', file);
    const message = await refused(dir, 1, ['fixtures', 'load', file]);
    expect(message).toBe(`A workspace with this name already exists: "Studio One" (id ${first.ids.workspaces.studio}). Pass --allow-duplicate to create another one anyway`);
    // Nothing of the refused document was written: the account still has one membership, so a token needs no --workspace.
    expect(await json(dir, 'token', 'create', '--account', 'owner@studio.test')).toMatchObject({ workspaceId: first.ids.workspaces.studio });

    const second = await json(dir, 'fixtures', 'load', file, '--allow-duplicate');
    expect(second.ids.workspaces.studio).not.toBe(first.ids.workspaces.studio);
    expect((await json(dir, 'workspace', 'list')).workspaces.map((w: { name: string }) => w.name)).toEqual(['Studio One', 'Studio One']);
  });
});

describeOwnEmbeddedDatabase('patchbay usage and help', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await migratedDataDir('patchbay-provision-');
  });

  it.concurrent.each([
    { args: ['workspace', 'create'], message: '--name is required' },
    { args: ['workspace', 'create', '--name', 'X', '--bogus'], message: "Unknown option '--bogus'" },
    { args: ['workspace', 'list', 'extra'], message: "Unexpected argument 'extra'" },
    { args: ['account', 'create', '--email', 'not-an-address'], message: '--email must be an e-mail address, got "not-an-address"' },
    { args: ['member', 'add', '--workspace', 'abc', '--account', 'a@b.test'], message: '--workspace must be an id (a positive integer), got "abc"' },
    { args: ['member', 'add', '--workspace', '1', '--account', 'a@b.test', '--permissions', 'customers.view,customers.delete'], message: 'Unknown permission "customers.delete"' },
    { args: ['member', 'add', '--workspace', '1', '--account', 'a@b.test', '--products', 'synth'], message: '--products must be an id (a positive integer), got "synth"' },
    { args: ['member', 'update', '--workspace', '1', '--account', 'a@b.test'], message: 'Nothing to change' },
    { args: ['member', 'update', '--workspace', '1', '--account', 'a@b.test', '--owner', '--no-owner'], message: '--owner and --no-owner exclude each other' },
    { args: ['member', 'remove', '--workspace', '1'], message: '--account is required' },
    { args: ['product', 'create', '--workspace', '1', '--name', 'X', '--max-activations', 'many'], message: '--max-activations must be an integer, got "many"' },
    { args: ['product', 'create', '--workspace', '1', '--name', 'X', '--status', 'live'], message: '--status: ' },
    { args: ['serial', 'generate', '--workspace', '1', '--product', '1', '--quantity', '0'], message: '--quantity: Expected integer to be greater or equal to 1' },
    { args: ['serial', 'generate', '--workspace', '1'], message: '--product is required' },
    { args: ['license-key', 'rotate'], message: '--workspace is required' },
    { args: ['license-key', 'rotate', '--workspace', '2147483648'], message: '--workspace must be an id' },
    { args: ['workspace', 'delete'], message: 'Unknown command "workspace delete"' },
  ])('exits 2 for: patchbay $args', SLOW, async ({ args, message }) => {
    // These fail before any database is opened, so they may run side by side on one DATA_DIR.
    expect(await refused(dir, 2, args)).toContain(message);
  });

  const COMMANDS = [
    'migrate', 'workspace create', 'workspace list', 'account create', 'account list', 'member add', 'member update', 'member remove', 'product create',
    'product list', 'serial generate', 'license-key rotate', 'token create', 'fixtures load', 'demo seed',
  ];

  it('prints help for every command on stdout, and lists every command in the usage', SLOW, async () => {
    const outcomes = await Promise.all(COMMANDS.map((name) => cli(dir, ...name.split(' '), '--help')));
    outcomes.forEach((outcome, i) => {
      expect(outcome.code, COMMANDS[i]).toBe(0);
      expect(outcome.stderr).toBe('');
      expect(outcome.stdout.startsWith(`Usage: patchbay ${COMMANDS[i]}`), outcome.stdout).toBe(true);
    });
    const usage = await cli(dir, '--help');
    for (const name of COMMANDS) expect(usage.stdout).toContain(`  ${name}`);
    const group = await cli(dir, 'member', '--help');
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^Usage: patchbay member <add\|update\|remove>/);
  });
});

describe('provisioning a deployment with CLI commands only', () => {
  itOwnEmbeddedDatabase('workspace → account → member with permissions → product → serials → token; the API accepts the token (embedded)', SLOW, async () => {
    const dir = await migratedDataDir('patchbay-provision-');
    const ws = await json(dir, 'workspace', 'create', '--name', 'Flow Audio', '--billing-eligible');
    await json(dir, 'account', 'create', '--email', 'support@flow.test', '--verified');
    await json(dir, 'member', 'add', '--workspace', String(ws.id), '--account', 'support@flow.test', '--permissions', 'serials.view,products.view', '--products', 'all');
    const product = await json(dir, 'product', 'create', '--workspace', String(ws.id), '--name', 'Flow Synth');
    const serials = await json(dir, 'serial', 'generate', '--workspace', String(ws.id), '--product', String(product.id), '--quantity', '2');
    const { token } = await json(dir, 'token', 'create', '--account', 'support@flow.test');

    const server = await startServer(dir, { DEMO: '0' });
    try {
      const get = (url: string) => fetch(`${server.address}${url}`, { headers: { authorization: `Bearer ${token}` } });
      const list = await get('/api/developer/serials');
      expect(list.status).toBe(200);
      expect(((await list.json()) as { total: number }).total).toBe(2);
      // The permissions given on the command line are the ones that apply.
      expect((await get('/api/developer/customers')).status).toBe(403);
      const activation = await fetch(`${server.address}/api/licensing/v1/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ productAppId: product.productAppId, serial: serials.serials[0].serial, machineId: 'flow-machine' }),
      });
      expect(activation.status).toBe(201);
      // An embedded server always has its demo or the operator's data in view: no provisioning hint.
      expect(server.output().stderr).not.toContain('No workspace yet');
    } finally {
      await stop(server.child);
    }
  });

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'prints the next steps on a PostgreSQL start with an empty database, and those exact commands provision it (PostgreSQL)',
    SLOW,
    async () => {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      const name = `patchbay_provision_${process.pid}_${Date.now()}`;
      await admin.query(`CREATE DATABASE ${name}`);
      try {
        const url = new URL(process.env.DATABASE_URL!);
        url.pathname = `/${name}`;
        const env = {
          DATABASE_URL: url.toString(),
          JWT_SECRET: 'provision-test-secret-provision-test-secret-0123',
          LICENSE_KEY_ENCRYPTION_KEY: '7'.repeat(64),
        };
        const dataDir = await migratedDataDir('patchbay-provision-');
        const server = await startServer(dataDir, env);
        try {
          const deadline = Date.now() + 30_000;
          while (!server.output().stderr.includes('\n\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          const hint = server.output().stderr;
          expect(hint).toContain('No workspace yet.');
          const commands = hint.split('\n').filter((l) => l.startsWith('  ') && !l.startsWith('  (')).map((l) => l.trim());
          expect(commands.map((c) => c.split(' ').slice(0, 3).join(' '))).toEqual([
            'WS=$(npx patchbay workspace',
            'npx patchbay account',
            'npx patchbay member',
            'export TOKEN=$(npx patchbay',
            'curl -H "Authorization:',
          ]);
          // Run them as printed, in one shell, as an operator would paste them.
          const script = `set -euo pipefail\n${commands.slice(0, 4).join('\n')}\ncurl -sf -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" ${server.address}/api/developer/customers`;
          const shell = spawnTracked(['-c', script], childEnv(dataDir, env), 'bash');
          const result = await shell.outcome;
          expect(result.code, result.stderr).toBe(0);
          expect(result.stdout.trim().split('\n').pop()).toBe('200');
        } finally {
          await stop(server.child);
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    },
  );
});

// The operator use cases behind the commands, in-process (fast, and on PostgreSQL too): the refusals.
describe('operator provisioning refusals', () => {
  const ctx = useTestApp();
  const db = () => ctx().database.db;

  it('refuses a workspace name in use (case and spaces ignored) and a name twice in one fixture document', async () => {
    const name = `Refusal Audio ${unique()}`;
    const first = await provision.createWorkspace(db(), { name, billingEligible: false, storefrontUrl: null, allowDuplicate: false });
    await expect(provision.createWorkspace(db(), { name: ` ${name.toUpperCase()} `, billingEligible: false, storefrontUrl: null, allowDuplicate: false })).rejects.toThrow(
      `A workspace with this name already exists: "${name}" (id ${first.id})`,
    );
    const twice = { workspaces: [{ key: 'a', name: `Twin ${unique()}` }, { key: 'b', name: '' }] };
    twice.workspaces[1]!.name = twice.workspaces[0]!.name.toLowerCase();
    await expect(loadFixtures(db(), TEST_JWT, twice)).rejects.toThrow(/appears twice; pass --allow-duplicate/);
    const loaded = await loadFixtures(db(), TEST_JWT, twice, { allowDuplicateWorkspaces: true });
    expect(Object.keys(loaded.ids.workspaces)).toEqual(['a', 'b']);
  });

  it('refuses unknown workspaces and accounts, a second membership, and products of another workspace', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'm', permissions: [], products: [] }] });
    const other = await seedWorkspace(ctx());
    const email = `m-${ws.suffix}@dev.test`;
    await expect(provision.addMember(db(), { workspaceId: 2147483647, account: email })).rejects.toThrow('No workspace 2147483647');
    await expect(provision.addMember(db(), { workspaceId: ws.workspaceId, account: `nobody-${ws.suffix}@dev.test` })).rejects.toThrow(/^No account nobody-/);
    await expect(provision.addMember(db(), { workspaceId: ws.workspaceId, account: email })).rejects.toThrow(/is already a member of workspace/);
    await expect(provision.updateMember(db(), { workspaceId: ws.workspaceId, account: email, products: [other.ids.products.p1!] })).rejects.toThrow(
      `Not a product of workspace ${ws.workspaceId}: ${other.ids.products.p1}`,
    );
    await expect(provision.removeMember(db(), { workspaceId: other.workspaceId, account: email })).rejects.toThrow(/is not a member of workspace/);
    await expect(provision.listProducts(db(), 2147483647)).rejects.toThrow('No workspace 2147483647');
  });

  it('applies permission and product changes to the next request, and a removed member’s token stops working at once', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'm', permissions: ['products.view'], products: 'all' }] });
    const email = `m-${ws.suffix}@dev.test`;
    const get = (url: string) => ctx().app.inject({ method: 'GET', url, headers: bearer(ws.tokens.m!) });
    expect((await get(`/api/developer/products/${ws.ids.products.p2}`)).statusCode).toBe(200);

    expect(await provision.updateMember(db(), { workspaceId: ws.workspaceId, account: email, products: [ws.ids.products.p1!] })).toMatchObject({ products: [ws.ids.products.p1] });
    expect((await get(`/api/developer/products/${ws.ids.products.p2}`)).statusCode).toBe(404);
    expect((await get('/api/developer/customers')).statusCode).toBe(403);
    await provision.updateMember(db(), { workspaceId: ws.workspaceId, account: email, permissions: ['customers.view'] });
    expect((await get('/api/developer/customers')).statusCode).toBe(200);

    await provision.removeMember(db(), { workspaceId: ws.workspaceId, account: email });
    expect((await get('/api/developer/customers')).json().code).toBe('WORKSPACE_ACCESS_DENIED');
  });

  it('keeps at least one owner: the only owner can be neither demoted nor removed, one of two can', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'm', permissions: [], products: [] }] });
    const owner = `owner-${ws.suffix}@dev.test`;
    const member = `m-${ws.suffix}@dev.test`;
    await expect(provision.updateMember(db(), { workspaceId: ws.workspaceId, account: owner, owner: false })).rejects.toThrow(/is the only owner of workspace/);
    await expect(provision.removeMember(db(), { workspaceId: ws.workspaceId, account: owner })).rejects.toThrow(/is the only owner of workspace/);
    expect(await provision.updateMember(db(), { workspaceId: ws.workspaceId, account: member, owner: true })).toMatchObject({ owner: true, products: 'all' });
    expect(await provision.updateMember(db(), { workspaceId: ws.workspaceId, account: owner, owner: false })).toMatchObject({ owner: false });
    await expect(provision.removeMember(db(), { workspaceId: ws.workspaceId, account: member })).rejects.toThrow(/is the only owner/);
  });

  it('lists team accounts only: a customer without a membership is not an operator account', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ email: `buyer-${unique()}@cust.test` }] });
    const { accounts } = await provision.listAccounts(db(), { workspaceId: ws.workspaceId });
    expect(accounts.map((a) => a.email)).toEqual([`owner-${ws.suffix}@dev.test`]);
  });

  it('refuses to rotate a signing key with another key-encryption key than the one that sealed it', async () => {
    const ws = await seedWorkspace(ctx());
    const rotated = await provision.rotateLicenseKey(db(), TEST_LICENSE_KEY, ws.workspaceId);
    expect(rotated.publishedKids).toContain(rotated.kid);
    await expect(provision.rotateLicenseKey(db(), Buffer.alloc(32, 9), ws.workspaceId)).rejects.toThrow(
      `The license signing key of workspace ${ws.workspaceId} cannot be opened with this LICENSE_KEY_ENCRYPTION_KEY`,
    );
    // The refused run changed nothing: the key rotated before is still the active one.
    const keys = await ctx().database.db.selectFrom('license_keys').where('workspace_id', '=', ws.workspaceId).where('status', '=', 'active').select('kid').execute();
    expect(keys).toEqual([{ kid: rotated.kid }]);
  });
});
