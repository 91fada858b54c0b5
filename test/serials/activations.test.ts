import { describe, expect, it } from 'vitest';
import { bearer, onPostgres, seedWorkspace, useTestApp, type SeededWorkspace } from '../helpers/app.js';
import { expectProblem, MEMBERS, SERIALS, serialInDb } from './serials-helpers.js';

const ctx = useTestApp();
const RUNTIME = '/api/licensing/v1';

const runtime = (path: string, ws: SeededWorkspace, machineId: string, extra: Record<string, unknown> = {}) =>
  ctx().app.inject({ method: 'POST', url: `${RUNTIME}/${path}`, payload: { productAppId: ws.appIds.p1!, serial: ws.serialCodes.s!, machineId, ...extra } });

async function activate(ws: SeededWorkspace, machineId: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await runtime('activate', ws, machineId, extra);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().activation.id as number;
}

const list = (token: string, serialId: number, query = '') =>
  ctx().app.inject({ method: 'GET', url: `${SERIALS}/${serialId}/activations${query}`, headers: bearer(token) });

/** `payload: null` sends no body at all. */
const release = (token: string, serialId: number | string, activationId: number | string, payload: unknown = { reason: 'customer replaced their computer' }) =>
  ctx().app.inject({
    method: 'DELETE',
    url: `${SERIALS}/${serialId}/activations/${activationId}`,
    headers: bearer(token),
    ...(payload === null ? {} : { payload: payload as object }),
  });

/** A workspace with serial `s` of product p1 (three seats) and the serial test members. */
const workspace = (maxActivations = 3) =>
  seedWorkspace(ctx(), { productSettings: { maxActivations }, serials: [{ key: 's', product: 'p1' }], members: Object.values(MEMBERS) });

describe('GET /api/developer/serials/:serialId/activations', () => {
  it('lists every device with machine, platform, version, first and last seen and status, newest first', async () => {
    const ws = await workspace();
    const first = await activate(ws, 'mac-studio', { machineName: 'Studio Mac', platform: 'macos', appVersion: '2.1.0' });
    const second = await activate(ws, 'win-laptop', { platform: 'windows' });
    await runtime('deactivate', ws, 'win-laptop');

    const res = await list(ws.owner, ws.ids.serials.s!);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 2, page: 1, pageSize: 50 });
    expect(body.rows.map((r: { id: number }) => r.id)).toEqual([second, first]);
    expect(body.rows[1]).toEqual({
      id: first,
      serial_id: ws.ids.serials.s,
      machine_id: 'mac-studio',
      machine_name: 'Studio Mac',
      platform: 'macos',
      app_version: '2.1.0',
      status: 'active',
      first_seen_at: expect.any(String),
      last_seen_at: expect.any(String),
      released_at: null,
      release_reason: null,
    });
    expect(body.rows[0]).toMatchObject({ machine_id: 'win-laptop', status: 'released', release_reason: 'self-service', released_at: expect.any(String) });

    const active = (await list(ws.owner, ws.ids.serials.s!, '?status=active')).json();
    expect(active.rows.map((r: { machine_id: string }) => r.machine_id)).toEqual(['mac-studio']);
    expect(active.total).toBe(1);
  });

  it('needs serials.view, not serials.manage', async () => {
    const ws = await workspace();
    expect((await list(ws.tokens.viewer!, ws.ids.serials.s!)).statusCode).toBe(200);
    expectProblem(await list(ws.tokens.outsider!, ws.ids.serials.s!), 403, 'FORBIDDEN');
  });
});

describe('DELETE /api/developer/serials/:serialId/activations/:activationId', () => {
  it('releases one seat: the count drops, the seat is free again, and that machine’s next validate answers MACHINE_NOT_ACTIVATED', async () => {
    const ws = await workspace(2);
    const a = await activate(ws, 'machine-a');
    await activate(ws, 'machine-b');
    expect((await runtime('activate', ws, 'machine-c')).json().code).toBe('MACHINE_LIMIT_EXCEEDED');

    const res = await release(ws.tokens.manager!, ws.ids.serials.s!, a);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      released: true,
      activation: { id: a, machine_id: 'machine-a', status: 'released', release_reason: 'support', released_at: expect.any(String) },
      serial: { id: ws.ids.serials.s, active_activation_count: 1, remaining_activations: 1, status: 'redeemed' },
    });
    expect((await runtime('validate', ws, 'machine-a')).json()).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });
    expect((await runtime('validate', ws, 'machine-b')).json()).toMatchObject({ valid: true, code: 'VALID' });
    expect((await runtime('activate', ws, 'machine-c')).statusCode).toBe(201);
  });

  it('writes the audit event with the acting account, the reason and the note', async () => {
    const ws = await workspace();
    const a = await activate(ws, 'machine-a');
    const res = await release(ws.tokens.manager!, ws.ids.serials.s!, a, { reason: '  ticket #4711: stolen laptop ', note: 'verified by phone' });
    expect(res.statusCode, res.body).toBe(200);

    const trail = (await ctx().app.inject({ method: 'GET', url: `${SERIALS}/${ws.ids.serials.s}/events`, headers: bearer(ws.owner) })).json();
    const event = trail.rows.find((e: { action: string }) => e.action === 'activation.released');
    expect(event).toMatchObject({
      actor_type: 'developer',
      actor_account_id: ws.ids.accounts.manager,
      reason: 'ticket #4711: stolen laptop',
      note: 'verified by phone',
      before_status: 'redeemed',
      after_status: 'redeemed',
      data: { activationId: a, machineId: 'machine-a' },
    });
  });

  it('is idempotent: a seat already released answers 200 released:false and writes nothing', async () => {
    const ws = await workspace();
    const a = await activate(ws, 'machine-a');
    await activate(ws, 'machine-b');
    expect((await release(ws.owner, ws.ids.serials.s!, a)).json().released).toBe(true);
    const again = await release(ws.owner, ws.ids.serials.s!, a);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ released: false, activation: { id: a, status: 'released' }, serial: { active_activation_count: 1 } });

    // Released by the plugin itself first: also 200 released:false.
    const b = (await list(ws.owner, ws.ids.serials.s!, '?status=active')).json().rows[0].id;
    await runtime('deactivate', ws, 'machine-b');
    expect((await release(ws.owner, ws.ids.serials.s!, b)).json()).toMatchObject({ released: false, serial: { active_activation_count: 0 } });

    const events = (await ctx().app.inject({ method: 'GET', url: `${SERIALS}/${ws.ids.serials.s}/events`, headers: bearer(ws.owner) })).json().rows;
    expect(events.filter((e: { action: string }) => e.action === 'activation.released')).toHaveLength(1);
    expect((await serialInDb(ctx, ws.ids.serials.s!)).active_activation_count).toBe(0);
  });

  it('answers 401 without a token or with a bad one', async () => {
    const ws = await workspace();
    const a = await activate(ws, 'machine-a');
    const none = await ctx().app.inject({ method: 'DELETE', url: `${SERIALS}/${ws.ids.serials.s}/activations/${a}`, payload: { reason: 'x' } });
    expectProblem(none, 401, 'UNAUTHENTICATED');
    expectProblem(await release('not-a-jwt', ws.ids.serials.s!, a), 401, 'UNAUTHENTICATED');
    expectProblem(await list('not-a-jwt', ws.ids.serials.s!), 401, 'UNAUTHENTICATED');
    expect((await runtime('validate', ws, 'machine-a')).json().code).toBe('VALID');
  });

  it('answers 404 for a serial of another workspace, and for an activation of another serial', async () => {
    const mine = await workspace();
    const other = await workspace();
    const foreign = await activate(other, 'their-machine');
    await activate(mine, 'my-machine');

    expectProblem(await release(mine.owner, other.ids.serials.s!, foreign), 404, 'NOT_FOUND');
    expectProblem(await list(mine.owner, other.ids.serials.s!), 404, 'NOT_FOUND');
    // My serial, their activation id: not a seat of this serial.
    expectProblem(await release(mine.owner, mine.ids.serials.s!, foreign), 404, 'NOT_FOUND');
    expectProblem(await release(mine.owner, mine.ids.serials.s!, 2147483647), 404, 'NOT_FOUND');
    expect((await runtime('validate', other, 'their-machine')).json().code).toBe('VALID');
  });

  it('answers 404 to a product-scoped member for a serial of an unassigned product, before checking the permission', async () => {
    const ws = await seedWorkspace(ctx(), {
      serials: [{ key: 's', product: 'p1' }, { key: 'elsewhere', product: 'p2' }],
      members: [MEMBERS.scoped, { key: 'scopedBare', permissions: [], products: ['p1'] }],
    });
    const res = await ctx().app.inject({
      method: 'POST',
      url: `${RUNTIME}/activate`,
      payload: { productAppId: ws.appIds.p2!, serial: ws.serialCodes.elsewhere!, machineId: 'm' },
    });
    const activationId = res.json().activation.id;
    for (const token of [ws.tokens.scoped!, ws.tokens.scopedBare!]) {
      expectProblem(await release(token, ws.ids.serials.elsewhere!, activationId), 404, 'NOT_FOUND');
      expectProblem(await list(token, ws.ids.serials.elsewhere!), 404, 'NOT_FOUND');
    }
    // Their own product's serial is theirs to manage.
    const own = await activate(ws, 'machine-a');
    expect((await release(ws.tokens.scoped!, ws.ids.serials.s!, own)).statusCode).toBe(200);
  });

  it('answers 403 to a member without serials.manage (and leaves the seat alone)', async () => {
    const ws = await workspace();
    const a = await activate(ws, 'machine-a');
    expectProblem(await release(ws.tokens.viewer!, ws.ids.serials.s!, a), 403, 'FORBIDDEN');
    expectProblem(await release(ws.tokens.outsider!, ws.ids.serials.s!, a), 403, 'FORBIDDEN');
    expect((await runtime('validate', ws, 'machine-a')).json().code).toBe('VALID');
  });

  it.each([
    { label: 'a non-integer serial id', serial: 'abc', activation: '1', payload: { reason: 'x' } },
    { label: 'a fractional activation id', serial: '1', activation: '1.5', payload: { reason: 'x' } },
    { label: 'a zero activation id', serial: '1', activation: '0', payload: { reason: 'x' } },
    { label: 'an id beyond int4', serial: '1', activation: '2147483648', payload: { reason: 'x' } },
    { label: 'no body', serial: '1', activation: '1', payload: null },
    { label: 'no reason', serial: '1', activation: '1', payload: { note: 'n' } },
    { label: 'a blank reason', serial: '1', activation: '1', payload: { reason: '   ' } },
    { label: 'a reason that is not text', serial: '1', activation: '1', payload: { reason: 5 } },
    { label: 'a reason over 500 characters', serial: '1', activation: '1', payload: { reason: 'x'.repeat(501) } },
  ])('answers 400 VALIDATION_FAILED for $label', async ({ serial, activation, payload }) => {
    const ws = await workspace();
    expectProblem(await release(ws.owner, serial, activation, payload), 400, 'VALIDATION_FAILED');
  });

  it('refuses an unknown query parameter and a bad status filter on the list', async () => {
    const ws = await workspace();
    expectProblem(await list(ws.owner, ws.ids.serials.s!, '?status=gone'), 400, 'VALIDATION_FAILED');
    expectProblem(await list(ws.owner, ws.ids.serials.s!, '?machine=x'), 400, 'VALIDATION_FAILED');
    const bad = await ctx().app.inject({ method: 'GET', url: `${SERIALS}/abc/activations`, headers: bearer(ws.owner) });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
  });
});

// Real parallelism needs PostgreSQL (PGlite serialises transactions).
describe.runIf(onPostgres)('seat release under concurrency (PostgreSQL)', () => {
  it('never lets the seat count go negative or drift when the same and different seats are released in parallel', async () => {
    const ws = await workspace(5);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await activate(ws, `machine-${i}`));
    // Each seat released by four callers at once, plus the plugins releasing two of them themselves.
    const results = await Promise.all([
      ...ids.flatMap((id) => Array.from({ length: 4 }, (_, i) => release(i % 2 ? ws.owner : ws.tokens.manager!, ws.ids.serials.s!, id))),
      runtime('deactivate', ws, 'machine-0'),
      runtime('deactivate', ws, 'machine-3'),
    ]);
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const releases = results.slice(0, 20).map((r) => r.json() as { released: boolean; serial: { active_activation_count: number } });
    for (const r of releases) expect(r.serial.active_activation_count).toBeGreaterThanOrEqual(0);
    const runtimeReleased = results.slice(20).filter((r) => r.json().released).length;
    expect(releases.filter((r) => r.released).length + runtimeReleased).toBe(5);

    const serial = await serialInDb(ctx, ws.ids.serials.s!);
    expect(serial.active_activation_count).toBe(0);
    const events = (await ctx().app.inject({ method: 'GET', url: `${SERIALS}/${ws.ids.serials.s}/events?limit=100`, headers: bearer(ws.owner) })).json().rows;
    expect(events.filter((e: { action: string }) => e.action === 'activation.released')).toHaveLength(releases.filter((r) => r.released).length);
  });

  it('keeps the count exact when releases race new activations for the freed seats', async () => {
    const ws = await workspace(3);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await activate(ws, `old-${i}`));
    const results = await Promise.all([
      ...ids.map((id) => release(ws.owner, ws.ids.serials.s!, id)),
      ...Array.from({ length: 6 }, (_, i) => runtime('activate', ws, `new-${i}`)),
    ]);
    for (const r of results.slice(0, 3)) expect(r.statusCode).toBe(200);
    const activated = results.slice(3).filter((r) => r.statusCode === 201).length;
    for (const r of results.slice(3)) expect([201, 422]).toContain(r.statusCode);
    const active = await ctx()
      .database.db.selectFrom('serial_activations')
      .where('serial_id', '=', ws.ids.serials.s!)
      .where('status', '=', 'active')
      .select('id')
      .execute();
    const serial = await serialInDb(ctx, ws.ids.serials.s!);
    expect(serial.active_activation_count).toBe(active.length);
    expect(active.length).toBe(activated);
    expect(active.length).toBeLessThanOrEqual(3);
  });
});
