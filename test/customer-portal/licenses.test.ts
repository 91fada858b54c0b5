import { createLocalJWKSet, jwtVerify } from 'jose';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, type SeededWorkspace, unique, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { buyerToken, get, PORTAL } from './portal-helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });

const runtime = (path: 'activate' | 'validate', body: object) => ctx().app.inject({ method: 'POST', url: `/api/licensing/v1/${path}`, payload: body });
const release = (token: string, serialId: number, activationId: number) =>
  ctx().app.inject({ method: 'DELETE', url: `${PORTAL}/licenses/${serialId}/activations/${activationId}`, headers: bearer(token) });

async function store(maxActivations = 5) {
  const ws = await seedWorkspace(ctx(), {
    productSettings: { maxActivations, offlineGraceDays: 10 },
    customers: [{ key: 'me' }, { key: 'other' }],
    serials: [
      { key: 'mine', product: 'p1', customer: 'me' },
      { key: 'second', product: 'p2', customer: 'me', expiresAt: '2030-01-01T00:00:00.000Z' },
      { key: 'theirs', product: 'p1', customer: 'other' },
    ],
  });
  return { ws, me: await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`), other: await buyerToken(ctx(), ws.workspaceId, `c1-${ws.suffix}@cust.test`) };
}

async function activate(ws: SeededWorkspace, serial: string, machineId: string, product = 'p1') {
  const res = await runtime('activate', { productAppId: ws.appIds[product], serial: ws.serialCodes[serial], machineId, machineName: `Studio ${machineId}` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().activation.id as number;
}

describe('customer portal licenses', () => {
  it('lists the buyer’s serials with the devices holding their seats, never another buyer’s', async () => {
    const { ws, me, other } = await store();
    const seat = await activate(ws, 'mine', 'mac-1');
    await activate(ws, 'theirs', 'their-mac');
    const res = await get(ctx(), me, '/licenses');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rows).toEqual([
      {
        serial_id: ws.ids.serials.second,
        serial: ws.serialCodes.second,
        product_id: ws.ids.products.p2,
        product: `Product p2 ${ws.suffix}`,
        status: 'redeemed',
        expires_at: '2030-01-01T00:00:00.000Z',
        max_activations: 5,
        active_activation_count: 0,
        activations: [],
      },
      expect.objectContaining({
        serial_id: ws.ids.serials.mine,
        active_activation_count: 1,
        activations: [{ id: seat, machine_name: 'Studio mac-1', first_seen_at: expect.any(String), last_seen_at: expect.any(String) }],
      }),
    ]);
    expect(JSON.stringify(res.json())).not.toContain(ws.serialCodes.theirs!);
    expect((await get(ctx(), other, '/licenses')).json().rows.map((l: { serial_id: number }) => l.serial_id)).toEqual([ws.ids.serials.theirs]);
  });

  it('releases a device: the seat is free, the audit trail names the buyer, and the machine’s next validation is MACHINE_NOT_ACTIVATED', async () => {
    const { ws, me } = await store();
    const seat = await activate(ws, 'mine', 'mac-1');
    const res = await release(me, ws.ids.serials.mine!, seat);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ serial_id: ws.ids.serials.mine, active_activation_count: 0, activations: [] });

    const validated = await runtime('validate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.mine, machineId: 'mac-1' });
    expect(validated.json()).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });

    const events = await ctx().app.inject({ method: 'GET', url: `/api/developer/serials/${ws.ids.serials.mine}/events`, headers: bearer(ws.owner) });
    const released = events.json().rows.find((e: { action: string }) => e.action === 'activation.released');
    expect(released).toMatchObject({ actor_type: 'customer', actor_account_id: expect.any(Number), data: { activationId: seat, machineId: 'mac-1', customerId: ws.ids.customers.me, via: 'customer-portal' } });

    // Releasing it again is harmless and counts nothing; the plugin can activate elsewhere.
    expect((await release(me, ws.ids.serials.mine!, seat)).statusCode).toBe(200);
    await activate(ws, 'mine', 'new-laptop');
  });

  it('answers 404 for another buyer’s serial or seat, another serial’s seat, and another workspace’s', async () => {
    const { ws, me } = await store();
    const theirs = await activate(ws, 'theirs', 'their-mac');
    const mine = await activate(ws, 'mine', 'mac-1');
    const elsewhere = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p1', customer: 'c' }] });
    const far = await activate(elsewhere, 's', 'far-mac');
    for (const [serialId, activationId] of [
      [ws.ids.serials.theirs!, theirs],
      [ws.ids.serials.mine!, theirs],
      [ws.ids.serials.second!, mine],
      [elsewhere.ids.serials.s!, far],
      [ws.ids.serials.mine!, 2_000_000_000],
    ] as const) {
      const res = await release(me, serialId, activationId);
      expect(res.statusCode, `${serialId}/${activationId}`).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    expect((await runtime('validate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.theirs, machineId: 'their-mac' })).json().valid).toBe(true);
  });

  it('refuses the 4th release of a serial within 30 days with 429 DEVICE_RELEASE_LIMIT and when the next is possible', async () => {
    const { ws, me } = await store();
    for (let i = 1; i <= 3; i += 1) {
      const seat = await activate(ws, 'mine', `machine-${i}`);
      expect((await release(me, ws.ids.serials.mine!, seat)).statusCode).toBe(200);
    }
    const fourth = await activate(ws, 'mine', 'machine-4');
    const refused = await release(me, ws.ids.serials.mine!, fourth);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    const body = refused.json();
    expect(body).toMatchObject({ code: 'DEVICE_RELEASE_LIMIT', limit: 3, windowDays: 30 });
    const next = Date.parse(body.nextReleaseAt);
    expect(next - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(29 * 86_400);
    // The seat is still held; another serial of the buyer has its own allowance; the vendor can still release.
    expect((await runtime('validate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.mine, machineId: 'machine-4' })).json().valid).toBe(true);
    const other = await activate(ws, 'second', 'machine-x', 'p2');
    expect((await release(me, ws.ids.serials.second!, other)).statusCode).toBe(200);
    const support = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/serials/${ws.ids.serials.mine}/activations/${fourth}`, headers: bearer(ws.owner), payload: { reason: 'support' } });
    expect(support.statusCode).toBe(200);

    // Releases older than 30 days no longer count.
    await sql`update serial_events set created_at = now() - interval '31 days'
      where workspace_id = ${ws.workspaceId} and serial_id = ${ws.ids.serials.mine!} and actor_type = 'customer'`.execute(ctx().database.db);
    const fifth = await activate(ws, 'mine', 'machine-5');
    expect((await release(me, ws.ids.serials.mine!, fifth)).statusCode).toBe(200);
  });

  it('refuses releases on a suspended or revoked serial', async () => {
    const { ws, me } = await store();
    const seat = await activate(ws, 'mine', 'mac-1');
    for (const action of ['suspend', 'revoke']) {
      const changed = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.mine}/${action}`, headers: bearer(ws.owner), payload: { reason: 'test' } });
      expect(changed.statusCode, changed.body).toBe(200);
      const res = await release(me, ws.ids.serials.mine!, seat);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'SERIAL_NOT_RELEASABLE', serialStatus: action === 'suspend' ? 'suspended' : 'revoked' });
    }
  });
});

describe('customer portal offline activation', () => {
  const machineRequest = (ws: SeededWorkspace, serial: string, machineId: string, extra: object = {}) => ({
    format: 'patchbay-machine-request/1',
    productAppId: ws.appIds.p1,
    serial: ws.serialCodes[serial],
    machineId,
    machineName: 'Studio B',
    nonce: `n-${unique()}`,
    ...extra,
  });
  const offline = (token: string, serialId: number, payload: object, headers: Record<string, string> = {}) =>
    ctx().app.inject({ method: 'POST', url: `${PORTAL}/licenses/${serialId}/offline-activations`, headers: { ...bearer(token), ...headers }, payload: payload as never });

  it('answers a license file with the runtime’s Ed25519 token, bound to the machine and taking one seat', async () => {
    const { ws, me } = await store();
    const request = machineRequest(ws, 'mine', 'offline-rig');
    const res = await offline(me, ws.ids.serials.mine!, request);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.filename).toMatch(/\.patchbay-license$/);
    const license = JSON.parse(body.license);
    expect(license).toMatchObject({ format: 'patchbay-license/1', productAppId: ws.appIds.p1, serial: ws.serialCodes.mine, machineId: 'offline-rig', nonce: request.nonce });

    const keys = (await ctx().app.inject({ method: 'GET', url: `/api/licensing/v1/keys?productAppId=${ws.appIds.p1}` })).json();
    const { payload, protectedHeader } = await jwtVerify(license.token, createLocalJWKSet(keys), { issuer: 'patchbay', audience: ws.appIds.p1 });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'license+jwt' });
    expect(payload).toMatchObject({ mid: 'offline-rig', ser: ws.serialCodes.mine, sid: ws.ids.serials.mine, nonce: request.nonce, act: body.activation.id });
    const days = (payload.exp! * 1000 - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(9.9);
    expect(days).toBeLessThanOrEqual(10);

    const seats = (await get(ctx(), me, '/licenses')).json().rows.find((l: { serial_id: number }) => l.serial_id === ws.ids.serials.mine);
    expect(seats).toMatchObject({ active_activation_count: 1, activations: [{ id: body.activation.id, machine_name: 'Studio B' }] });
    // The machine is activated as if it had called the runtime; the audit trail names the buyer.
    expect((await runtime('validate', { productAppId: ws.appIds.p1, serial: ws.serialCodes.mine, machineId: 'offline-rig' })).json().valid).toBe(true);
    const events = (await ctx().app.inject({ method: 'GET', url: `/api/developer/serials/${ws.ids.serials.mine}/events`, headers: bearer(ws.owner) })).json();
    expect(events.rows.find((e: { action: string }) => e.action === 'offline.activated')).toMatchObject({ actor_type: 'customer', data: { customerId: ws.ids.customers.me } });

    // The same machine again is its seat again, with a fresh file.
    const again = await offline(me, ws.ids.serials.mine!, request);
    expect(again.statusCode).toBe(200);
    expect(again.json().activation.id).toBe(body.activation.id);
  });

  it('takes the machine request file as a multipart upload', async () => {
    const { ws, me } = await store();
    const upload = multipart([{ name: 'file', value: Buffer.from(JSON.stringify(machineRequest(ws, 'mine', 'rig-upload'))), filename: 'machine-request.json', contentType: 'application/json' }]);
    const res = await offline(me, ws.ids.serials.mine!, upload.payload as never, upload.headers);
    expect(res.statusCode, res.body).toBe(201);
    expect(JSON.parse(res.json().license).machineId).toBe('rig-upload');

    for (const [label, bytes] of [
      ['not JSON', Buffer.from('machine=1')],
      ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b])],
      ['too large', Buffer.alloc(20_000, 0x20)],
    ] as const) {
      const bad = multipart([{ name: 'file', value: bytes, filename: 'm.json' }]);
      const refused = await offline(me, ws.ids.serials.mine!, bad.payload as never, bad.headers);
      expect(refused.statusCode, label).toBe(400);
      expect(refused.json().code, label).toBe('MACHINE_REQUEST_UNREADABLE');
    }
    const incomplete = multipart([{ name: 'file', value: Buffer.from(JSON.stringify({ serial: ws.serialCodes.mine })), filename: 'm.json' }]);
    expect((await offline(me, ws.ids.serials.mine!, incomplete.payload as never, incomplete.headers)).statusCode).toBe(400);
    const noFile = multipart([{ name: 'note', value: 'hello' }]);
    expect((await offline(me, ws.ids.serials.mine!, noFile.payload as never, noFile.headers)).json().code).toBe('MACHINE_REQUEST_UNREADABLE');
  });

  it('refuses a request for another serial or product, a full serial, and another buyer’s serial', async () => {
    const { ws, me } = await store(1);
    const wrongSerial = await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'second', 'rig'));
    expect(wrongSerial.statusCode).toBe(422);
    expect(wrongSerial.json().code).toBe('MACHINE_REQUEST_MISMATCH');
    const wrongProduct = await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'mine', 'rig', { productAppId: ws.appIds.p2 }));
    expect(wrongProduct.json().code).toBe('MACHINE_REQUEST_MISMATCH');
    const elsewhere = await seedWorkspace(ctx());
    expect((await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'mine', 'rig', { productAppId: elsewhere.appIds.p1 }))).json().code).toBe('MACHINE_REQUEST_MISMATCH');

    expect((await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'mine', 'rig-1'))).statusCode).toBe(201);
    const full = await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'mine', 'rig-2'));
    expect(full.statusCode).toBe(422);
    expect(full.json().code).toBe('MACHINE_LIMIT_EXCEEDED');

    const theirs = await offline(me, ws.ids.serials.theirs!, machineRequest(ws, 'theirs', 'rig'));
    expect(theirs.statusCode).toBe(404);
    expect((await offline(me, ws.ids.serials.mine!, { serial: 'x' })).statusCode).toBe(400);
  });

  it('reads the request file’s format 1 (named or not), refuses another version, and needs the nonce the package checks', async () => {
    const { ws, me } = await store();
    const { format: _named, ...unnamed } = machineRequest(ws, 'mine', 'rig-unnamed');
    expect((await offline(me, ws.ids.serials.mine!, unnamed)).statusCode).toBe(201);

    const later = await offline(me, ws.ids.serials.mine!, machineRequest(ws, 'mine', 'rig-later', { format: 'patchbay-machine-request/2' }));
    expect(later.statusCode).toBe(400);
    expect(later.json().errors).toEqual([expect.objectContaining({ path: expect.stringContaining('format') })]);

    const { nonce: _nonce, ...withoutNonce } = machineRequest(ws, 'mine', 'rig-no-nonce');
    const noNonce = multipart([{ name: 'file', value: Buffer.from(JSON.stringify(withoutNonce)), filename: 'm.patchbay-request' }]);
    const refused = await offline(me, ws.ids.serials.mine!, noNonce.payload as never, noNonce.headers);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([expect.objectContaining({ path: expect.stringContaining('nonce') })]);
    // Nothing was activated by the refused requests.
    const license = (await get(ctx(), me, '/licenses')).json().rows.find((l: { serial_id: number }) => l.serial_id === ws.ids.serials.mine);
    expect(license.active_activation_count).toBe(1);
  });
});

describe('customer portal: resend my keys', () => {
  it('e-mails the buyer their keys through the job runner, and limits how often', async () => {
    const { ws, me } = await store();
    const email = `c0-${ws.suffix}@cust.test`;
    const res = await ctx().app.inject({ method: 'POST', url: `${PORTAL}/keys/resend`, headers: bearer(me) });
    expect(res.statusCode, res.body).toBe(202);
    await ctx().app.jobs.idle();
    const mail = transport.sent.filter((m) => m.to === email).at(-1)!;
    expect(mail.subject).toBe(`Your Workspace ${ws.suffix} license keys`);
    for (const key of [ws.serialCodes.mine!, ws.serialCodes.second!]) {
      expect(mail.text).toContain(key);
      expect(mail.html).toContain(key);
    }
    expect(mail.text).not.toContain(ws.serialCodes.theirs!);
    expect(mail.text).toContain(`http://patchbay.test/portal/${ws.workspaceId}`);
    for (let i = 0; i < 2; i += 1) expect((await ctx().app.inject({ method: 'POST', url: `${PORTAL}/keys/resend`, headers: bearer(me) })).statusCode).toBe(202);
    const limited = await ctx().app.inject({ method: 'POST', url: `${PORTAL}/keys/resend`, headers: bearer(me) });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
  });
});
