import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { onPostgres, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { activationStatuses, addActivations, client, SERIALS, type SerialRow } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

// Real parallelism needs PostgreSQL (PGlite serialises transactions); the same
// assertions hold on both.
describe(`serials under concurrency (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('gives parallel generations all-distinct codes and an exact total', async () => {
    const ws = await seedWorkspace(ctx());
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.generate(ws.owner, { productId: ws.ids.products[`p${(i % 3) + 1}`], quantity: 250 })),
    );
    for (const r of results) expect(r.statusCode, r.body.slice(0, 300)).toBe(201);
    const codes = results.flatMap((r) => r.json().serials.map((s: SerialRow) => s.serial));
    expect(codes).toHaveLength(2_000);
    expect(new Set(codes).size).toBe(2_000);

    expect((await api.list(ws.owner)).total).toBe(2_000);
    const db = ctx().database.db;
    const stored = await db.selectFrom('serials').where('workspace_id', '=', ws.workspaceId).select(sql<number>`count(distinct code_key)::int`.as('n')).executeTakeFirstOrThrow();
    expect(stored.n).toBe(2_000);
    const generatedEvents = await db
      .selectFrom('serial_events')
      .where('workspace_id', '=', ws.workspaceId)
      .where('action', '=', 'generated')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(generatedEvents.n).toBe(2_000);
  });

  it('lets exactly one of ten parallel revokes win and releases the devices once', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 3 }, serials: [{ key: 's', product: 'p1' }] });
    const id = ws.ids.serials.s!;
    await addActivations(ctx, ws.workspaceId, id, 3);

    const results = await Promise.all(Array.from({ length: 10 }, () => api.act(ws.owner, id, 'revoke', { reason: 'race' })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((x) => x.statusCode === 409)) {
      expect(r.json()).toMatchObject({ code: 'INVALID_SERIAL_TRANSITION', currentStatus: 'revoked', allowedActions: [] });
    }
    expect(results.find((r) => r.statusCode === 200)!.json().deactivatedActivations).toBe(3);

    const trail = (await api.get(ws.owner, `${SERIALS}/${id}/events`)).json();
    expect(trail.rows.map((e: { action: string }) => e.action)).toEqual(['revoke']);
    expect((await activationStatuses(ctx, id)).every((d) => d.status === 'released')).toBe(true);
  });

  it('never releases a device twice when deactivate and revoke race', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 4 }, serials: [{ key: 's', product: 'p1' }] });
    const id = ws.ids.serials.s!;
    await addActivations(ctx, ws.workspaceId, id, 4);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => api.act(ws.owner, id, i % 2 ? 'revoke' : 'deactivate')));
    for (const r of results) expect([200, 409]).toContain(r.statusCode);
    const released = results.filter((r) => r.statusCode === 200).reduce((sum, r) => sum + r.json().deactivatedActivations, 0);
    expect(released).toBe(4);
    const serial = await ctx().database.db.selectFrom('serials').where('id', '=', id).select(['status', 'active_activation_count']).executeTakeFirstOrThrow();
    expect(serial).toEqual({ status: 'revoked', active_activation_count: 0 });
  });

  it('keeps the audit trail a consistent chain under a storm of mixed actions', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const id = ws.ids.serials.s!;
    const mix = ['suspend', 'unsuspend', 'deactivate', 'reactivate', 'activate', 'suspend', 'unsuspend', 'deactivate', 'reactivate'];
    const results = await Promise.all(Array.from({ length: 27 }, (_, i) => api.act(ws.owner, id, mix[i % mix.length]!)));
    for (const r of results) expect([200, 409], r.body).toContain(r.statusCode);

    const trail = (await api.get(ws.owner, `${SERIALS}/${id}/events?limit=100`)).json().rows as Array<{ action: string; before_status: string; after_status: string }>;
    expect(trail).toHaveLength(results.filter((r) => r.statusCode === 200).length);
    let status = 'available';
    for (const event of trail) {
      expect(event.before_status).toBe(status);
      status = event.after_status;
    }
    expect((await api.list(ws.owner)).rows[0]!.status).toBe(status);
  });

  it('imports overlapping files of one workspace in parallel without duplicates or false conflicts', async () => {
    const ws = await seedWorkspace(ctx());
    const tag = unique().toUpperCase();
    const codes = Array.from({ length: 40 }, (_, i) => `RACE-${tag}-${String(i).padStart(3, '0')}`);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        api.importJson(ws.owner, {
          serials: codes.filter((_, i) => (i + k) % 3 !== 0).map((serialCode) => ({ serialCode, productId: ws.ids.products.p1 })),
        }),
      ),
    );
    // Every code ends up in this workspace, so every row of every import is accepted.
    for (const r of results) expect(r.statusCode, r.body.slice(0, 400)).toBe(201);
    const inserted = results.reduce((sum, r) => sum + (r.json().insertedCount ?? 0), 0);
    expect(inserted).toBe(codes.length);
    expect((await api.list(ws.owner)).total).toBe(codes.length);
  });

  it('gives a contested code to exactly one workspace and writes nothing for the loser’s row', async () => {
    const [a, b] = [await seedWorkspace(ctx()), await seedWorkspace(ctx())];
    const contested = `CONTESTED-${unique().toUpperCase()}`;
    const email = `contested-${unique()}@x.test`;
    const [ra, rb] = await Promise.all(
      [a, b].map((ws) =>
        api.importJson(ws.owner, {
          serials: [
            { serialCode: `OWN-${unique().toUpperCase()}`, productId: ws.ids.products.p1 },
            { serialCode: contested, productId: ws.ids.products.p1, email },
          ],
        }),
      ),
    );
    expect([ra!.statusCode, rb!.statusCode].sort()).toEqual([201, 207]);
    const [winner, loser, lost] = ra!.statusCode === 201 ? [a, b, rb!] : [b, a, ra!];
    expect(lost.json()).toMatchObject({ importedCount: 1, insertedCount: 1, errors: [expect.objectContaining({ row: 2, code: 'SERIAL_CODE_TAKEN' })] });

    expect((await api.list(winner.owner, `?search=${contested}`)).total).toBe(1);
    expect((await api.list(loser.owner, `?search=${contested}`)).total).toBe(0);
    expect((await api.get(winner.owner, '/api/developer/customers')).json().total).toBe(1);
    // The losing row wrote nothing: no customer relationship without its serial.
    expect((await api.get(loser.owner, '/api/developer/customers')).json().total).toBe(0);
  });
});
