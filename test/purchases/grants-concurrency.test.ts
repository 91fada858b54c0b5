import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { accountIdOf, bearer, onPostgres, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

const GRANT = '/api/developer/purchases/manual-grant';
const grant = (token: string, body: Record<string, unknown>) => ctx().app.inject({ method: 'POST', url: GRANT, headers: bearer(token), payload: body });

async function rowCounts(workspaceId: number) {
  const result = await sql<Record<string, number>>`
    select
      (select count(*)::int from orders where workspace_id = ${workspaceId}) as orders,
      (select count(*)::int from order_items where workspace_id = ${workspaceId}) as order_items,
      (select count(*)::int from entitlements where workspace_id = ${workspaceId}) as entitlements,
      (select count(*)::int from serials where workspace_id = ${workspaceId}) as serials,
      (select count(*)::int from manual_grants where workspace_id = ${workspaceId}) as manual_grants,
      (select count(*)::int from developer_customers where workspace_id = ${workspaceId}) as customers`.execute(ctx().database.db);
  return result.rows[0]!;
}

const entitlementsPerProduct = async (workspaceId: number) =>
  (
    await ctx()
      .database.db.selectFrom('entitlements')
      .where('workspace_id', '=', workspaceId)
      .select(['customer_id', 'product_id', sql<number>`count(*)::int`.as('n')])
      .groupBy(['customer_id', 'product_id'])
      .orderBy('product_id')
      .execute()
  ).map((r) => ({ product_id: r.product_id, n: r.n }));

// Real parallelism needs PostgreSQL (PGlite serialises transactions); the same
// assertions hold on both.
describe(`manual grants under concurrency (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('answers ten parallel requests sharing a grantRequestId with one grant and identical bodies', async () => {
    const ws = await seedWorkspace(ctx());
    const body = {
      productIds: [ws.ids.products.p1, ws.ids.products.p2],
      email: `race-${ws.suffix}@cust.test`,
      firstName: 'Race',
      reason: 'Parallel retries',
      grantRequestId: `race-${ws.suffix}`,
    };
    const results = await Promise.all(Array.from({ length: 10 }, () => grant(ws.owner, body)));
    for (const r of results) expect(r.statusCode, r.body.slice(0, 400)).toBe(201);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
    const first = results[0]!.json();
    for (const r of results) expect(r.json()).toEqual(first);
    expect(first).toMatchObject({ createdCount: 2, customer: { created: true } });

    expect(await rowCounts(ws.workspaceId)).toEqual({ orders: 1, order_items: 2, entitlements: 2, serials: 2, manual_grants: 1, customers: 1 });
  });

  it('grants a product once when ten parallel grants without grantRequestId target the same customer', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const body = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'Double-clicked' };
    const results = await Promise.all(Array.from({ length: 10 }, () => grant(ws.owner, body)));
    for (const r of results) expect(r.statusCode, r.body.slice(0, 400)).toBe(201);
    const bodies = results.map((r) => r.json());
    expect(bodies.filter((b) => b.createdCount === 1)).toHaveLength(1);
    const skipped = bodies.filter((b) => b.createdCount === 0);
    expect(skipped).toHaveLength(9);
    for (const b of skipped) expect(b.grants).toEqual([expect.objectContaining({ status: 'skipped', reason: 'already_entitled' })]);

    expect(await rowCounts(ws.workspaceId)).toEqual({ orders: 1, order_items: 1, entitlements: 1, serials: 1, manual_grants: 10, customers: 1 });
  });

  it('creates one customer and one grant per product when parallel grants name a new e-mail and overlapping products', async () => {
    const ws = await seedWorkspace(ctx());
    const { p1, p2, p3 } = ws.ids.products as Record<'p1' | 'p2' | 'p3', number>;
    const email = `overlap-${ws.suffix}@cust.test`;
    const sets = [[p1, p2], [p2, p1], [p3], [p1, p2, p3], [p3, p2], [p1]];
    const results = await Promise.all(sets.flatMap((productIds) => [productIds, productIds]).map((productIds) => grant(ws.owner, { productIds, email, reason: 'x' })));
    for (const r of results) expect(r.statusCode, r.body.slice(0, 400)).toBe(201);
    const created = results.reduce((sum, r) => sum + r.json().createdCount, 0);
    expect(created).toBe(3);
    expect(results.filter((r) => r.json().customer.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.json().customer.customer_id)).size).toBe(1);

    expect(await entitlementsPerProduct(ws.workspaceId)).toEqual([p1, p2, p3].map((product_id) => ({ product_id, n: 1 })));
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ order_items: 3, serials: 3, customers: 1, manual_grants: results.length });
  });

  it('does not deadlock when a grantRequestId looks like another customer’s lock name', async () => {
    const ws = await seedWorkspace(ctx(), { customers: Array.from({ length: 12 }, (_, i) => ({ key: `c${i}` })) });
    const ids = Array.from({ length: 12 }, (_, i) => ws.ids.customers[`c${i}`]!);
    // Pairs that cross: A's key names B and B's key names A.
    const requests = ids.flatMap((id, i) => (i % 2 ? [] : [{ customerId: id, grantRequestId: `customer:${ids[i + 1]}` }, { customerId: ids[i + 1], grantRequestId: `customer:${id}` }]));
    const results = await Promise.all(requests.map((r) => grant(ws.owner, { productId: ws.ids.products.p1, reason: 'x', ...r })));
    for (const r of results) expect(r.statusCode, r.body.slice(0, 300)).toBe(201);
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ entitlements: 12, manual_grants: 12 });
  });

  it('assigns a contested existing serial to exactly one of ten customers', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: Array.from({ length: 10 }, (_, i) => ({ key: `c${i}` })),
      serials: [{ key: 's', product: 'p1' }],
    });
    const serialId = ws.ids.serials.s!;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        grant(ws.owner, { productId: ws.ids.products.p1, customerId: ws.ids.customers[`c${i}`], grantType: 'existing_serial', serialId, reason: 'x' }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('SERIAL_NOT_AVAILABLE');
    const winner = results.find((r) => r.statusCode === 201)!.json();
    const serial = await ctx().database.db.selectFrom('serials').where('id', '=', serialId).select(['status', 'customer_id']).executeTakeFirstOrThrow();
    expect(serial).toEqual({ status: 'redeemed', customer_id: await accountIdOf(ctx(), winner.customer.customer_id) });
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ orders: 1, order_items: 1, entitlements: 1, serials: 1, manual_grants: 1 });
  });
});
