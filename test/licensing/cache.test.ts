import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.js';
import { VALIDATE_CACHE_MS } from '../../src/modules/licensing/licensing.cache.js';
import { bearer, seedWorkspace, type TestContext, TEST_JWT, TEST_LICENSE_KEY, useTestApp } from '../helpers/app.js';

// Validate answers from a per-instance cache for a few seconds (issue 26): a change made through the
// instance is seen at once, one made elsewhere within VALIDATE_CACHE_MS (≤ 5 s), and no entry answers for
// another workspace, product, appId or machine.

const statements: string[] = [];
const ctx = useTestApp({ onQuery: (text) => statements.push(text) });
const BASE = '/api/licensing/v1';

/** A second instance of the service on the same database (in memory: the very same one). */
async function secondInstance(c: TestContext): Promise<App> {
  const app = await buildApp({
    database: c.database,
    jwt: TEST_JWT,
    licensing: { encryptionKey: TEST_LICENSE_KEY, rateLimit: { perIp: 1_000_000, perSerial: 1_000_000, perSerialTotal: 1_000_000 } },
    jobs: { run: false },
    publicBaseUrl: 'http://patchbay.test',
  });
  await app.ready();
  return app;
}
const others: App[] = [];
afterAll(async () => {
  for (const app of others) await app.close();
});

const post = (path: string, payload: Record<string, unknown>, app: App = ctx().app) => app.inject({ method: 'POST', url: `${BASE}/${path}`, payload });
const validate = async (appId: string, serial: string, machineId: string, extra: Record<string, unknown> = {}, app?: App) =>
  (await post('validate', { productAppId: appId, serial, machineId, ...extra }, app)).json();
/** Validate's read of the serial and this machine's seat. */
const serialReads = () => statements.filter((s) => /from "serials" as "s" left join "serial_activations"/.test(s)).length;

async function activatedSerial(serial: { activeTo?: string } = {}) {
  const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1', ...serial }] });
  const appId = ws.appIds.p1!;
  const code = ws.serialCodes.s!;
  const activated = await post('activate', { productAppId: appId, serial: code, machineId: 'm' });
  expect(activated.statusCode).toBe(201);
  return { ws, appId, code, serialId: ws.ids.serials.s!, activationId: activated.json().activation.id as number };
}

/** Polls until `check` holds; answers the milliseconds it took (fails past `limitMs`). */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('validate cache', () => {
  it('keeps the contract short: at most 5 s', () => {
    expect(VALIDATE_CACHE_MS).toBeGreaterThan(0);
    expect(VALIDATE_CACHE_MS).toBeLessThanOrEqual(5_000);
  });

  it('answers a repeat from memory: no second read, the same token for the same nonce, a new one for a new nonce', async () => {
    const { appId, code, serialId } = await activatedSerial();
    const before = serialReads();
    const first = await validate(appId, code, 'm', { nonce: 'n1' });
    expect(first).toMatchObject({ valid: true, code: 'VALID', nonce: 'n1' });
    const again = await validate(appId, code, 'm', { nonce: 'n1' });
    expect(again.token).toBe(first.token);
    expect(again.tokenExpiresAt).toBe(first.tokenExpiresAt);
    const other = await validate(appId, code, 'm', { nonce: 'n2' });
    expect(other).toMatchObject({ valid: true, nonce: 'n2' });
    expect(other.token).not.toBe(first.token);
    expect(serialReads() - before).toBe(1);

    const jwks = createLocalJWKSet((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` })).json());
    const { payload } = await jwtVerify(other.token, jwks, { issuer: 'patchbay', audience: appId });
    expect(payload).toMatchObject({ sid: serialId, mid: 'm', nonce: 'n2' });
    expect(payload.exp! * 1000).toBeGreaterThan(Date.now());
  });

  it('sees a revocation, a support release and a runtime deactivation made through this instance at once', async () => {
    const revoked = await activatedSerial();
    expect((await validate(revoked.appId, revoked.code, 'm')).code).toBe('VALID');
    const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${revoked.serialId}/revoke`, headers: bearer(revoked.ws.owner), payload: {} });
    expect(res.statusCode).toBe(200);
    expect((await validate(revoked.appId, revoked.code, 'm')).code).toBe('REVOKED');

    const released = await activatedSerial();
    expect((await validate(released.appId, released.code, 'm')).code).toBe('VALID');
    const release = await ctx().app.inject({
      method: 'DELETE',
      url: `/api/developer/serials/${released.serialId}/activations/${released.activationId}`,
      headers: bearer(released.ws.owner),
      payload: { reason: 'lost laptop' },
    });
    expect(release.json().released).toBe(true);
    expect((await validate(released.appId, released.code, 'm')).code).toBe('MACHINE_NOT_ACTIVATED');
    // And activating again is seen at once too.
    expect((await post('activate', { productAppId: released.appId, serial: released.code, machineId: 'm' })).statusCode).toBe(201);
    expect((await validate(released.appId, released.code, 'm')).code).toBe('VALID');

    const deactivated = await activatedSerial();
    expect((await validate(deactivated.appId, deactivated.code, 'm')).code).toBe('VALID');
    expect((await post('deactivate', { productAppId: deactivated.appId, serial: deactivated.code, machineId: 'm' })).json().released).toBe(true);
    expect((await validate(deactivated.appId, deactivated.code, 'm')).code).toBe('MACHINE_NOT_ACTIVATED');
  });

  it('a second instance sees a revocation made through the first within the cache lifetime', async () => {
    const second = await secondInstance(ctx());
    others.push(second);
    const { ws, appId, code, serialId } = await activatedSerial();
    expect((await validate(appId, code, 'm', {}, second)).code).toBe('VALID');
    const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${serialId}/suspend`, headers: bearer(ws.owner), payload: {} });
    expect(res.statusCode).toBe(200);
    const took = await within(VALIDATE_CACHE_MS + 1_000, async () => (await validate(appId, code, 'm', {}, second)).code === 'SUSPENDED');
    expect(took).toBeLessThanOrEqual(5_000);
  });

  it('a change written by another process (no announcement) is seen within the cache lifetime, not before the entry was read', async () => {
    const { appId, code, serialId, ws } = await activatedSerial();
    expect((await validate(appId, code, 'm')).code).toBe('VALID');
    const readsBefore = serialReads();
    await ctx().database.db.updateTable('serials').set({ status: 'revoked' }).where('workspace_id', '=', ws.workspaceId).where('id', '=', serialId).execute();
    // Still the cached answer right after (what makes this a cache) …
    expect((await validate(appId, code, 'm')).code).toBe('VALID');
    expect(serialReads()).toBe(readsBefore);
    // … but not for longer than its lifetime.
    const took = await within(VALIDATE_CACHE_MS + 1_000, async () => (await validate(appId, code, 'm')).code === 'REVOKED');
    expect(took).toBeLessThanOrEqual(5_000);
  });

  it('never answers for another machine, product, appId or workspace', async () => {
    const { ws, appId, code } = await activatedSerial();
    const other = await activatedSerial();
    expect((await validate(appId, code, 'm')).code).toBe('VALID');
    expect((await validate(appId, code, 'm2')).code).toBe('MACHINE_NOT_ACTIVATED');
    expect((await validate(ws.appIds.p2!, code, 'm')).code).toBe('NOT_FOUND');
    expect((await validate(other.appId, code, 'm')).code).toBe('NOT_FOUND');
    const foreign = await validate(other.appId, other.code, 'm');
    expect(foreign.code).toBe('VALID');
    const mine = await validate(appId, code, 'm');
    expect(mine.token).not.toBe(foreign.token);
    const jwks = createLocalJWKSet((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` })).json());
    await expect(jwtVerify(foreign.token, jwks)).rejects.toThrow();
  });

  it('a cached answer never outlives the serial: expiry is checked on every call and the token never ends in the past', async () => {
    const endsAt = Date.now() + 2_500;
    const { appId, code } = await activatedSerial({ activeTo: new Date(endsAt).toISOString() });
    const valid = await validate(appId, code, 'm');
    expect(valid.code).toBe('VALID');
    expect(Date.parse(valid.tokenExpiresAt)).toBeLessThanOrEqual(endsAt);
    for (;;) {
      const asked = Date.now();
      const answer = await validate(appId, code, 'm');
      if (answer.code !== 'VALID') {
        expect(answer.code).toBe('EXPIRED');
        expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
        break;
      }
      // Whenever it still says valid, the token it hands out has not expired: its stated expiry is ahead, and its
      // `exp` (whole seconds, as JWTs count) is not before the second in which it was asked.
      expect(Date.parse(answer.tokenExpiresAt)).toBeGreaterThan(asked);
      expect(Date.parse(answer.tokenExpiresAt)).toBeLessThanOrEqual(endsAt);
      const { exp } = JSON.parse(Buffer.from(answer.token.split('.')[1], 'base64url').toString()) as { exp: number };
      expect(exp).toBeGreaterThanOrEqual(Math.floor(asked / 1000));
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('still records "last seen" when it is due, and only then', async () => {
    const { appId, code, ws, activationId } = await activatedSerial();
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await ctx().database.db.updateTable('serial_activations').set({ last_validated_at: hoursAgo }).where('workspace_id', '=', ws.workspaceId).where('id', '=', activationId).execute();
    const touches = () => statements.filter((s) => /^update "serial_activations" set "last_validated_at"/.test(s)).length;
    const before = touches();
    expect((await validate(appId, code, 'm')).code).toBe('VALID');
    expect((await validate(appId, code, 'm')).code).toBe('VALID');
    expect(touches() - before).toBe(1);
    const row = await ctx().database.db.selectFrom('serial_activations').where('id', '=', activationId).where('workspace_id', '=', ws.workspaceId).select('last_validated_at').executeTakeFirstOrThrow();
    expect(row.last_validated_at.getTime()).toBeGreaterThan(hoursAgo.getTime() + 3_600_000);
  });
});
