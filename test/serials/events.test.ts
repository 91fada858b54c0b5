import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { addActivations, client, expectProblem, MEMBERS, SERIALS } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

interface SerialEvent {
  id: number;
  action: string;
  actor_type: string;
  actor_account_id: number | null;
  reason: string | null;
  note: string | null;
  before_status: string | null;
  after_status: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

const events = async (token: string, serialId: number, query = '') => {
  const res = await api.get(token, `${SERIALS}/${serialId}/events${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { rows: SerialEvent[]; total: number; page: number; pageSize: number };
};

describe('GET /api/developer/serials/:serialId/events', () => {
  it('records every action with actor, reason, note and the status before and after, oldest first', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [MEMBERS.manager],
      productSettings: { maxActivations: 3 },
      serials: [{ key: 's', product: 'p1' }],
    });
    const id = ws.ids.serials.s!;
    await addActivations(ctx, ws.workspaceId, id, 2);
    const steps = [
      { token: ws.owner, actor: ws.ids.accounts.owner, action: 'activate', body: { reason: 'sold offline', note: 'invoice 17' } },
      { token: ws.tokens.manager!, actor: ws.ids.accounts.manager, action: 'suspend', body: { reason: 'chargeback' } },
      { token: ws.owner, actor: ws.ids.accounts.owner, action: 'deactivate', body: { note: 'customer asked' } },
      { token: ws.owner, actor: ws.ids.accounts.owner, action: 'reactivate', body: undefined },
      { token: ws.tokens.manager!, actor: ws.ids.accounts.manager, action: 'revoke', body: { reason: 'fraud', note: 'confirmed' } },
    ];
    for (const s of steps) expect((await api.act(s.token, id, s.action, s.body)).statusCode).toBe(200);
    // A refused action leaves no trace.
    expect((await api.act(ws.owner, id, 'reactivate')).statusCode).toBe(409);

    const trail = await events(ws.owner, id);
    expect(trail.total).toBe(5);
    expect(trail.rows.map((e) => [e.action, e.before_status, e.after_status])).toEqual([
      ['activate', 'available', 'redeemed'],
      ['suspend', 'redeemed', 'suspended'],
      ['deactivate', 'suspended', 'deactivated'],
      ['reactivate', 'deactivated', 'redeemed'],
      ['revoke', 'redeemed', 'revoked'],
    ]);
    trail.rows.forEach((event, i) => {
      const step = steps[i]!;
      expect(event).toMatchObject({
        actor_type: 'developer',
        actor_account_id: step.actor,
        reason: step.body?.reason ?? null,
        note: step.body?.note ?? null,
      });
      expect(Date.parse(event.created_at)).not.toBeNaN();
    });
    expect(trail.rows.map((e) => e.data.deactivatedActivations)).toEqual([0, 0, 2, 0, 0]);
    expect(trail.rows.map((e) => e.id)).toEqual([...trail.rows.map((e) => e.id)].sort((a, b) => a - b));
  });

  it('records portal visibility changes without a status change', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c' }], serials: [{ key: 's', product: 'p1', customer: 'c', order: 'o' }] });
    const id = ws.ids.serials.s!;
    await api.post(ws.owner, `${SERIALS}/${id}/customer-portal-order/hide`, { reason: 'duplicate order' });
    await api.post(ws.owner, `${SERIALS}/${id}/customer-portal-order/show`);
    const trail = await events(ws.owner, id);
    expect(trail.rows).toMatchObject([
      { action: 'customer_portal_order.hidden', reason: 'duplicate order', before_status: 'redeemed', after_status: 'redeemed', data: { orderId: ws.ids.orders.o } },
      { action: 'customer_portal_order.shown', reason: null, before_status: 'redeemed', after_status: 'redeemed', data: { orderId: ws.ids.orders.o } },
    ]);
  });

  it('pages the trail', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const id = ws.ids.serials.s!;
    for (const action of ['suspend', 'unsuspend', 'suspend', 'unsuspend', 'suspend']) await api.act(ws.owner, id, action);
    const first = await events(ws.owner, id, '?limit=2');
    const last = await events(ws.owner, id, '?limit=2&page=3');
    expect(first).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    expect(first.rows.map((e) => e.action)).toEqual(['suspend', 'unsuspend']);
    expect(last.rows.map((e) => e.action)).toEqual(['suspend']);
  });

  it('keeps each serial’s trail to itself', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p1' }] });
    await api.act(ws.owner, ws.ids.serials.a!, 'revoke');
    expect((await events(ws.owner, ws.ids.serials.b!)).total).toBe(0);
  });

  it('answers 404 for a serial of another workspace or an unassigned product, before checking the permission', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [MEMBERS.scoped, { key: 'blind', permissions: [], products: ['p1'] }],
      serials: [{ key: 'mine', product: 'p1' }, { key: 'theirs', product: 'p2' }],
    });
    const other = await seedWorkspace(ctx(), { members: [MEMBERS.outsider] });
    await api.act(ws.owner, ws.ids.serials.theirs!, 'suspend');
    const url = (id: number) => `${SERIALS}/${id}/events`;
    expectProblem(await api.get(other.owner, url(ws.ids.serials.theirs!)), 404, 'NOT_FOUND');
    expectProblem(await api.get(other.tokens.outsider!, url(ws.ids.serials.theirs!)), 404, 'NOT_FOUND');
    expectProblem(await api.get(ws.tokens.scoped!, url(ws.ids.serials.theirs!)), 404, 'NOT_FOUND');
    expectProblem(await api.get(ws.tokens.blind!, url(ws.ids.serials.theirs!)), 404, 'NOT_FOUND');
    expectProblem(await api.get(ws.tokens.blind!, url(ws.ids.serials.mine!)), 403, 'FORBIDDEN');
    expect((await events(ws.tokens.scoped!, ws.ids.serials.mine!)).total).toBe(0);
    expectProblem(await api.get(ws.owner, url(2_147_483_647)), 404, 'NOT_FOUND');
  });

  it('needs serials.view, not serials.manage', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.viewer, MEMBERS.manager], serials: [{ key: 's', product: 'p1' }] });
    expect((await events(ws.tokens.viewer!, ws.ids.serials.s!)).total).toBe(0);
    expectProblem(await api.get(ws.tokens.manager!, `${SERIALS}/${ws.ids.serials.s}/events`), 403, 'FORBIDDEN');
  });

  it.each([['limit=0'], ['limit=501'], ['page=0'], ['status=revoked'], ['page=x']])('rejects %s with 400', async (query) => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    expectProblem(await api.get(ws.owner, `${SERIALS}/${ws.ids.serials.s}/events?${query}`), 400, 'VALIDATION_FAILED');
  });
});
