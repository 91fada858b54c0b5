import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp, type SeededWorkspace } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, SERIALS, type SerialRow } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const DAY = 86_400_000;
const at = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY).toISOString();
const CODE = /^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){4}$/;

const serialCount = async (ws: SeededWorkspace) => (await api.list(ws.owner)).total;

/** Generates and returns the one new serial; fails the test on any other answer. */
async function generateOne(ws: SeededWorkspace, body: Record<string, unknown>): Promise<SerialRow> {
  const res = await api.generate(ws.owner, { quantity: 1, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().serials[0];
}

describe('POST /api/developer/serials/generate', () => {
  it('answers 201 with the generated inventory and its product', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 7 } });
    const res = await api.generate(ws.owner, { productId: ws.ids.products.p2, quantity: 3, notes: '  for the launch  ' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ count: 3, product: { id: ws.ids.products.p2, name: `Product p2 ${ws.suffix}` } });
    expect(body.message).toMatch(/^Generated 3 serials for Product p2/);
    expect(body.serials).toHaveLength(3);
    for (const serial of body.serials as SerialRow[]) {
      expect(serial.serial).toMatch(CODE);
      expect(serial).toMatchObject({
        product_id: ws.ids.products.p2,
        customer_id: null,
        status: 'available',
        redeemed: false,
        origin: 'generated',
        max_activations: 7,
        remaining_activations: 7,
        order_id: null,
        notes: 'for the launch',
      });
    }
    expect(new Set(body.serials.map((s: SerialRow) => s.serial)).size).toBe(3);
    expect(await serialCount(ws)).toBe(3);
  });

  it('generates one serial when no quantity is given', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.generate(ws.owner, { productId: ws.ids.products.p1 });
    expect(res.statusCode).toBe(201);
    expect(res.json().count).toBe(1);
    expect(res.json().message).toMatch(/^Generated 1 serial for/);
  });

  it('never creates a customer, order or ownership', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'c', products: ['p1'] }], orders: [{ key: 'o', customer: 'c' }] });
    const db = ctx().database.db;
    const customersBefore = (await api.get(ws.owner, '/api/developer/customers')).json().total;
    const ordersBefore = await db.selectFrom('orders').where('workspace_id', '=', ws.workspaceId).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();

    const res = await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 25 });
    expect(res.statusCode).toBe(201);
    expect(res.json().serials.every((s: SerialRow) => s.customer_id === null && s.status === 'available' && s.order_id === null && !s.redeemed)).toBe(true);
    expect((await api.get(ws.owner, '/api/developer/customers')).json().total).toBe(customersBefore);
    const ordersAfter = await db.selectFrom('orders').where('workspace_id', '=', ws.workspaceId).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    expect(ordersAfter.n).toBe(ordersBefore.n);
    expect((await api.list(ws.owner, '?status=redeemed')).total).toBe(0);
  });

  it('upper-cases a valid prefix and puts it before the groups', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 5, prefix: 'synth24' });
    expect(res.statusCode).toBe(201);
    for (const s of res.json().serials as SerialRow[]) {
      expect(s.serial.startsWith('SYNTH24-')).toBe(true);
      expect(s.serial.slice('SYNTH24-'.length)).toMatch(CODE);
    }
  });

  it.each([
    ['a dash', 'AB-CD'],
    ['a space', 'AB CD'],
    ['an underscore', 'AB_CD'],
    ['a non-ASCII letter', 'ÄBC'],
    ['thirteen characters', 'ABCDEFGHIJKLM'],
    ['an empty string', ''],
    ['a number', 42],
  ])('rejects a prefix with %s', async (_label, prefix) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.generate(ws.owner, { productId: ws.ids.products.p1, prefix }), 400, 'VALIDATION_FAILED');
    expect(await serialCount(ws)).toBe(0);
  });

  it('stores the batch settings on every serial', async () => {
    const ws = await seedWorkspace(ctx());
    const settings = {
      expiresAt: at(365),
      promoPrice: 1999,
      promoStart: at(-1),
      promoExpires: at(30),
      activeFrom: at(-2),
      activeTo: at(200),
      batchTag: ' Summer 2027 ',
    };
    const serial = await generateOne(ws, { productId: ws.ids.products.p1, ...settings });
    expect(serial).toMatchObject({ promo_price: 1999, batch_tag: 'Summer 2027' });
    for (const [field, key] of [
      ['expires_at', 'expiresAt'],
      ['promo_start', 'promoStart'],
      ['promo_expires', 'promoExpires'],
      ['active_from', 'activeFrom'],
      ['active_to', 'activeTo'],
    ] as const) {
      expect(Date.parse(serial[field] as string), field).toBe(Date.parse(settings[key]));
    }
  });

  it('answers each new serial field for field as the list answers it, in id order', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 4 } });
    const res = await api.generate(ws.owner, {
      productId: ws.ids.products.p1,
      quantity: 3,
      prefix: 'gen',
      expiresAt: at(365),
      promoPrice: 500,
      promoStart: at(-1),
      promoExpires: at(30),
      activeFrom: at(-2),
      activeTo: at(200),
      batchTag: 'Launch "A" \\ ü',
      notes: 'line one\nline two',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['message', 'count', 'product', 'serials']);
    const listed = (await api.list(ws.owner)).rows as SerialRow[];
    expect(body.serials).toEqual([...listed].sort((a, b) => a.id - b.id));
    expect(Object.keys(body.serials[0])).toEqual(Object.keys(listed[0]!));
    const plain = (await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 2 })).json().serials as SerialRow[];
    const listedPlain = ((await api.list(ws.owner)).rows as SerialRow[]).filter((r) => plain.some((p) => p.id === r.id));
    expect(plain).toEqual(listedPlain.sort((a, b) => a.id - b.id));
  });

  describe('snake_case aliases', () => {
    // Each alias alone, with what it needs besides, and the row field it must set.
    const cases: Array<{ alias: string; value: () => unknown; extra?: Record<string, unknown>; field: string }> = [
      { alias: 'expires_at', value: () => at(90), field: 'expires_at' },
      { alias: 'promo_price', value: () => 1234, field: 'promo_price' },
      { alias: 'promo_start', value: () => at(-1), extra: { promoPrice: 500 }, field: 'promo_start' },
      { alias: 'promo_expires', value: () => at(10), extra: { promoPrice: 500 }, field: 'promo_expires' },
      { alias: 'active_from', value: () => at(-3), field: 'active_from' },
      { alias: 'active_to', value: () => at(40), field: 'active_to' },
      { alias: 'batch_tag', value: () => 'SNAKE', field: 'batch_tag' },
    ];

    it('accepts product_id alone', async () => {
      const ws = await seedWorkspace(ctx());
      const serial = await generateOne(ws, { product_id: ws.ids.products.p3 });
      expect(serial.product_id).toBe(ws.ids.products.p3);
    });

    it.each(cases)('accepts $alias alone', async ({ alias, value, extra, field }) => {
      const ws = await seedWorkspace(ctx());
      const sent = value();
      const serial = await generateOne(ws, { productId: ws.ids.products.p1, [alias]: sent, ...extra });
      if (typeof sent === 'string' && !Number.isNaN(Date.parse(sent))) expect(Date.parse(serial[field] as string)).toBe(Date.parse(sent));
      else expect(serial[field]).toBe(sent);
    });

    it('accepts an alias and its camelCase field when they agree, dates compared as instants', async () => {
      const ws = await seedWorkspace(ctx());
      const day = new Date(Date.now() + 30 * DAY);
      day.setUTCMilliseconds(0);
      const serial = await generateOne(ws, {
        productId: ws.ids.products.p1,
        product_id: ws.ids.products.p1,
        promoPrice: 700,
        promo_price: 700,
        batchTag: 'SAME',
        batch_tag: 'SAME',
        expiresAt: day.toISOString(),
        expires_at: day.toISOString().replace('.000Z', '+00:00'),
      });
      expect(serial).toMatchObject({ product_id: ws.ids.products.p1, promo_price: 700, batch_tag: 'SAME' });
      expect(Date.parse(serial.expires_at as string)).toBe(day.getTime());
    });

    it.each([
      { label: 'productId', body: (p: number, q: number) => ({ productId: p, product_id: q }), path: 'body/product_id' },
      { label: 'promoPrice', body: (p: number) => ({ productId: p, promoPrice: 100, promo_price: 200 }), path: 'body/promo_price' },
      { label: 'batchTag', body: (p: number) => ({ productId: p, batchTag: 'A', batch_tag: 'B' }), path: 'body/batch_tag' },
      { label: 'expiresAt', body: (p: number) => ({ productId: p, expiresAt: at(10), expires_at: at(11) }), path: 'body/expires_at' },
      { label: 'activeFrom', body: (p: number) => ({ productId: p, activeFrom: at(1), active_from: at(2) }), path: 'body/active_from' },
      { label: 'activeTo', body: (p: number) => ({ productId: p, activeTo: at(1), active_to: at(2) }), path: 'body/active_to' },
      { label: 'promoStart', body: (p: number) => ({ productId: p, promoPrice: 1, promoStart: at(1), promo_start: at(2) }), path: 'body/promo_start' },
      { label: 'promoExpires', body: (p: number) => ({ productId: p, promoPrice: 1, promoExpires: at(1), promo_expires: at(2) }), path: 'body/promo_expires' },
    ])('answers 400 CONFLICTING_ALIASES when $label and its alias disagree', async ({ body, path }) => {
      const ws = await seedWorkspace(ctx());
      const problem = expectProblem(await api.generate(ws.owner, body(ws.ids.products.p1!, ws.ids.products.p2!)), 400, 'CONFLICTING_ALIASES');
      expect(problem.errors).toEqual([expect.objectContaining({ path })]);
      expect(await serialCount(ws)).toBe(0);
    });
  });

  it.each(['resellerId', 'reseller_id', 'reseller', 'relationshipId', 'relationship_id', 'resellerRelationshipId', 'partnerId', 'partner_id', 'pool', 'poolId', 'pool_id', 'resellerPool'])(
    'answers 400 PARTNER_POOL_REQUIRED for %s',
    async (field) => {
      const ws = await seedWorkspace(ctx(), { resellers: [{ key: 'r', name: 'Store' }] });
      const res = await api.generate(ws.owner, { productId: ws.ids.products.p1, [field]: ws.ids.resellers.r });
      expectProblem(res, 400, 'PARTNER_POOL_REQUIRED');
      expect(await serialCount(ws)).toBe(0);
    },
  );

  it.each([
    ['quantity 0', { quantity: 0 }],
    ['quantity 10001', { quantity: 10_001 }],
    ['a fractional quantity', { quantity: 1.5 }],
    ['a quantity given as text', { quantity: '5' }],
    ['a negative promo price', { promoPrice: -1 }],
    ['a fractional promo price', { promoPrice: 9.99 }],
    ['a date that is not a date', { expiresAt: 'next year' }],
    ['a batch tag over 100 characters', { batchTag: 'x'.repeat(101) }],
    ['notes over 2000 characters', { notes: 'x'.repeat(2001) }],
    ['a promo window without a promo price', { promoStart: at(-1), promoExpires: at(1) }],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.generate(ws.owner, { productId: ws.ids.products.p1, ...body }), 400, 'VALIDATION_FAILED');
    expect(await serialCount(ws)).toBe(0);
  });

  it.each([
    ['no product', {}],
    ['a product id given as text', { productId: '1' }],
    ['product id 0', { productId: 0 }],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.generate(ws.owner, body), 400, 'VALIDATION_FAILED');
  });

  it('rejects a body that is not a JSON object', async () => {
    const ws = await seedWorkspace(ctx());
    for (const payload of ['[]', 'null', '"x"', '{"productId":']) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: `${SERIALS}/generate`,
        headers: { authorization: `Bearer ${ws.owner}`, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, payload).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('accepts the maximum quantity of 10000', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 10_000 });
    expect(res.statusCode).toBe(201);
    expect(res.json().count).toBe(10_000);
    expect(new Set(res.json().serials.map((s: SerialRow) => s.serial)).size).toBe(10_000);
    expect(await serialCount(ws)).toBe(10_000);
  });

  it.each([
    ['promoExpires before promoStart', { promoPrice: 1, promoStart: at(5), promoExpires: at(4) }, 'body/promoExpires'],
    ['promoExpires equal to promoStart', { promoPrice: 1, promoStart: at(5), promoExpires: at(5) }, 'body/promoExpires'],
    ['promo_expires before promo_start', { promo_price: 1, promo_start: at(5), promo_expires: at(4) }, 'body/promoExpires'],
    ['activeTo before activeFrom', { activeFrom: at(5), activeTo: at(1) }, 'body/activeTo'],
    ['active_to before active_from', { active_from: at(5), active_to: at(1) }, 'body/activeTo'],
    ['expiresAt in the past', { expiresAt: at(-1) }, 'body/expiresAt'],
    ['expiresAt before activeFrom', { activeFrom: at(20), expiresAt: at(10) }, 'body/expiresAt'],
  ])('answers 400 INVALID_WINDOW for %s', async (_label, body, path) => {
    const ws = await seedWorkspace(ctx());
    const problem = expectProblem(await api.generate(ws.owner, { productId: ws.ids.products.p1, ...body }), 400, 'INVALID_WINDOW');
    expect(problem.errors).toContainEqual(expect.objectContaining({ path }));
    expect(await serialCount(ws)).toBe(0);
  });

  it('answers 404 for a product of another workspace or one that does not exist', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    expectProblem(await api.generate(ws.owner, { productId: other.ids.products.p1 }), 404, 'NOT_FOUND');
    expectProblem(await api.generate(ws.owner, { product_id: other.ids.products.p1 }), 404, 'NOT_FOUND');
    expectProblem(await api.generate(ws.owner, { productId: 2_147_483_647 }), 404, 'NOT_FOUND');
    expect(await serialCount(ws)).toBe(0);
    expect(await serialCount(other)).toBe(0);
  });

  it('answers 404 to a product-scoped member for an unassigned product and generates for an assigned one', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.scoped] });
    expectProblem(await api.generate(ws.tokens.scoped!, { productId: ws.ids.products.p2 }), 404, 'NOT_FOUND');
    expect((await api.generate(ws.tokens.scoped!, { productId: ws.ids.products.p1 })).statusCode).toBe(201);
    expect(await serialCount(ws)).toBe(1);
  });

  it('answers 403 BILLING_NOT_ELIGIBLE when the workspace cannot bill, and generates nothing', async () => {
    const ws = await seedWorkspace(ctx(), { billingEligible: false });
    expectProblem(await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 5 }), 403, 'BILLING_NOT_ELIGIBLE');
    expect(await serialCount(ws)).toBe(0);
  });

  it('needs serials.manage', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.viewer, MEMBERS.outsider] });
    expectProblem(await api.generate(ws.tokens.viewer!, { productId: ws.ids.products.p1 }), 403, 'FORBIDDEN');
    expectProblem(await api.generate(ws.tokens.outsider!, { productId: ws.ids.products.p1 }), 403, 'FORBIDDEN');
    expect(await serialCount(ws)).toBe(0);
  });

  it('records a generated event with the batch tag for every serial', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.generate(ws.owner, { productId: ws.ids.products.p1, quantity: 2, batchTag: 'LAUNCH' });
    for (const serial of res.json().serials as SerialRow[]) {
      const events = (await api.get(ws.owner, `${SERIALS}/${serial.id}/events`)).json();
      expect(events.rows).toMatchObject([
        { action: 'generated', actor_type: 'developer', actor_account_id: ws.ids.accounts.owner, before_status: null, after_status: 'available', data: { batchTag: 'LAUNCH' } },
      ]);
    }
  });
});
