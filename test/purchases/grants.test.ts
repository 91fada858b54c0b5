import { Value } from '@sinclair/typebox/value';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { grantAccess } from '../../src/modules/purchases/purchases.grants.js';
import { ManualGrantResult } from '../../src/modules/purchases/purchases.schemas.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import type { Db } from '../../src/platform/db/database.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { accountIdOf, bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { countJobs, listJobs } from '../../src/platform/jobs/jobs.testing.js';
import { EmailJob } from '../../src/platform/mail/mail.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });

const GRANT = '/api/developer/purchases/manual-grant';
const DAY = 86_400_000;

const grant = (token: string | undefined, body: Record<string, unknown>) =>
  ctx().app.inject({ method: 'POST', url: GRANT, headers: token === undefined ? {} : bearer(token), payload: body });

const get = (token: string, url: string) => ctx().app.inject({ method: 'GET', url, headers: bearer(token) });

/** A 201 grant answer's body. */
async function granted(token: string, body: Record<string, unknown>) {
  const res = await grant(token, body);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
  return res.json();
}

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body.slice(0, 500)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  return body as { detail?: string; errors?: Array<{ path: string; message: string }> };
}

/** Rows a grant writes, counted in one workspace. */
async function rowCounts(workspaceId: number): Promise<Record<string, number>> {
  const result = await sql<Record<string, number>>`
    select
      (select count(*)::int from orders where workspace_id = ${workspaceId}) as orders,
      (select count(*)::int from order_items where workspace_id = ${workspaceId}) as order_items,
      (select count(*)::int from entitlements where workspace_id = ${workspaceId}) as entitlements,
      (select count(*)::int from serials where workspace_id = ${workspaceId}) as serials,
      (select count(*)::int from manual_grants where workspace_id = ${workspaceId}) as manual_grants,
      (select count(*)::int from developer_customers where workspace_id = ${workspaceId}) as customers`.execute(ctx().database.db);
  return { ...result.rows[0]!, emails: await countJobs(ctx().database.db, { job: EmailJob, workspaceId }) };
}

const serialInDb = (id: number) =>
  ctx().database.db.selectFrom('serials').where('id', '=', id).select(['status', 'customer_id', 'order_id', 'origin', 'expires_at']).executeTakeFirstOrThrow();

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);

describe('POST /api/developer/purchases/manual-grant: perpetual grants', () => {
  it('grants products perpetually to a new customer by e-mail, with every response member present and typed', async () => {
    const ws = await seedWorkspace(ctx());
    const [p1, p2] = [ws.ids.products.p1!, ws.ids.products.p2!];
    const email = `new-${ws.suffix}@cust.test`;
    const body = await granted(ws.owner, { productIds: [p1, p2], email, firstName: ' Ann ', lastName: 'Lee', reason: 'Conference giveaway' });

    const customerId = body.customer.customer_id;
    const orderId = body.purchases[0]?.order_id;
    expect(body).toEqual({
      success: true,
      grantType: 'perpetual',
      grantId: expect.any(Number),
      grantRequestId: null,
      count: 2,
      createdCount: 2,
      skippedCount: 0,
      created: true,
      customer: { customer_id: expect.any(Number), email, created: true },
      grants: [p1, p2].map((productId) => ({
        productId,
        status: 'created',
        reason: null,
        orderItemId: expect.any(Number),
        entitlementId: expect.any(Number),
        serialId: expect.any(Number),
      })),
      products: [
        { id: p1, name: `Product p1 ${ws.suffix}`, price: '49.00' },
        { id: p2, name: `Product p2 ${ws.suffix}`, price: '49.00' },
      ],
      purchases: [
        {
          order_id: expect.any(Number),
          reference: `GRANT-${body.grantId}`,
          channel: 'manual_grant',
          status: 'granted',
          customer_id: customerId,
          currency: 'usd',
          total_cents: 0,
          grant_request_id: null,
          purchased_at: ISO,
        },
      ],
      items: expect.any(Array),
      entitlements: expect.any(Array),
      serials: expect.any(Array),
      emailsQueued: 0,
      reason: 'Conference giveaway',
    });

    expect(body.items).toHaveLength(2);
    for (const [i, productId] of [p1, p2].entries()) {
      const outcome = body.grants[i];
      expect(body.items[i]).toMatchObject({
        order_id: orderId,
        order_item_id: outcome.orderItemId,
        product_id: productId,
        customer_id: customerId,
        email,
        first_name: 'Ann',
        last_name: 'Lee',
        channel: 'manual_grant',
        provider: 'manual',
        status: 'granted',
        record_type: 'grant',
        refund_status: 'none',
        price_cents: 4900,
        sale_price_cents: 0,
        sale_price: '0.00',
        refunded_cents: 0,
        invoice_available: false,
        can_refund: false,
        order_reference: `GRANT-${body.grantId}`,
        serial_id: outcome.serialId,
        serial_code: body.serials[i].serial,
        purchased_at: ISO,
      });
      expect(body.entitlements[i]).toEqual({
        id: outcome.entitlementId,
        customer_id: customerId,
        product_id: productId,
        source: 'grant',
        kind: 'perpetual',
        status: 'active',
        order_item_id: outcome.orderItemId,
        serial_id: outcome.serialId,
        starts_at: ISO,
        ends_at: null,
      });
      expect(body.serials[i]).toMatchObject({
        id: outcome.serialId,
        serial: expect.any(String),
        product_id: productId,
        customer_id: customerId,
        status: 'redeemed',
        redeemed: true,
        revoked: false,
        origin: 'granted',
        order_id: orderId,
        expires_at: null,
        max_activations: 2,
        active_activation_count: 0,
        redeemed_at: ISO,
      });
    }
    expect(new Set(body.serials.map((s: { serial: string }) => s.serial)).size).toBe(2);
    // The answer also matches the documented schema (the serializer shapes it but does not validate).
    expect([...Value.Errors(ManualGrantResult, body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);

    const customers = (await get(ws.owner, '/api/developer/customers')).json();
    expect(customers.total).toBe(1);
    expect(customers.rows[0]).toMatchObject({ customer_id: customerId, email, first_name: 'Ann', last_name: 'Lee', status: 'active' });
    expect([...customers.rows[0].product_ids].sort()).toEqual([p1, p2].sort());

    const purchases = (await get(ws.owner, '/api/developer/purchases?channel=manual_grant&recordType=grant')).json();
    expect(purchases.total).toBe(2);
    expect(purchases.rows.map((r: { order_item_id: number }) => r.order_item_id).sort()).toEqual(body.items.map((i: { order_item_id: number }) => i.order_item_id).sort());
    expect(purchases.rows.every((r: { can_refund: boolean; sale_price_cents: number }) => !r.can_refund && r.sale_price_cents === 0)).toBe(true);

    // The reason is kept with the grant for reconciliation, and the first answer with it.
    const db = ctx().database.db;
    const stored = await db.selectFrom('manual_grants').where('id', '=', body.grantId).select(['workspace_id', 'reason', 'grant_type', 'customer_id', 'actor_account_id', 'response']).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ workspace_id: ws.workspaceId, reason: 'Conference giveaway', grant_type: 'perpetual', customer_id: await accountIdOf(ctx(), customerId), actor_account_id: ws.ids.accounts.owner });
    expect(stored.response).toEqual(body);
    const audit = await db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'purchases.manual_grant').select('subject_id').execute();
    expect(audit).toEqual([{ subject_id: String(customerId) }]);
  });

  it('grants one product by customerId to an existing customer, keeping their names', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', firstName: 'Old', lastName: 'Name', products: ['p3'] }] });
    const customerId = ws.ids.customers.c!;
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, customerId, reason: 'Support goodwill', note: 'ticket 42' });
    expect(body).toMatchObject({ grantType: 'perpetual', count: 1, createdCount: 1, skippedCount: 0, created: true, customer: { customer_id: customerId, created: false } });
    expect(body.items).toEqual([expect.objectContaining({ product_id: ws.ids.products.p1, customer_id: customerId, first_name: 'Old', last_name: 'Name' })]);
    expect(body.serials).toEqual([expect.objectContaining({ customer_id: customerId, origin: 'granted', status: 'redeemed' })]);

    const customers = (await get(ws.owner, '/api/developer/customers')).json();
    expect(customers.total).toBe(1);
    expect(customers.rows[0]).toMatchObject({ customer_id: customerId, first_name: 'Old', last_name: 'Name' });
    expect([...customers.rows[0].product_ids].sort()).toEqual([ws.ids.products.p1, ws.ids.products.p3].sort());
    const note = await ctx().database.db.selectFrom('manual_grants').where('id', '=', body.grantId).select('note').executeTakeFirstOrThrow();
    expect(note.note).toBe('ticket 42');
  });

  it('finds an existing customer by e-mail in any case instead of creating another', async () => {
    const email = `Known-${unique()}@Cust.test`;
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', email }] });
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, email: email.toLowerCase(), reason: 'Beta tester' });
    expect(body.customer).toMatchObject({ customer_id: ws.ids.customers.c, created: false });
    expect((await get(ws.owner, '/api/developer/customers')).json().total).toBe(1);
  });

  it('answers 404 for a removed customer by id, and brings them back when granted by e-mail', async () => {
    const email = `removed-${unique()}@cust.test`;
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', email, firstName: 'Gone' }] });
    const customerId = ws.ids.customers.c!;
    const removed = await ctx().app.inject({ method: 'DELETE', url: `/api/developer/customers/${customerId}`, headers: bearer(ws.owner), payload: { confirm: true } });
    expect(removed.statusCode, removed.body).toBe(200);
    expectProblem(await grant(ws.owner, { productId: ws.ids.products.p1, customerId, reason: 'x' }), 404, 'NOT_FOUND');
    expect((await rowCounts(ws.workspaceId)).manual_grants).toBe(0);
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, email, reason: 'x' });
    expect(body.customer).toEqual({ customer_id: customerId, email, created: true });
    expect((await get(ws.owner, '/api/developer/customers')).json().rows).toEqual([expect.objectContaining({ customer_id: customerId, status: 'active' })]);
  });

  it('skips products the customer already holds with reason already_entitled', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const [p1, p2] = [ws.ids.products.p1!, ws.ids.products.p2!];
    const customerId = ws.ids.customers.c!;
    await granted(ws.owner, { productId: p1, customerId, reason: 'first' });

    const mixed = await granted(ws.owner, { productIds: [p1, p2], customerId, reason: 'second' });
    expect(mixed).toMatchObject({ count: 2, createdCount: 1, skippedCount: 1, created: true });
    expect(mixed.grants).toEqual([
      { productId: p1, status: 'skipped', reason: 'already_entitled', orderItemId: null, entitlementId: null, serialId: null },
      expect.objectContaining({ productId: p2, status: 'created', reason: null }),
    ]);
    expect(mixed.items.map((i: { product_id: number }) => i.product_id)).toEqual([p2]);
    expect(mixed.serials.map((s: { product_id: number }) => s.product_id)).toEqual([p2]);
    expect(mixed.entitlements.map((e: { product_id: number }) => e.product_id)).toEqual([p2]);

    const before = await rowCounts(ws.workspaceId);
    const repeat = await granted(ws.owner, { productId: p1, customerId, reason: 'third' });
    expect(repeat).toMatchObject({ count: 1, createdCount: 0, skippedCount: 1, created: false, purchases: [], items: [], entitlements: [], serials: [] });
    expect(repeat.grants).toEqual([expect.objectContaining({ productId: p1, status: 'skipped', reason: 'already_entitled' })]);
    // Only the grant record itself is written; no order, item, entitlement or serial.
    expect(await rowCounts(ws.workspaceId)).toEqual({ ...before, manual_grants: before.manual_grants! + 1 });
    expect((await get(ws.owner, '/api/developer/purchases')).json().total).toBe(2);
  });

  it('grants perpetual access over an active subscription, and skips a subscription over perpetual access', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const base = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'upgrade' };
    await granted(ws.owner, { ...base, grantType: 'subscription' });
    const body = await granted(ws.owner, base);
    expect(body).toMatchObject({ createdCount: 1, entitlements: [expect.objectContaining({ kind: 'perpetual', ends_at: null })] });
    const sub = await granted(ws.owner, { ...base, grantType: 'subscription' });
    expect(sub).toMatchObject({ createdCount: 0, grants: [expect.objectContaining({ status: 'skipped', reason: 'already_entitled' })] });
  });
});

describe('POST /api/developer/purchases/manual-grant: subscription grants', () => {
  it('grants access until accessUntil with a serial that expires then', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const accessUntil = new Date(Date.now() + 30 * DAY).toISOString();
    const body = await granted(ws.owner, { productId: ws.ids.products.p2, customerId: ws.ids.customers.c, grantType: 'subscription', accessUntil, reason: 'Trial extension' });
    expect(body).toMatchObject({ grantType: 'subscription', count: 1, createdCount: 1 });
    expect(body.items).toEqual([expect.objectContaining({ record_type: 'subscription', channel: 'manual_grant', status: 'granted', sale_price_cents: 0, can_refund: false })]);
    expect(body.entitlements).toEqual([expect.objectContaining({ source: 'grant', kind: 'subscription', status: 'active', ends_at: accessUntil })]);
    expect(body.serials).toEqual([expect.objectContaining({ origin: 'granted', status: 'redeemed', expires_at: accessUntil })]);
    const stored = await serialInDb(body.serials[0].id);
    expect(new Date(stored.expires_at as unknown as string).toISOString()).toBe(accessUntil);
    const listed = (await get(ws.owner, '/api/developer/purchases?recordType=subscription')).json();
    expect(listed.rows.map((r: { order_item_id: number }) => r.order_item_id)).toEqual([body.items[0].order_item_id]);
  });

  it('runs about one year when accessUntil is left out', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const before = Date.now();
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'subscription', reason: 'annual' });
    const endsAt = Date.parse(body.entitlements[0].ends_at);
    expect(endsAt).toBeGreaterThanOrEqual(before + 365 * DAY);
    expect(endsAt).toBeLessThanOrEqual(Date.now() + 365 * DAY);
    expect(body.serials[0].expires_at).toBe(body.entitlements[0].ends_at);
  });

  it('skips a subscription the customer already holds for at least as long, grants a longer one', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const base = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'subscription', reason: 'sub' };
    await granted(ws.owner, { ...base, accessUntil: new Date(Date.now() + 60 * DAY).toISOString() });
    const shorter = await granted(ws.owner, { ...base, accessUntil: new Date(Date.now() + 10 * DAY).toISOString() });
    expect(shorter).toMatchObject({ createdCount: 0, skippedCount: 1, grants: [expect.objectContaining({ status: 'skipped', reason: 'already_entitled' })] });
    const longer = await granted(ws.owner, { ...base, accessUntil: new Date(Date.now() + 90 * DAY).toISOString() });
    expect(longer).toMatchObject({ createdCount: 1, skippedCount: 0 });
  });

  it('refuses more than one product with SINGLE_PRODUCT_GRANT_REQUIRED', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const res = await grant(ws.owner, { productIds: [ws.ids.products.p1, ws.ids.products.p2], customerId: ws.ids.customers.c, grantType: 'subscription', reason: 'x' });
    expectProblem(res, 400, 'SINGLE_PRODUCT_GRANT_REQUIRED');
    expect((await rowCounts(ws.workspaceId)).manual_grants).toBe(0);
  });

  it('refuses accessUntil in the past, too far ahead, malformed, or with another grant type', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const base = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'x' };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['in the past', { grantType: 'subscription', accessUntil: new Date(Date.now() - DAY).toISOString() }],
      ['now-ish (not in the future)', { grantType: 'subscription', accessUntil: new Date(Date.now() - 1000).toISOString() }],
      ['more than ten years ahead', { grantType: 'subscription', accessUntil: new Date(Date.now() + 3700 * DAY).toISOString() }],
      ['not a date-time', { grantType: 'subscription', accessUntil: 'next year' }],
      ['with perpetual', { grantType: 'perpetual', accessUntil: new Date(Date.now() + 30 * DAY).toISOString() }],
      ['with the default grant type', { accessUntil: new Date(Date.now() + 30 * DAY).toISOString() }],
    ];
    for (const [label, extra] of cases) {
      const problem = expectProblem(await grant(ws.owner, { ...base, ...extra }), 400, 'VALIDATION_FAILED');
      expect(problem.errors?.map((e) => e.path).join(), label).toMatch(/accessUntil/);
    }
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ orders: 0, manual_grants: 0 });
  });
});

describe('POST /api/developer/purchases/manual-grant: existing_serial grants', () => {
  it('assigns an available serial to the customer', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const serialId = ws.ids.serials.s!;
    const email = `holder-${ws.suffix}@cust.test`;
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, email, grantType: 'existing_serial', serialId, reason: 'Replacement for a lost key' });
    const customerId = body.customer.customer_id;
    expect(body).toMatchObject({ grantType: 'existing_serial', createdCount: 1, customer: { created: true } });
    expect(body.grants).toEqual([expect.objectContaining({ status: 'created', serialId })]);
    expect(body.items).toEqual([expect.objectContaining({ serial_id: serialId, serial_code: ws.serialCodes.s, record_type: 'grant', sale_price_cents: 0 })]);
    expect(body.entitlements).toEqual([expect.objectContaining({ kind: 'perpetual', source: 'grant', serial_id: serialId })]);
    // The serial keeps its origin: it was assigned, not issued.
    expect(body.serials).toEqual([expect.objectContaining({ id: serialId, serial: ws.serialCodes.s, origin: 'generated', status: 'redeemed', customer_id: customerId })]);
    expect(await serialInDb(serialId)).toMatchObject({ status: 'redeemed', customer_id: await accountIdOf(ctx(), customerId), order_id: body.purchases[0].order_id });
    expect((await rowCounts(ws.workspaceId)).serials).toBe(1);
    const events = await ctx().database.db.selectFrom('serial_events').where('serial_id', '=', serialId).select(['action', 'reason', 'after_status']).execute();
    expect(events).toContainEqual({ action: 'assigned_by_grant', reason: 'Replacement for a lost key', after_status: 'redeemed' });
  });

  it('requires serialId for existing_serial and refuses it with another grant type', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p1' }] });
    const base = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'x' };
    for (const extra of [{ grantType: 'existing_serial' }, { serialId: ws.ids.serials.s }, { grantType: 'subscription', serialId: ws.ids.serials.s }]) {
      const problem = expectProblem(await grant(ws.owner, { ...base, ...extra }), 400, 'VALIDATION_FAILED');
      expect(problem.errors?.map((e) => e.path), JSON.stringify(extra)).toContain('body/serialId');
    }
    const two = await grant(ws.owner, { ...base, productId: undefined, productIds: [ws.ids.products.p1, ws.ids.products.p2], grantType: 'existing_serial', serialId: ws.ids.serials.s });
    expectProblem(two, 400, 'SINGLE_PRODUCT_GRANT_REQUIRED');
    expect(await serialInDb(ws.ids.serials.s!)).toMatchObject({ status: 'available', customer_id: null });
  });

  it('refuses a serial of another product with SERIAL_PRODUCT_MISMATCH', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p2' }] });
    const res = await grant(ws.owner, { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'existing_serial', serialId: ws.ids.serials.s, reason: 'x' });
    expectProblem(res, 400, 'SERIAL_PRODUCT_MISMATCH');
    expect(await serialInDb(ws.ids.serials.s!)).toMatchObject({ status: 'available', customer_id: null });
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ orders: 0, manual_grants: 0 });
  });

  it('refuses a serial held by another customer or revoked with SERIAL_NOT_AVAILABLE, and creates no customer', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'holder' }],
      serials: [
        { key: 'held', product: 'p1', customer: 'holder' },
        { key: 'revoked', product: 'p1' },
      ],
    });
    const revoke = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.revoked}/revoke`, headers: bearer(ws.owner), payload: { reason: 'leaked' } });
    expect(revoke.statusCode, revoke.body).toBe(200);
    const before = await rowCounts(ws.workspaceId);
    for (const key of ['held', 'revoked'] as const) {
      const res = await grant(ws.owner, { productId: ws.ids.products.p1, email: `someone-${key}-${ws.suffix}@cust.test`, grantType: 'existing_serial', serialId: ws.ids.serials[key], reason: 'x' });
      expectProblem(res, 409, 'SERIAL_NOT_AVAILABLE');
    }
    expect(await rowCounts(ws.workspaceId)).toEqual(before);
    expect(await serialInDb(ws.ids.serials.held!)).toMatchObject({ status: 'redeemed', customer_id: await accountIdOf(ctx(), ws.ids.customers.holder!) });
    expect(await serialInDb(ws.ids.serials.revoked!)).toMatchObject({ status: 'revoked', customer_id: null });
  });

  it('skips a serial the customer already holds with reason serial_already_assigned', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p1', customer: 'c' }] });
    const before = await rowCounts(ws.workspaceId);
    const body = await granted(ws.owner, { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'existing_serial', serialId: ws.ids.serials.s, reason: 'x' });
    expect(body).toMatchObject({ created: false, createdCount: 0, skippedCount: 1, purchases: [], items: [], entitlements: [], serials: [] });
    expect(body.grants).toEqual([{ productId: ws.ids.products.p1, status: 'skipped', reason: 'serial_already_assigned', orderItemId: null, entitlementId: null, serialId: null }]);
    expect(await rowCounts(ws.workspaceId)).toEqual({ ...before, manual_grants: before.manual_grants! + 1 });
  });

  it('refuses a revoked serial even when the customer held it', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p1', customer: 'c' }] });
    const revoke = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${ws.ids.serials.s}/revoke`, headers: bearer(ws.owner), payload: { reason: 'chargeback' } });
    expect(revoke.statusCode, revoke.body).toBe(200);
    const before = await rowCounts(ws.workspaceId);
    const res = await grant(ws.owner, { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'existing_serial', serialId: ws.ids.serials.s, reason: 'x' });
    const problem = expectProblem(res, 409, 'SERIAL_NOT_AVAILABLE');
    expect(problem.detail).not.toMatch(/another customer/);
    expect(await rowCounts(ws.workspaceId)).toEqual(before);
  });

  it('answers 404 for a serial of another workspace and leaves it untouched', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const b = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const res = await grant(a.owner, { productId: a.ids.products.p1, customerId: a.ids.customers.c, grantType: 'existing_serial', serialId: b.ids.serials.s, reason: 'x' });
    expectProblem(res, 404, 'NOT_FOUND');
    expect(await serialInDb(b.ids.serials.s!)).toMatchObject({ status: 'available', customer_id: null });
    expect((await rowCounts(a.workspaceId)).orders).toBe(0);
  });
});

describe('POST /api/developer/purchases/manual-grant: validation and access', () => {
  it('refuses bodies that do not name exactly one customer identity, products and a reason', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const [p1, p2] = [ws.ids.products.p1!, ws.ids.products.p2!];
    const customerId = ws.ids.customers.c!;
    const email = `v-${ws.suffix}@cust.test`;
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['reason missing', { productId: p1, customerId }, /reason/],
      ['reason empty', { productId: p1, customerId, reason: '' }, /reason/],
      ['reason blank', { productId: p1, customerId, reason: '   ' }, /reason/],
      ['productId and productIds', { productId: p1, productIds: [p2], customerId, reason: 'x' }, /product/],
      ['no product', { customerId, reason: 'x' }, /product/],
      ['empty productIds', { productIds: [], customerId, reason: 'x' }, /productIds/],
      ['duplicate productIds', { productIds: [p1, p1], customerId, reason: 'x' }, /productIds/],
      ['productId zero', { productId: 0, customerId, reason: 'x' }, /productId/],
      ['customerId and email', { productId: p1, customerId, email, reason: 'x' }, /email|customerId/],
      ['no customer', { productId: p1, reason: 'x' }, /email|customerId/],
      ['malformed email', { productId: p1, email: 'not-an-email', reason: 'x' }, /email/],
      ['names with customerId', { productId: p1, customerId, firstName: 'A', reason: 'x' }, /firstName/],
      ['unknown grantType', { productId: p1, customerId, grantType: 'lifetime', reason: 'x' }, /grantType/],
      ['malformed grantRequestId', { productId: p1, customerId, grantRequestId: 'has spaces', reason: 'x' }, /grantRequestId/],
      ['sendProductPurchaseEmails as a string', { productId: p1, customerId, sendProductPurchaseEmails: 'yes', reason: 'x' }, /sendProductPurchaseEmails/],
    ];
    for (const [label, body, path] of cases) {
      const problem = expectProblem(await grant(ws.owner, body), 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(problem.errors), label).toMatch(path);
    }
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ orders: 0, manual_grants: 0, serials: 0, customers: 1, emails: 0 });
  });

  it('answers 404 for a customer or product of another workspace or unknown, and writes nothing', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const b = await seedWorkspace(ctx(), { customers: [{ key: 'c' }] });
    const beforeA = await rowCounts(a.workspaceId);
    const beforeB = await rowCounts(b.workspaceId);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['customer of another workspace', { productId: a.ids.products.p1, customerId: b.ids.customers.c }],
      ['unknown customer', { productId: a.ids.products.p1, customerId: 2147483647 }],
      ['product of another workspace', { productId: b.ids.products.p1, customerId: a.ids.customers.c }],
      ['one of the products from another workspace', { productIds: [a.ids.products.p1, b.ids.products.p2], customerId: a.ids.customers.c }],
      ['unknown product', { productId: 2147483647, email: `x-${a.suffix}@cust.test` }],
    ];
    for (const [label, body] of cases) {
      const res = await grant(a.owner, { ...body, reason: 'x' });
      expect(res.statusCode, label).toBe(404);
      expectProblem(res, 404, 'NOT_FOUND');
    }
    expect(await rowCounts(a.workspaceId)).toEqual(beforeA);
    expect(await rowCounts(b.workspaceId)).toEqual(beforeB);
  });

  it('answers 404 to a product-scoped member for products outside their assignment', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'm', permissions: ['purchases.manage', 'purchases.view'], products: ['p1'] }],
      customers: [{ key: 'other', products: ['p2'] }],
    });
    const token = ws.tokens.m!;
    const email = `scoped-${ws.suffix}@cust.test`;
    expectProblem(await grant(token, { productId: ws.ids.products.p2, email, reason: 'x' }), 404, 'NOT_FOUND');
    expectProblem(await grant(token, { productIds: [ws.ids.products.p1, ws.ids.products.p2], email, reason: 'x' }), 404, 'NOT_FOUND');
    // A customer of other products only is not one this member can name by id.
    expectProblem(await grant(token, { productId: ws.ids.products.p1, customerId: ws.ids.customers.other, reason: 'x' }), 404, 'NOT_FOUND');
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ customers: 1, manual_grants: 0 });
    const ok = await granted(token, { productId: ws.ids.products.p1, email, reason: 'x' });
    expect(ok.items).toEqual([expect.objectContaining({ product_id: ws.ids.products.p1 })]);
    const seen = (await get(token, '/api/developer/purchases')).json();
    expect(seen.rows.map((r: { product_id: number }) => r.product_id)).toEqual([ws.ids.products.p1]);
  });

  it('answers 401 without or with a bad token and 403 without purchases.manage', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      members: [
        { key: 'viewer', permissions: ['purchases.view'], products: 'all' },
        { key: 'serials', permissions: ['serials.manage', 'customers.manage'], products: 'all' },
      ],
    });
    const body = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'x' };
    expect((await grant(undefined, body)).statusCode).toBe(401);
    expect((await grant('not-a-jwt', body)).statusCode).toBe(401);
    expect((await grant(`${ws.owner}x`, body)).statusCode).toBe(401);
    expectProblem(await grant(ws.tokens.viewer!, body), 403, 'FORBIDDEN');
    expectProblem(await grant(ws.tokens.serials!, body), 403, 'FORBIDDEN');
    expect((await rowCounts(ws.workspaceId)).manual_grants).toBe(0);
  });
});

describe('POST /api/developer/purchases/manual-grant: grantRequestId', () => {
  it('answers a repeat with the same body with the first result and writes nothing new', async () => {
    const ws = await seedWorkspace(ctx());
    const body = { productIds: [ws.ids.products.p1, ws.ids.products.p2], email: `idem-${ws.suffix}@cust.test`, firstName: 'Ida', reason: 'Giveaway', grantRequestId: `req-${ws.suffix}` };
    const first = await grant(ws.owner, body);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.json()).toMatchObject({ grantRequestId: body.grantRequestId, createdCount: 2, customer: { created: true }, purchases: [{ grant_request_id: body.grantRequestId }] });
    const before = await rowCounts(ws.workspaceId);

    // Same intended grant: defaults spelt out, products in another order, keys in another order.
    const variants = [
      body,
      { ...body, grantType: 'perpetual', sendProductPurchaseEmails: false },
      { ...body, productIds: [ws.ids.products.p2, ws.ids.products.p1] },
      Object.fromEntries(Object.entries(body).reverse()),
    ];
    for (const variant of variants) {
      const again = await grant(ws.owner, variant);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      expect(again.body).toBe(first.body);
    }
    expect(await rowCounts(ws.workspaceId)).toEqual(before);
  });

  it('answers 409 GRANT_REQUEST_CONFLICT when the key is reused for a different grant', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }, { key: 'd' }], serials: [{ key: 's', product: 'p1' }] });
    const grantRequestId = `conflict-${ws.suffix}`;
    const body = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, reason: 'Original', grantRequestId };
    await granted(ws.owner, body);
    const before = await rowCounts(ws.workspaceId);
    const changes: Array<[string, Record<string, unknown>]> = [
      ['another reason', { reason: 'Changed' }],
      ['another note', { note: 'added' }],
      ['another product', { productId: ws.ids.products.p2 }],
      ['more products', { productId: undefined, productIds: [ws.ids.products.p1, ws.ids.products.p2] }],
      ['another customer', { customerId: ws.ids.customers.d }],
      ['another grant type', { grantType: 'subscription' }],
      ['e-mails requested', { sendProductPurchaseEmails: true }],
    ];
    for (const [label, change] of changes) {
      const res = await grant(ws.owner, { ...body, ...change });
      expect(res.statusCode, label).toBe(409);
      expectProblem(res, 409, 'GRANT_REQUEST_CONFLICT');
    }
    expect(await rowCounts(ws.workspaceId)).toEqual(before);
  });

  it('keeps grantRequestIds independent between workspaces', async () => {
    const a = await seedWorkspace(ctx());
    const b = await seedWorkspace(ctx());
    const grantRequestId = `shared-${unique()}`;
    const email = `shared-${unique()}@cust.test`;
    const ra = await grant(a.owner, { productId: a.ids.products.p1, email, reason: 'same', grantRequestId });
    const rb = await grant(b.owner, { productId: b.ids.products.p1, email, reason: 'same', grantRequestId });
    for (const res of [ra, rb]) {
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(res.json()).toMatchObject({ created: true, createdCount: 1, customer: { created: true } });
    }
    expect(ra.json().grantId).not.toBe(rb.json().grantId);
    // A different body under the same key in b is a conflict in b only.
    expectProblem(await grant(b.owner, { productId: b.ids.products.p2, email, reason: 'same', grantRequestId }), 409, 'GRANT_REQUEST_CONFLICT');
    expect((await grant(a.owner, { productId: a.ids.products.p1, email, reason: 'same', grantRequestId })).headers['idempotent-replayed']).toBe('true');
    expect((await rowCounts(a.workspaceId)).manual_grants).toBe(1);
    expect((await rowCounts(b.workspaceId)).manual_grants).toBe(1);
  });

  it('lets a key be used again after its first attempt failed', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c' }, { key: 'holder' }], serials: [{ key: 's', product: 'p1', customer: 'holder' }, { key: 'free', product: 'p1' }] });
    const grantRequestId = `retry-${ws.suffix}`;
    const base = { productId: ws.ids.products.p1, customerId: ws.ids.customers.c, grantType: 'existing_serial', reason: 'x', grantRequestId };
    expectProblem(await grant(ws.owner, { ...base, serialId: ws.ids.serials.s }), 409, 'SERIAL_NOT_AVAILABLE');
    // Nothing was stored under the key, so a corrected request is a first request.
    const res = await grant(ws.owner, { ...base, serialId: ws.ids.serials.free });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('POST /api/developer/purchases/manual-grant: product e-mails', () => {
  // Queued e-mail is a job of kind email.send carrying references; once sent, its kind is in the result and the payload is empty.
  const outbox = async (workspaceId: number) =>
    (await listJobs(ctx().database.db, { job: EmailJob, workspaceId })).map(({ payload, result, state, attempts, finished_at, last_error }) => ({
      kind: ((payload as { kind?: string }).kind ?? (result as { kind?: string } | null)?.kind) as string,
      payload,
      state,
      attempts,
      finished_at,
      last_error,
    }));
  const sentTo = (recipient: string) => transport.sent.filter((m) => m.to === recipient);

  it('queues one e-mail per granted product and sends it after commit', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `mail-${ws.suffix}@cust.test`;
    const body = await granted(ws.owner, { productIds: [ws.ids.products.p1, ws.ids.products.p2], email, reason: 'x', sendProductPurchaseEmails: true });
    expect(body.emailsQueued).toBe(2);
    await ctx().app.jobs.idle();

    const rows = await outbox(ws.workspaceId);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ kind: 'product_grant', payload: {}, state: 'succeeded', attempts: 1, last_error: null, finished_at: expect.anything() });

    const mails = sentTo(email);
    expect(mails).toHaveLength(2);
    for (const [i, product] of body.products.entries()) {
      const mail = mails.find((m) => m.subject.includes(product.name));
      expect(mail, product.name).toBeDefined();
      expect(mail!.text).toContain(body.serials[i].serial);
      expect(mail!.from).toEqual(expect.any(String));
    }
  });

  it('mentions the end of access in a subscription e-mail', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `sub-mail-${ws.suffix}@cust.test`;
    const accessUntil = new Date(Date.now() + 40 * DAY).toISOString();
    await granted(ws.owner, { productId: ws.ids.products.p3, email, grantType: 'subscription', accessUntil, reason: 'x', sendProductPurchaseEmails: true });
    await ctx().app.jobs.idle();
    expect(sentTo(email)).toEqual([expect.objectContaining({ subject: expect.stringContaining(`Product p3 ${ws.suffix}`), text: expect.stringContaining(accessUntil.slice(0, 10)) })]);
  });

  it('sends nothing when e-mails are not requested', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `quiet-${ws.suffix}@cust.test`;
    const a = await granted(ws.owner, { productId: ws.ids.products.p1, email, reason: 'x' });
    const b = await granted(ws.owner, { productId: ws.ids.products.p2, email, reason: 'x', sendProductPurchaseEmails: false });
    expect([a.emailsQueued, b.emailsQueued]).toEqual([0, 0]);
    await ctx().app.jobs.idle();
    expect(await outbox(ws.workspaceId)).toEqual([]);
    expect(sentTo(email)).toEqual([]);
  });

  it('sends no e-mail for skipped products or for a replayed request', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `skip-mail-${ws.suffix}@cust.test`;
    await granted(ws.owner, { productId: ws.ids.products.p1, email, reason: 'x' });
    const body = { productIds: [ws.ids.products.p1, ws.ids.products.p2], email, reason: 'x', sendProductPurchaseEmails: true, grantRequestId: `mail-${ws.suffix}` };
    expect((await granted(ws.owner, body)).emailsQueued).toBe(1);
    await ctx().app.jobs.idle();
    const replay = await grant(ws.owner, body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await ctx().app.jobs.idle();
    expect(sentTo(email).map((m) => m.subject)).toEqual([expect.stringContaining(`Product p2 ${ws.suffix}`)]);
    expect(await outbox(ws.workspaceId)).toHaveLength(1);
  });

  it('writes the e-mail rows in the grant transaction, so a rolled-back grant leaves none to send', async () => {
    // Through the service, inside an outer transaction (as operator tooling composes it),
    // because no HTTP request can fail after the e-mail rows are written.
    const ws = await seedWorkspace(ctx());
    const email = `rollback-${ws.suffix}@cust.test`;
    const rollback = new Error('roll back');
    const work = ctx()
      .database.db.transaction()
      .execute(async (tx) => {
        const scope = operatorScope(ws.workspaceId, ws.ids.accounts.owner!);
        const outcome = await grantAccess(tx as unknown as Db, scope, { productId: ws.ids.products.p1, email, reason: 'x', sendProductPurchaseEmails: true });
        expect(outcome.emailsQueued).toBe(1);
        const queued = (await listJobs(tx, { job: EmailJob, workspaceId: ws.workspaceId })).map(({ payload, state }) => ({ payload, state }));
        // References only: neither the address nor the serial code waits in the queue.
        expect(queued).toEqual([{ payload: { kind: 'product_grant', ref: { orderItemId: outcome.body.items[0]!.order_item_id } }, state: 'queued' }]);
        expect(JSON.stringify(queued)).not.toContain(outcome.body.serials[0]!.serial);
        throw rollback;
      });
    await expect(work).rejects.toBe(rollback);
    ctx().app.jobs.kick();
    await ctx().app.jobs.idle();
    expect(await rowCounts(ws.workspaceId)).toMatchObject({ orders: 0, serials: 0, manual_grants: 0, customers: 0, emails: 0 });
    expect(sentTo(email)).toEqual([]);
  });

  it('queues nothing for a grant that is refused', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'holder' }], serials: [{ key: 's', product: 'p1', customer: 'holder' }] });
    const email = `refused-${ws.suffix}@cust.test`;
    const refused: Array<[number, Record<string, unknown>]> = [
      [400, { productId: ws.ids.products.p1, email, reason: ' ' }],
      [400, { productIds: [ws.ids.products.p1, ws.ids.products.p2], email, grantType: 'subscription', reason: 'x' }],
      [404, { productId: 2147483647, email, reason: 'x' }],
      // Refused inside the transaction, after the customer was written.
      [409, { productId: ws.ids.products.p1, email, grantType: 'existing_serial', serialId: ws.ids.serials.s, reason: 'x' }],
    ];
    for (const [status, body] of refused) expect((await grant(ws.owner, { ...body, sendProductPurchaseEmails: true })).statusCode, JSON.stringify(body)).toBe(status);
    await ctx().app.jobs.idle();
    expect(await outbox(ws.workspaceId)).toEqual([]);
    expect(sentTo(email)).toEqual([]);
  });
});
