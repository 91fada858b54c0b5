import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp, type SeededWorkspace } from '../helpers/app.js';

const ctx = useTestApp();
const BASE = '/api/licensing/v1';

const post = (path: string, payload: Record<string, unknown>) => ctx().app.inject({ method: 'POST', url: `${BASE}/${path}`, payload });

async function workspaceWithSerial(options: Parameters<typeof seedWorkspace>[1] = {}) {
  const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }], ...options });
  return { ws, appId: ws.appIds.p1!, serial: ws.serialCodes.s! };
}

const activate = (appId: string, serial: string, machineId: string, extra: Record<string, unknown> = {}) =>
  post('activate', { productAppId: appId, serial, machineId, ...extra });
const validate = (appId: string, serial: string, machineId: string, extra: Record<string, unknown> = {}) =>
  post('validate', { productAppId: appId, serial, machineId, ...extra });

async function action(ws: SeededWorkspace, name: string) {
  const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.s}/${name}`, headers: bearer(ws.owner), payload: {} });
  expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
  return res.json();
}

describe('POST /api/licensing/v1/activate', () => {
  it('activates a machine with 201, a seat and a signed token; the same machine again is 200 with the same activation', async () => {
    const { ws, appId, serial } = await workspaceWithSerial();
    const first = await activate(appId, serial, 'machine-A', { machineName: 'Studio Mac', platform: 'macos', appVersion: '1.2.0', nonce: 'n1' });
    expect(first.statusCode).toBe(201);
    const body = first.json();
    expect(body.activation).toMatchObject({ machineId: 'machine-A', machineName: 'Studio Mac', platform: 'macos', appVersion: '1.2.0' });
    expect(body.serial).toMatchObject({ status: 'redeemed', maxActivations: 2, activeActivations: 1, remainingActivations: 1 });
    expect(body.nonce).toBe('n1');
    expect(body.token.split('.')).toHaveLength(3);

    const again = await activate(appId, serial.toLowerCase().replaceAll('-', ' '), 'machine-A');
    expect(again.statusCode).toBe(200);
    expect(again.json().activation.id).toBe(body.activation.id);
    expect(again.json().serial.activeActivations).toBe(1);

    const list = await ctx().app.inject({ method: 'GET', url: `/api/developer/serials?search=${serial}`, headers: bearer(ws.owner) });
    expect(list.json().rows[0]).toMatchObject({ status: 'redeemed', redeemed: true, active_activation_count: 1, remaining_activations: 1 });
  });

  it('refuses a machine over the limit with 422 MACHINE_LIMIT_EXCEEDED and frees a seat on deactivate', async () => {
    const { appId, serial } = await workspaceWithSerial();
    expect((await activate(appId, serial, 'm1')).statusCode).toBe(201);
    expect((await activate(appId, serial, 'm2')).statusCode).toBe(201);
    const third = await activate(appId, serial, 'm3');
    expect(third.statusCode).toBe(422);
    expect(third.json()).toMatchObject({ code: 'MACHINE_LIMIT_EXCEEDED', maxActivations: 2, activeActivations: 2 });

    const released = await post('deactivate', { productAppId: appId, serial, machineId: 'm1' });
    expect(released.statusCode).toBe(200);
    expect(released.json()).toMatchObject({ released: true, serial: { activeActivations: 1, remainingActivations: 1 } });
    const twice = await post('deactivate', { productAppId: appId, serial, machineId: 'm1' });
    expect(twice.json().released).toBe(false);
    expect((await activate(appId, serial, 'm3')).statusCode).toBe(201);
    expect((await validate(appId, serial, 'm1')).json().code).toBe('MACHINE_NOT_ACTIVATED');
  });

  it('answers 404 LICENSE_NOT_FOUND for an unknown serial, product, or a serial of another product', async () => {
    const { ws, appId, serial } = await workspaceWithSerial();
    const other = await workspaceWithSerial();
    expect((await activate(appId, 'NOPE-NOPE-NOPE', 'm')).json().code).toBe('LICENSE_NOT_FOUND');
    expect((await activate('app_unknown', serial, 'm')).statusCode).toBe(404);
    expect((await activate(ws.appIds.p2!, serial, 'm')).statusCode).toBe(404);
    expect((await activate(other.appId, serial, 'm')).statusCode).toBe(404);
  });

  it('refuses suspended, revoked, deactivated, expired and not-yet-active serials with their own codes', async () => {
    const suspended = await workspaceWithSerial();
    await action(suspended.ws, 'suspend');
    expect((await activate(suspended.appId, suspended.serial, 'm')).json()).toMatchObject({ code: 'LICENSE_SUSPENDED', reason: 'SUSPENDED' });
    const revoked = await workspaceWithSerial();
    await action(revoked.ws, 'revoke');
    expect((await activate(revoked.appId, revoked.serial, 'm')).json().code).toBe('LICENSE_REVOKED');
    const deactivated = await workspaceWithSerial();
    await action(deactivated.ws, 'deactivate');
    expect((await activate(deactivated.appId, deactivated.serial, 'm')).json().code).toBe('LICENSE_DEACTIVATED');
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const past = new Date(Date.now() - 86_400_000).toISOString();
    const notYet = await workspaceWithSerial({ serials: [{ key: 's', product: 'p1', activeFrom: future }] });
    expect((await activate(notYet.appId, notYet.serial, 'm')).json().code).toBe('LICENSE_NOT_ACTIVE_YET');
    const expired = await workspaceWithSerial({ serials: [{ key: 's', product: 'p1', expiresAt: past }] });
    const res = await activate(expired.appId, expired.serial, 'm');
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('LICENSE_EXPIRED');
  });

  it('answers 400 for malformed input, never 500', async () => {
    const { appId, serial } = await workspaceWithSerial();
    for (const payload of [{}, { productAppId: appId, serial }, { productAppId: appId, serial, machineId: '' }, { productAppId: 'bad id!', serial, machineId: 'm' }, { productAppId: appId, serial: 12345, machineId: 'm' }, { productAppId: appId, serial, machineId: 'x'.repeat(201) }]) {
      const res = await post('activate', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    const malformed = await ctx().app.inject({ method: 'POST', url: `${BASE}/validate`, headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(malformed.statusCode).toBe(400);
  });
});

describe('POST /api/licensing/v1/validate', () => {
  it('answers VALID with a fresh token bound to product, serial and machine', async () => {
    const { ws, appId, serial } = await workspaceWithSerial({ productSettings: { offlineGraceDays: 7 } });
    await activate(appId, serial, 'machine-A');
    const res = await validate(appId, serial, 'machine-A', { nonce: 'abc' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ valid: true, code: 'VALID', nonce: 'abc' });

    const jwks = await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` });
    expect(jwks.statusCode).toBe(200);
    const keys = jwks.json();
    expect(keys.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(JSON.stringify(keys)).not.toMatch(/"d"/);
    const { payload, protectedHeader } = await jwtVerify(body.token, createLocalJWKSet(keys), { issuer: 'patchbay', audience: appId });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'license+jwt', kid: keys.keys[0].kid });
    expect(payload).toMatchObject({ ser: serial, sid: ws.ids.serials.s, mid: 'machine-A', nonce: 'abc' });
    const graceDays = (payload.exp! - payload.iat!) / 86_400;
    expect(graceDays).toBeCloseTo(7, 3);
  });

  it('refuses a token after a one-byte change and under another workspace’s keys', async () => {
    const { appId, serial } = await workspaceWithSerial();
    const other = await workspaceWithSerial();
    const token: string = (await activate(appId, serial, 'm')).json().token;
    const jwks = createLocalJWKSet((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` })).json());
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = Buffer.from(p, 'base64url');
    payload[payload.length - 2]! ^= 1;
    const tampered = `${h}.${payload.toString('base64url')}.${s}`;
    await expect(jwtVerify(tampered, jwks)).rejects.toThrow();
    const sig = Buffer.from(s, 'base64url');
    sig[0]! ^= 1;
    await expect(jwtVerify(`${h}.${p}.${sig.toString('base64url')}`, jwks)).rejects.toThrow();
    const foreign = createLocalJWKSet((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${other.appId}` })).json());
    expect(decodeProtectedHeader(token).kid).toBeDefined();
    await expect(jwtVerify(token, foreign)).rejects.toThrow();
  });

  it('reports each refusal as data with a code', async () => {
    const { ws, appId, serial } = await workspaceWithSerial();
    const code = async (machine = 'm') => (await validate(appId, serial, machine)).json().code;
    expect((await validate(appId, 'UNKNOWN-CODE', 'm')).json()).toMatchObject({ valid: false, code: 'NOT_FOUND' });
    expect((await validate('app_nope', serial, 'm')).json().code).toBe('NOT_FOUND');
    expect(await code()).toBe('MACHINE_NOT_ACTIVATED');
    await activate(appId, serial, 'm');
    expect(await code()).toBe('VALID');
    await action(ws, 'suspend');
    const suspended = await validate(appId, serial, 'm');
    expect(suspended.statusCode).toBe(200);
    expect(suspended.json()).toMatchObject({ valid: false, code: 'SUSPENDED' });
    expect(suspended.json().token).toBeUndefined();
    // Suspension keeps the device: unsuspending restores validity without a new activation.
    await action(ws, 'unsuspend');
    expect(await code()).toBe('VALID');
    const deactivated = await action(ws, 'deactivate');
    expect(deactivated.deactivatedActivations).toBe(1);
    expect(await code()).toBe('DEACTIVATED');
    await action(ws, 'reactivate');
    expect(await code()).toBe('MACHINE_NOT_ACTIVATED');
    await activate(appId, serial, 'm');
    const revoked = await action(ws, 'revoke');
    expect(revoked.deactivatedActivations).toBe(1);
    expect(await code()).toBe('REVOKED');

    const past = new Date(Date.now() - 1000).toISOString();
    const expired = await workspaceWithSerial({ serials: [{ key: 's', product: 'p1', activeTo: past }] });
    expect((await validate(expired.appId, expired.serial, 'm')).json().code).toBe('EXPIRED');
    const notYet = await workspaceWithSerial({ serials: [{ key: 's', product: 'p1', activeFrom: new Date(Date.now() + 3_600_000).toISOString() }] });
    expect((await validate(notYet.appId, notYet.serial, 'm')).json().code).toBe('NOT_ACTIVE_YET');
  });

  it('never issues a token that outlives the serial', async () => {
    const endsSoon = new Date(Date.now() + 3_600_000);
    const { appId, serial } = await workspaceWithSerial({ serials: [{ key: 's', product: 'p1', expiresAt: endsSoon.toISOString() }] });
    const body = (await activate(appId, serial, 'm')).json();
    expect(Date.parse(body.tokenExpiresAt)).toBeLessThanOrEqual(endsSoon.getTime());
  });

  it('records runtime activations and releases in the serial audit trail', async () => {
    const { ws, appId, serial } = await workspaceWithSerial();
    await activate(appId, serial, 'm');
    await post('deactivate', { productAppId: appId, serial, machineId: 'm' });
    const events = (await ctx().app.inject({ method: 'GET', url: `/api/developer/serials/${ws.ids.serials.s}/events`, headers: bearer(ws.owner) })).json();
    expect(events.rows.map((e: { action: string; actor_type: string }) => `${e.actor_type}:${e.action}`)).toEqual(['runtime:runtime.activated', 'runtime:runtime.deactivated']);
  });
});

describe('GET /api/licensing/v1/keys', () => {
  it('answers 404 for an unknown product and 400 without productAppId', async () => {
    expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=app_missing` })).statusCode).toBe(404);
    expect((await ctx().app.inject({ method: 'GET', url: `${BASE}/keys` })).statusCode).toBe(400);
  });

  it('stores private keys encrypted, never in clear text', async () => {
    const { ws, appId } = await workspaceWithSerial();
    await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` });
    const rows = await ctx().database.db.selectFrom('license_keys').where('workspace_id', '=', ws.workspaceId).selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.private_key_encrypted).toMatch(/^v1\./);
    expect(rows[0]!.private_key_encrypted).not.toContain('PRIVATE KEY');
  });
});

describe('seat limit under concurrency', () => {
  it('never lets two machines take the last seat', async () => {
    const { ws, appId, serial } = await workspaceWithSerial({ productSettings: { maxActivations: 3 } });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => activate(appId, serial, `race-${i}`)));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(3);
    expect(codes.filter((c) => c === 422)).toHaveLength(9);
    const active = await ctx()
      .database.db.selectFrom('serial_activations')
      .where('serial_id', '=', ws.ids.serials.s!)
      .where('status', '=', 'active')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(active.n)).toBe(3);
  });

  it('activates the same machine once when its requests race', async () => {
    const { appId, serial } = await workspaceWithSerial();
    const results = await Promise.all(Array.from({ length: 6 }, () => activate(appId, serial, 'same-machine')));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(new Set(results.map((r) => r.json().activation.id)).size).toBe(1);
  });
});

describe('license key rotation', () => {
  it('signs with the new key and keeps the retired key in the JWKS so older tokens still verify', async () => {
    const { ws, appId, serial } = await workspaceWithSerial();
    const before: string = (await activate(appId, serial, 'm')).json().token;
    const { LicenseKeyring } = await import('../../src/modules/licensing/licensing.keys.js');
    const { TEST_LICENSE_KEY } = await import('../helpers/app.js');
    const newKid = await new LicenseKeyring(ctx().database.db, TEST_LICENSE_KEY).rotate(ws.workspaceId);
    const keys = (await ctx().app.inject({ method: 'GET', url: `${BASE}/keys?productAppId=${appId}` })).json();
    expect(keys.keys.map((k: { kid: string }) => k.kid)).toContain(newKid);
    expect(keys.keys).toHaveLength(2);
    const jwks = createLocalJWKSet(keys);
    await expect(jwtVerify(before, jwks, { audience: appId })).resolves.toBeDefined();
    expect(decodeProtectedHeader(before).kid).not.toBe(newKid);
  });
});
