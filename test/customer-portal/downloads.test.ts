import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, seedWorkspace, type SeededWorkspace, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { buyerToken, get, PORTAL } from './portal-helpers.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'patchbay-portal-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ctx = useTestApp({ storage: new LocalStorage(dir) });

async function upload(ws: SeededWorkspace, product: string, filename: string, content: Buffer, fields: Record<string, string> = {}) {
  const form = multipart([...Object.entries(fields).map(([name, value]) => ({ name, value })), { name: 'file', value: content, filename }]);
  const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products[product]}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const link = (token: string, fileId: string) => ctx().app.inject({ method: 'POST', url: `${PORTAL}/downloads/${fileId}/link`, headers: bearer(token) });

describe('customer portal downloads', () => {
  it('lists the stored files of the products the buyer is entitled to, with version and changelog, and hands out private links', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'me' }, { key: 'other' }],
      orders: [
        { key: 'o', customer: 'me', items: [{ product: 'p1', salePriceCents: 100 }, { product: 'p2', salePriceCents: 100, refundedCents: 100 }] },
        { key: 'theirs', customer: 'other', items: [{ product: 'p3', salePriceCents: 100 }] },
      ],
      files: [{ key: 'ext', product: 'p1', filename: 'elsewhere.zip', url: 'https://cdn.example/elsewhere.zip' }],
    });
    const version = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/versions`, headers: bearer(ws.owner), payload: { version: '2.0.0', changelog: 'New filter section' } });
    expect(version.statusCode, version.body).toBe(201);
    const content = randomBytes(50_000);
    const mac = await upload(ws, 'p1', 'Synth.pkg', content, { platform: 'macos', version: '2.0.0' });
    const refunded = await upload(ws, 'p2', 'Refunded.zip', Buffer.from('x'));
    const notMine = await upload(ws, 'p3', 'Theirs.zip', Buffer.from('y'));
    const me = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);

    const list = await get(ctx(), me, '/downloads');
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().rows).toEqual([
      {
        file_id: mac,
        product_id: ws.ids.products.p1,
        product: `Product p1 ${ws.suffix}`,
        filename: 'Synth.pkg',
        platform: 'macos',
        type: 'installer',
        version: '2.0.0',
        changelog: 'New filter section',
        releasedAt: null,
        sizeBytes: 50_000,
        uploadedAt: expect.any(String),
      },
    ]);

    const answer = await link(me, mac);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toEqual({ url: expect.stringMatching(/^http:\/\/patchbay\.test\/api\/private-links\/files\/.+signature=/), filename: 'Synth.pkg', expiresIn: 300 });
    const got = await ctx().app.inject({ method: 'GET', url: answer.json().url });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(content)).toBe(true);

    // Not entitled (refunded, another buyer's product), hosted elsewhere, or another workspace's: 404.
    const elsewhere = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p1' }] }] });
    const farFile = await upload(elsewhere, 'p1', 'Far.zip', Buffer.from('z'));
    for (const fileId of [refunded, notMine, ws.ids.files.ext!, farFile, 'file_nosuchfile']) {
      const res = await link(me, fileId);
      expect(res.statusCode, fileId).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    expect((await link(me, 'bad id!')).statusCode).toBe(400);
  });

  it('drops the files of a subscription whose access has ended', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'me' }], orders: [{ key: 'o', customer: 'me', items: [{ product: 'p1' }] }] });
    await upload(ws, 'p1', 'Plugin.zip', Buffer.from('p'));
    const me = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);
    expect((await get(ctx(), me, '/downloads')).json().rows).toHaveLength(1);
    await ctx().database.db.updateTable('entitlements').set({ kind: 'subscription', starts_at: new Date(Date.now() - 86_400_000), ends_at: new Date(Date.now() - 1000) }).where('workspace_id', '=', ws.workspaceId).execute();
    expect((await get(ctx(), me, '/downloads')).json().rows).toEqual([]);
  });
});
