import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, seedShop } from './purchases-helpers.js';

const ctx = useTestApp();
const api = client(ctx);

const ENUMS = {
  channels: ['managed_checkout', 'external_store', 'manual_grant', 'import'],
  refundStatuses: ['none', 'partial', 'full'],
  recordTypes: ['sale', 'free', 'grant', 'subscription'],
};

describe('GET /api/developer/purchases/filter-options', () => {
  it('gives an all-products caller every product, reseller and provider of the workspace', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.viewer] });
    for (const token of [ws.owner, ws.tokens.viewer!]) {
      const options = await api.filterOptions(token);
      expect(options.products).toEqual(['p1', 'p2', 'p3'].map((k) => ({ id: ws.ids.products[k], name: `Product ${k} ${ws.suffix}` })));
      // Every reseller related to the workspace, also one without sales yet.
      expect(options.resellers.map((r) => [r.id, r.name, r.kind])).toEqual([
        [ws.ids.resellerIds.r1, 'Alpha Store', 'store'],
        [ws.ids.resellerIds.r2, 'Beta Market', 'marketplace'],
        [ws.ids.resellerIds.r3, 'Gamma Bundle', 'bundle'],
      ]);
      expect(options.providers).toEqual(['card-provider', 'gumroad', 'manual', 'paddle']);
      expect(options).toMatchObject(ENUMS);
    }
  });

  it('gives a product-scoped member only their products, resellers with sales of them and their providers', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.scoped, { key: 'p3only', permissions: ['purchases.view'], products: ['p3'] }] });
    const scoped = await api.filterOptions(ws.tokens.scoped!);
    expect(scoped.products).toEqual([{ id: ws.ids.products.p1, name: `Product p1 ${ws.suffix}` }]);
    expect(scoped.resellers.map((r) => r.id)).toEqual([ws.ids.resellerIds.r1]);
    expect(scoped.providers).toEqual(['card-provider', 'gumroad']);
    expect(scoped).toMatchObject(ENUMS);

    const p3only = await api.filterOptions(ws.tokens.p3only!);
    expect(p3only.products.map((p) => p.id)).toEqual([ws.ids.products.p3]);
    expect(p3only.resellers.map((r) => r.name)).toEqual(['Beta Market']);
    expect(p3only.providers).toEqual(['card-provider', 'paddle']);
  });

  it('offers the filter values that the list accepts', async () => {
    const ws = await seedShop(ctx);
    const options = await api.filterOptions(ws.owner);
    for (const provider of options.providers) expect((await api.list(ws.owner, { provider })).total).toBeGreaterThan(0);
    for (const reseller of options.resellers) await api.list(ws.owner, { resellerId: reseller.id });
    await api.list(ws.owner, { productIds: options.products.map((p) => p.id).join(','), channel: options.channels.join(','), refundStatus: options.refundStatuses.join(','), recordType: options.recordTypes.join(',') });
  });

  it('answers empty lists of resellers and providers for a workspace without sales', async () => {
    const ws = await seedWorkspace(ctx());
    const options = await api.filterOptions(ws.owner);
    expect(options.products).toHaveLength(3);
    expect(options.resellers).toEqual([]);
    expect(options.providers).toEqual([]);
    expect(options).toMatchObject(ENUMS);
  });

  it('does not offer products, resellers or providers of another workspace', async () => {
    const mine = await seedShop(ctx);
    const theirs = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      resellers: [{ key: 'x', name: 'Their Reseller' }],
      orders: [{ key: 'o', customer: 'c', channel: 'external_store', provider: 'itch', reseller: 'x', items: [{ product: 'p1', priceCents: 100 }] }],
    });
    const options = await api.filterOptions(mine.owner);
    expect(options.products.map((p) => p.id)).toEqual([mine.ids.products.p1, mine.ids.products.p2, mine.ids.products.p3]);
    expect(options.resellers.map((r) => r.id)).not.toContain(theirs.ids.resellerIds.x);
    expect(options.resellers.map((r) => r.name)).not.toContain('Their Reseller');
    expect(options.providers).not.toContain('itch');
    expect((await api.filterOptions(theirs.owner)).providers).toEqual(['itch']);
  });

  it('refuses a request without a valid token or without purchases.view', async () => {
    const ws = await seedShop(ctx, { members: [MEMBERS.outsider, { key: 'manageOnly', permissions: ['purchases.manage'], products: 'all' }] });
    expectProblem(await api.filterOptionsRaw(undefined), 401, 'UNAUTHENTICATED');
    expectProblem(await api.filterOptionsRaw('bad.token.value'), 401, 'UNAUTHENTICATED');
    expectProblem(await api.filterOptionsRaw(ws.tokens.outsider!), 403, 'FORBIDDEN');
    expectProblem(await api.filterOptionsRaw(ws.tokens.manageOnly!), 403, 'FORBIDDEN');
  });
});
