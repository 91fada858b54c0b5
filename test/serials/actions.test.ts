import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { activationStatuses, addActivations, client, expectProblem, MEMBERS, SERIALS, serialInDb } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const ACTIONS = ['activate', 'reactivate', 'deactivate', 'suspend', 'unsuspend', 'revoke'] as const;
const STATES = ['available', 'redeemed', 'suspended', 'deactivated', 'revoked'] as const;
type Action = (typeof ACTIONS)[number];
type State = (typeof STATES)[number];

/**
 * The lifecycle of the issue, restated independently of the implementation:
 * the state each action leads to from each state, for never-sold inventory
 * (so "back in use" means available), or undefined when it is refused.
 */
const EXPECTED: Record<Action, Partial<Record<State, State>>> = {
  activate: { available: 'redeemed' },
  suspend: { available: 'suspended', redeemed: 'suspended' },
  unsuspend: { suspended: 'available' },
  deactivate: { available: 'deactivated', redeemed: 'deactivated', suspended: 'deactivated' },
  reactivate: { deactivated: 'available' },
  revoke: { available: 'revoked', redeemed: 'revoked', suspended: 'revoked', deactivated: 'revoked' },
};
const allowedFrom = (state: State) => ACTIONS.filter((a) => EXPECTED[a][state] !== undefined).sort();

/** The action that takes fresh inventory to each state. */
const REACH: Record<State, Action | null> = { available: null, redeemed: 'activate', suspended: 'suspend', deactivated: 'deactivate', revoked: 'revoke' };

async function serialIn(state: State, options: { customer?: boolean; devices?: number } = {}) {
  const ws = await seedWorkspace(ctx(), {
    members: [MEMBERS.viewer],
    productSettings: { maxActivations: 3 },
    customers: options.customer ? [{ key: 'c' }] : [],
    serials: [{ key: 's', product: 'p1', ...(options.customer ? { customer: 'c' } : {}) }],
  });
  const id = ws.ids.serials.s!;
  if (options.devices) await addActivations(ctx, ws.workspaceId, id, options.devices);
  const step = options.customer && state === 'redeemed' ? null : REACH[state];
  if (step) expect((await api.act(ws.owner, id, step)).statusCode).toBe(200);
  return { ws, id };
}

const current = async (token: string, id: number) => (await api.list(token)).rows.find((r) => r.id === id)!;
const eventCount = async (token: string, id: number) => (await api.get(token, `${SERIALS}/${id}/events`)).json().total as number;

describe('serial lifecycle actions', () => {
  const cases = ACTIONS.flatMap((action) => STATES.map((state) => ({ action, state, to: EXPECTED[action][state] })));

  it.each(cases.filter((c) => c.to))('$action takes a serial from $state to $to', async ({ action, state, to }) => {
    const { ws, id } = await serialIn(state);
    const res = await api.act(ws.owner, id, action, { reason: 'support ticket', note: 'n' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ serial: { id, status: to, revoked: to === 'revoked' }, deactivatedActivations: 0 });
    expect((await current(ws.owner, id)).status).toBe(to);
  });

  it.each(cases.filter((c) => !c.to))('refuses $action from $state with 409 and the allowed actions', async ({ action, state }) => {
    const { ws, id } = await serialIn(state);
    const before = await eventCount(ws.owner, id);
    const problem = expectProblem(await api.act(ws.owner, id, action), 409, 'INVALID_SERIAL_TRANSITION');
    expect(problem.currentStatus).toBe(state);
    expect([...(problem.allowedActions as string[])].sort()).toEqual(allowedFrom(state));
    expect((await current(ws.owner, id)).status).toBe(state);
    expect(await eventCount(ws.owner, id)).toBe(before);
  });

  it('never lets a revoked serial out of revoked', async () => {
    const { ws, id } = await serialIn('revoked');
    for (const action of ACTIONS) {
      const problem = expectProblem(await api.act(ws.owner, id, action), 409, 'INVALID_SERIAL_TRANSITION');
      expect(problem).toMatchObject({ currentStatus: 'revoked', allowedActions: [] });
    }
    expect(await serialInDb(ctx, id)).toMatchObject({ status: 'revoked' });
  });

  describe('returning to use', () => {
    it.each([
      { label: 'a serial assigned to a customer', customer: true },
      { label: 'an activated serial', customer: false },
    ])('brings $label back as redeemed after suspend or deactivate', async ({ customer }) => {
      for (const [leave, back] of [['suspend', 'unsuspend'], ['deactivate', 'reactivate']] as const) {
        const { ws, id } = await serialIn('redeemed', { customer });
        const redeemedAt = (await serialInDb(ctx, id)).redeemed_at;
        expect(redeemedAt).not.toBeNull();
        expect((await api.act(ws.owner, id, leave)).statusCode).toBe(200);
        const res = await api.act(ws.owner, id, back);
        expect(res.json().serial).toMatchObject({ status: 'redeemed', redeemed: true });
        // The first redemption is history; returning to use does not rewrite it.
        expect((await serialInDb(ctx, id)).redeemed_at).toEqual(redeemedAt);
      }
    });

    it('brings never-used inventory back as available', async () => {
      for (const [leave, back] of [['suspend', 'unsuspend'], ['deactivate', 'reactivate']] as const) {
        const { ws, id } = await serialIn('available');
        await api.act(ws.owner, id, leave);
        const res = await api.act(ws.owner, id, back);
        expect(res.json().serial).toMatchObject({ status: 'available', redeemed: false, customer_id: null });
      }
    });

    it('marks a serial redeemed when it is activated', async () => {
      const { ws, id } = await serialIn('available');
      const res = await api.act(ws.owner, id, 'activate');
      expect(res.json().serial).toMatchObject({ status: 'redeemed', redeemed: true, customer_id: null });
      expect((await api.list(ws.owner, '?status=redeemed')).rows.map((r) => r.id)).toEqual([id]);
    });
  });

  describe('device activations', () => {
    it.each([
      { action: 'deactivate' as const, from: 'redeemed' as const },
      { action: 'deactivate' as const, from: 'suspended' as const },
      { action: 'revoke' as const, from: 'redeemed' as const },
      { action: 'revoke' as const, from: 'suspended' as const },
    ])('$action releases the devices of a $from serial and reports how many', async ({ action, from }) => {
      const { ws, id } = await serialIn(from, { customer: true, devices: 2 });
      const res = await api.act(ws.owner, id, action);
      expect(res.statusCode).toBe(200);
      expect(res.json().deactivatedActivations).toBe(2);
      expect(res.json().serial).toMatchObject({ active_activation_count: 0, remaining_activations: 0 });
      const devices = await activationStatuses(ctx, id);
      expect(devices).toHaveLength(2);
      for (const d of devices) {
        expect(d).toMatchObject({ status: 'released', release_reason: action });
        expect(d.released_at).toBeInstanceOf(Date);
      }
    });

    it('counts only devices that are still active, and only this serial’s', async () => {
      const ws = await seedWorkspace(ctx(), {
        productSettings: { maxActivations: 5 },
        serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p1' }],
      });
      const [a, b] = [ws.ids.serials.a!, ws.ids.serials.b!];
      await addActivations(ctx, ws.workspaceId, a, 3);
      await addActivations(ctx, ws.workspaceId, b, 2);
      expect((await api.act(ws.owner, a, 'deactivate')).json().deactivatedActivations).toBe(3);
      await api.act(ws.owner, a, 'reactivate');
      expect((await api.act(ws.owner, a, 'revoke')).json().deactivatedActivations).toBe(0);
      expect((await activationStatuses(ctx, b)).map((d) => d.status)).toEqual(['active', 'active']);
      expect(await current(ws.owner, b)).toMatchObject({ active_activation_count: 2, remaining_activations: 3 });
    });

    it('keeps devices while suspended, with no seats to give out until unsuspended', async () => {
      const { ws, id } = await serialIn('redeemed', { customer: true, devices: 2 });
      const suspended = await api.act(ws.owner, id, 'suspend');
      expect(suspended.json()).toMatchObject({
        deactivatedActivations: 0,
        serial: { status: 'suspended', active_activation_count: 2, remaining_activations: 0 },
      });
      expect((await activationStatuses(ctx, id)).map((d) => d.status)).toEqual(['active', 'active']);
      const back = await api.act(ws.owner, id, 'unsuspend');
      expect(back.json()).toMatchObject({ deactivatedActivations: 0, serial: { status: 'redeemed', active_activation_count: 2, remaining_activations: 1 } });
    });

    it('keeps runtime devices through suspend while validation fails, and releases them on deactivate', async () => {
      const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
      const [id, serial, productAppId] = [ws.ids.serials.s!, ws.serialCodes.s!, ws.appIds.p1!];
      const runtime = (path: string, machineId: string) =>
        ctx().app.inject({ method: 'POST', url: `/api/licensing/v1/${path}`, payload: { productAppId, serial, machineId } });
      expect((await runtime('activate', 'studio')).statusCode).toBe(201);
      expect((await runtime('activate', 'laptop')).statusCode).toBe(201);

      await api.act(ws.owner, id, 'suspend');
      expect((await runtime('validate', 'studio')).json()).toMatchObject({ valid: false, code: 'SUSPENDED' });
      await api.act(ws.owner, id, 'unsuspend');
      expect((await runtime('validate', 'studio')).json()).toMatchObject({ valid: true });

      const deactivated = await api.act(ws.owner, id, 'deactivate');
      expect(deactivated.json()).toMatchObject({ deactivatedActivations: 2, serial: { active_activation_count: 0 } });
      expect((await runtime('validate', 'studio')).json().valid).toBe(false);
      await api.act(ws.owner, id, 'reactivate');
      expect((await runtime('validate', 'laptop')).json()).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });
    });

    it('has nothing to restore on reactivate', async () => {
      const { ws, id } = await serialIn('redeemed', { customer: true, devices: 1 });
      await api.act(ws.owner, id, 'deactivate');
      const res = await api.act(ws.owner, id, 'reactivate');
      expect(res.json()).toMatchObject({ deactivatedActivations: 0, serial: { active_activation_count: 0, remaining_activations: 3 } });
      expect((await activationStatuses(ctx, id)).map((d) => d.status)).toEqual(['released']);
    });
  });

  describe('access', () => {
    it.each(ACTIONS)('answers 404 to %s a serial of another workspace, even without the permission, and changes nothing', async (action) => {
      const { ws, id } = await serialIn('available');
      const intruder = await seedWorkspace(ctx(), { members: [MEMBERS.viewer] });
      expectProblem(await api.act(intruder.owner, id, action), 404, 'NOT_FOUND');
      expectProblem(await api.act(intruder.tokens.viewer!, id, action), 404, 'NOT_FOUND');
      expect((await current(ws.owner, id)).status).toBe('available');
    });

    it('answers 404 to a product-scoped member for a serial of an unassigned product', async () => {
      const ws = await seedWorkspace(ctx(), {
        members: [MEMBERS.scoped, { key: 'scopedViewer', permissions: ['serials.view'], products: ['p1'] }],
        serials: [{ key: 'mine', product: 'p1' }, { key: 'theirs', product: 'p2' }],
      });
      expectProblem(await api.act(ws.tokens.scoped!, ws.ids.serials.theirs!, 'suspend'), 404, 'NOT_FOUND');
      expectProblem(await api.act(ws.tokens.scopedViewer!, ws.ids.serials.theirs!, 'suspend'), 404, 'NOT_FOUND');
      expect((await api.act(ws.tokens.scoped!, ws.ids.serials.mine!, 'suspend')).statusCode).toBe(200);
      expect((await current(ws.owner, ws.ids.serials.theirs!)).status).toBe('available');
    });

    it('answers 404 for a serial that does not exist', async () => {
      const ws = await seedWorkspace(ctx());
      expectProblem(await api.act(ws.owner, 2_147_483_647, 'revoke'), 404, 'NOT_FOUND');
    });

    it('answers 403 without serials.manage for a serial the caller can see', async () => {
      const { ws, id } = await serialIn('available');
      for (const action of ACTIONS) expectProblem(await api.act(ws.tokens.viewer!, id, action), 403, 'FORBIDDEN');
      expect((await current(ws.owner, id)).status).toBe('available');
    });
  });

  describe('input', () => {
    it('takes an optional body with reason and note', async () => {
      const { ws, id } = await serialIn('available');
      expect((await api.act(ws.owner, id, 'suspend')).statusCode).toBe(200);
      expect((await api.act(ws.owner, id, 'unsuspend', {})).statusCode).toBe(200);
      expect((await api.act(ws.owner, id, 'suspend', { reason: 'r', note: 'n' })).statusCode).toBe(200);
    });

    it.each([
      ['a reason over 500 characters', { reason: 'r'.repeat(501) }],
      ['a note over 2000 characters', { note: 'n'.repeat(2001) }],
      ['a reason that is not text', { reason: 42 }],
      ['a body that is an array', ['revoke']],
    ])('rejects %s with 400 and changes nothing', async (_label, body) => {
      const { ws, id } = await serialIn('available');
      expectProblem(await api.act(ws.owner, id, 'revoke', body), 400, 'VALIDATION_FAILED');
      expect((await current(ws.owner, id)).status).toBe('available');
    });

    it.each(['abc', '0', '-1', '1.5', '2147483648'])('rejects serial id %s with 400', async (serialId) => {
      const ws = await seedWorkspace(ctx());
      expectProblem(await api.post(ws.owner, `${SERIALS}/${serialId}/revoke`), 400, 'VALIDATION_FAILED');
    });

    it('answers 404 ROUTE_NOT_FOUND for an action that does not exist', async () => {
      const { ws, id } = await serialIn('available');
      expectProblem(await api.act(ws.owner, id, 'delete'), 404, 'ROUTE_NOT_FOUND');
    });
  });
});
