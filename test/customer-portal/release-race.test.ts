import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { buyerToken, PORTAL } from './portal-helpers.js';

const ctx = useTestApp();

// Real parallelism needs PostgreSQL (PGlite runs one transaction at a time); the same assertions
// hold on both, so the test runs on both and truly races on PostgreSQL.
describe('racing device releases of one serial', () => {
  it('lets exactly as many releases through as the 30-day limit allows, however many race', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 12 }, customers: [{ key: 'me' }], serials: [{ key: 's', product: 'p1', customer: 'me' }] });
    const me = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);
    const seats: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const res = await ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/activate', payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: `race-${i}` } });
      expect(res.statusCode, res.body).toBe(201);
      seats.push(res.json().activation.id);
    }
    const results = await Promise.all(
      seats.map((activationId) => ctx().app.inject({ method: 'DELETE', url: `${PORTAL}/licenses/${ws.ids.serials.s}/activations/${activationId}`, headers: bearer(me) })),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    for (const refused of results.filter((r) => r.statusCode === 429)) expect(refused.json().code).toBe('DEVICE_RELEASE_LIMIT');

    const serial = await ctx().database.db.selectFrom('serials').where('id', '=', ws.ids.serials.s!).select('active_activation_count').executeTakeFirstOrThrow();
    const active = await ctx().database.db.selectFrom('serial_activations').where('serial_id', '=', ws.ids.serials.s!).where('status', '=', 'active').select('id').execute();
    const events = await ctx()
      .database.db.selectFrom('serial_events')
      .where('serial_id', '=', ws.ids.serials.s!)
      .where('action', '=', 'activation.released')
      .where('actor_type', '=', 'customer')
      .select('id')
      .execute();
    expect(active).toHaveLength(7);
    expect(serial.active_activation_count).toBe(7);
    expect(events).toHaveLength(3);
  });
});
