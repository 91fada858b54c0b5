import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bearer, onPostgres, seedWorkspace, unique, useTestApp, type SeededWorkspace } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const ctx = useTestApp();

const generate = (ws: SeededWorkspace, key: string | undefined, body: Record<string, unknown>, token = ws.owner) =>
  ctx().app.inject({
    method: 'POST',
    url: '/api/developer/serials/generate',
    headers: { ...bearer(token), ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: { productId: ws.ids.products.p1, ...body },
  });

const serialCount = async (ws: SeededWorkspace) =>
  (await sql<{ n: number }>`select count(*)::int as n from serials where workspace_id = ${ws.workspaceId}`.execute(ctx().database.db)).rows[0]!.n;

describe('Idempotency-Key on mutating routes', () => {
  it('replays the first answer for the same request and creates nothing twice', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `gen-${unique()}`;
    const first = await generate(ws, key, { quantity: 3 });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await generate(ws, key, { quantity: 3 });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.json()).toEqual(first.json());
    expect(await serialCount(ws)).toBe(3);
    // Without a key, the same body is a new request.
    expect((await generate(ws, undefined, { quantity: 3 })).statusCode).toBe(201);
    expect(await serialCount(ws)).toBe(6);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body or another URL', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `reuse-${unique()}`;
    expect((await generate(ws, key, { quantity: 1 })).statusCode).toBe(201);
    const otherBody = await generate(ws, key, { quantity: 2 });
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', requestId: expect.any(String) });
    const otherUrl = await ctx().app.inject({
      method: 'POST',
      url: `/api/developer/serials/${999999}/revoke`,
      headers: { ...bearer(ws.owner), 'idempotency-key': key },
      payload: { productId: ws.ids.products.p1, quantity: 1 },
    });
    expect(otherUrl.statusCode).toBe(422);
    expect(await serialCount(ws)).toBe(1);
  });

  it('keeps keys apart per caller: another member or workspace may use the same key', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'mate', permissions: ['serials.manage', 'serials.view'], products: 'all' }] });
    const other = await seedWorkspace(ctx());
    const key = `shared-${unique()}`;
    expect((await generate(ws, key, { quantity: 1 })).statusCode).toBe(201);
    const mate = await generate(ws, key, { quantity: 1 }, ws.tokens.mate!);
    expect(mate.statusCode).toBe(201);
    expect(mate.headers['idempotent-replayed']).toBeUndefined();
    const foreign = await generate(other, key, { quantity: 1 });
    expect(foreign.statusCode).toBe(201);
    expect(foreign.headers['idempotent-replayed']).toBeUndefined();
    expect(await serialCount(ws)).toBe(2);
  });

  it('replays a refusal of the request, keeps nothing for a body that fails the schema, and runs again once the key has expired', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `bad-${unique()}`;
    const past = { quantity: 1, expiresAt: '2020-01-01T00:00:00Z' };
    const bad = await generate(ws, key, past);
    expect(bad.json().code).toBe('INVALID_WINDOW');
    const replay = await generate(ws, key, past);
    expect(replay.statusCode).toBe(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // A body the schema refuses never reaches the key: the corrected request may use it.
    const schema = `schema-${unique()}`;
    expect((await generate(ws, schema, { quantity: 0 })).json().code).toBe('VALIDATION_FAILED');
    expect((await generate(ws, schema, { quantity: 1 })).statusCode).toBe(201);

    const good = `expire-${unique()}`;
    expect((await generate(ws, good, { quantity: 1 })).statusCode).toBe(201);
    await sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${good}`.execute(ctx().database.db);
    const fresh = await generate(ws, good, { quantity: 1 });
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(await serialCount(ws)).toBe(3);
  });

  it('takes over a key whose first request never answered (its process died)', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `dead-${unique()}`;
    expect((await generate(ws, key, { quantity: 1 })).statusCode).toBe(201);
    await sql`update idempotency_keys set state = 'running', locked_until = now() - interval '1 second', status = null, body = null where key = ${key}`.execute(ctx().database.db);
    expect((await generate(ws, key, { quantity: 1 })).statusCode).toBe(201);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while the first request still runs', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `busy-${unique()}`;
    expect((await generate(ws, key, { quantity: 1 })).statusCode).toBe(201);
    await sql`update idempotency_keys set state = 'running', locked_until = now() + interval '1 minute' where key = ${key}`.execute(ctx().database.db);
    const busy = await generate(ws, key, { quantity: 1 });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(busy.headers['retry-after']).toBe('1');
  });

  it('fingerprints multipart bodies too: an import sent twice imports once', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `import-${unique()}`;
    const send = (csv: string) => {
      const form = multipart([{ name: 'file', value: csv, filename: 'c.csv' }]);
      return ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...form.headers, 'idempotency-key': key }, payload: form.payload });
    };
    const first = await send('email\none@x.test\n');
    expect(first.statusCode).toBe(201);
    const again = await send('email\none@x.test\n');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await send('email\ntwo@x.test\n')).statusCode).toBe(422);
  });

  it('refuses a malformed key with 400, and ignores keys on reads', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await generate(ws, 'has space', { quantity: 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('INVALID_IDEMPOTENCY_KEY');
    const read = await ctx().app.inject({ method: 'GET', url: '/api/developer/serials', headers: { ...bearer(ws.owner), 'idempotency-key': 'x' } });
    expect(read.statusCode).toBe(200);
  });

  it.runIf(onPostgres)('runs one of ten parallel identical requests; the others wait their turn or replay (PostgreSQL)', async () => {
    const ws = await seedWorkspace(ctx());
    const key = `race-${unique()}`;
    const results = await Promise.all(Array.from({ length: 10 }, () => generate(ws, key, { quantity: 5 })));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const executed = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(executed).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(await serialCount(ws)).toBe(5);
  });
});
