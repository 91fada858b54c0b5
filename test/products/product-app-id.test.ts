import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

// A plugin developer meets the product's public id as `productAppId` everywhere else (the licensing
// runtime, the fixtures output's `appIds`, the banner); product answers carry it under that name,
// and under `appId` as before.

const ctx = useTestApp();

describe('productAppId on product answers', () => {
  it('is on the list rows, the single product and the created product, equal to appId and to what the runtime takes', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const list = await ctx().app.inject({ method: 'GET', url: '/api/developer/products', headers: bearer(ws.owner) });
    expect(list.statusCode).toBe(200);
    const row = list.json().rows.find((r: { id: number }) => r.id === ws.ids.products.p1);
    expect(row).toMatchObject({ productAppId: ws.appIds.p1, appId: ws.appIds.p1 });

    const one = await ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}`, headers: bearer(ws.owner) });
    expect(one.json()).toMatchObject({ productAppId: ws.appIds.p1, appId: ws.appIds.p1 });

    const created = await ctx().app.inject({ method: 'POST', url: '/api/developer/products', headers: bearer(ws.owner), payload: { name: 'New synth', priceCents: 4900, currency: 'usd' } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().productAppId).toMatch(/\S/);
    expect(created.json().appId).toBe(created.json().productAppId);

    // The id on the row is the one the licensing runtime takes.
    const runtime = await ctx().app.inject({
      method: 'POST',
      url: '/api/licensing/v1/activate',
      payload: { productAppId: row.productAppId, serial: ws.serialCodes.s, machineId: 'machine-1' },
    });
    expect(runtime.statusCode, runtime.body).toBe(201);
    expect(runtime.json().activation).toMatchObject({ machineId: 'machine-1' });
  });
});
