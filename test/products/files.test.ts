import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage, NoStorage, S3Storage } from '../../src/platform/storage/storage.js';
import { bearer, buildTestApp, seedWorkspace, type SeededWorkspace, type TestContext, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { startS3Server } from '../helpers/s3.js';
import { DeleteStoredFileJob } from '../../src/modules/products/products.jobs.js';
import { listJobs } from '../../src/platform/jobs/jobs.testing.js';

const MEMBERS = [
  { key: 'viewer', permissions: ['product_files.view'], products: 'all' as const },
  { key: 'scoped', permissions: ['product_files.view', 'product_files.manage'], products: ['p1'] },
  { key: 'none', permissions: ['products.view'], products: 'all' as const },
];

function filesSuite(name: string, makeContext: () => () => TestContext) {
  describe(`delivery files (${name})`, () => {
    const ctx = makeContext();
    const base = (ws: SeededWorkspace, product = ws.ids.products.p1) => `/api/developer/products/${product}/files`;
    const upload = (ws: SeededWorkspace, content: Buffer, fields: Record<string, string> = {}, token = ws.owner, product = ws.ids.products.p1) => {
      const form = multipart([
        ...Object.entries(fields).map(([fieldName, value]) => ({ name: fieldName, value })),
        { name: 'file', value: content, filename: 'Plugin Installer.pkg', contentType: 'application/octet-stream' },
      ]);
      return ctx().app.inject({ method: 'POST', url: base(ws, product), headers: { ...bearer(token), ...form.headers }, payload: form.payload });
    };
    const download = (url: string) => ctx().app.inject({ method: 'GET', url });

    it('streams an upload into private storage with its SHA-256, lists it as metadata only, and downloads it through a private link', async () => {
      const ws = await seedWorkspace(ctx());
      const content = randomBytes(300_000);
      const res = await upload(ws, content, { platform: 'macos', type: 'installer', version: '1.2.3' });
      expect(res.statusCode, res.body).toBe(201);
      const file = res.json();
      expect(file).toMatchObject({
        filename: 'Plugin Installer.pkg',
        platform: 'macos',
        type: 'installer',
        version: '1.2.3',
        sizeBytes: 300_000,
        managed: true,
        deliveryMode: 'private_link',
        sha256: createHash('sha256').update(content).digest('hex'),
      });
      const listed = (await ctx().app.inject({ method: 'GET', url: base(ws), headers: bearer(ws.owner) })).json();
      expect(listed.files).toEqual([file]);
      expect(JSON.stringify(listed)).not.toMatch(/private-links|signature/);

      const link = await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${file.id}/link`, headers: bearer(ws.owner) });
      expect(link.statusCode).toBe(200);
      expect(link.json()).toMatchObject({ filename: 'Plugin Installer.pkg', expiresIn: 300, url: expect.stringMatching(/^http:\/\/patchbay\.test\/api\/private-links\/files\//) });
      const got = await download(link.json().url);
      expect(got.statusCode).toBe(200);
      expect(got.rawPayload.equals(content)).toBe(true);
      expect(got.headers['cache-control']).toBe('private, no-store');
      expect(got.headers['content-disposition']).toMatch(/^attachment; filename="Plugin Installer.pkg"/);
      // Usable again within its lifetime; each completed download is counted.
      expect((await download(link.json().url)).statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const product = await ctx().database.db.selectFrom('products').where('id', '=', ws.ids.products.p1!).select('downloads_total').executeTakeFirstOrThrow();
      expect(Number(product.downloads_total)).toBe(2);
    });

    it('answers 404 for a tampered link and 410 for an expired one', async () => {
      const ws = await seedWorkspace(ctx());
      const file = (await upload(ws, Buffer.from('bytes'))).json();
      const { url } = (await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${file.id}/link`, headers: bearer(ws.owner) })).json();
      const tampered = url.replace(/signature=./, (m: string) => `${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`);
      expect((await download(tampered)).statusCode).toBe(404);
      expect((await download(url.replace(/expires=\d+/, 'expires=9999999999'))).statusCode).toBe(404);
      expect((await download(url.split('?')[0])).statusCode).toBe(404);
      const expired = ctx().app.privateLinks.signer.sign(`/api/private-links/files/${file.id}`, -1);
      const gone = await download(expired);
      expect(gone.statusCode).toBe(410);
      expect(gone.json().code).toBe('LINK_EXPIRED');
    });

    it('deletes the record at once and the stored bytes through a job; old links stop working', async () => {
      const ws = await seedWorkspace(ctx());
      const file = (await upload(ws, Buffer.from('to be deleted'))).json();
      const { url } = (await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${file.id}/link`, headers: bearer(ws.owner) })).json();
      const del = await ctx().app.inject({ method: 'DELETE', url: `${base(ws)}/${file.id}`, headers: bearer(ws.owner) });
      expect(del.json()).toEqual({ deleted: true, id: file.id });
      await ctx().app.jobs.idle();
      expect((await download(url)).statusCode).toBe(404);
      expect((await ctx().app.inject({ method: 'DELETE', url: `${base(ws)}/${file.id}`, headers: bearer(ws.owner) })).statusCode).toBe(404);
      const [job] = await listJobs(ctx().database.db, { job: DeleteStoredFileJob, workspaceId: ws.workspaceId });
      expect(job!.state).toBe('succeeded');
    });

    it('registers an external file by URL; it has no private link (409 EXTERNAL_FILE)', async () => {
      const ws = await seedWorkspace(ctx());
      const res = await ctx().app.inject({
        method: 'POST',
        url: base(ws),
        headers: bearer(ws.owner),
        payload: { filename: 'manual.pdf', url: 'https://cdn.example/manual.pdf', type: 'manual', platform: 'any' },
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ managed: false, deliveryMode: 'external_url', externalUrl: 'https://cdn.example/manual.pdf', sha256: null });
      const link = await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${res.json().id}/link`, headers: bearer(ws.owner) });
      expect(link.statusCode).toBe(409);
      expect(link.json()).toMatchObject({ code: 'EXTERNAL_FILE', externalUrl: 'https://cdn.example/manual.pdf' });
    });

    it('enforces the permission matrix: 401, 403 per route, 404 for foreign and unassigned products and files', async () => {
      const ws = await seedWorkspace(ctx(), { members: MEMBERS });
      const other = await seedWorkspace(ctx());
      const file = (await upload(ws, Buffer.from('x'))).json();
      const foreignFile = (await upload(other, Buffer.from('y'))).json();
      expect((await ctx().app.inject({ method: 'GET', url: base(ws) })).statusCode).toBe(401);
      expect((await ctx().app.inject({ method: 'GET', url: base(ws), headers: bearer(ws.tokens.none!) })).statusCode).toBe(403);
      expect((await upload(ws, Buffer.from('x'), {}, ws.tokens.viewer!)).statusCode).toBe(403);
      expect((await ctx().app.inject({ method: 'DELETE', url: `${base(ws)}/${file.id}`, headers: bearer(ws.tokens.viewer!) })).statusCode).toBe(403);
      expect((await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${file.id}/link`, headers: bearer(ws.tokens.none!) })).statusCode).toBe(403);
      expect((await ctx().app.inject({ method: 'GET', url: base(other), headers: bearer(ws.owner) })).statusCode).toBe(404);
      expect((await ctx().app.inject({ method: 'POST', url: `${base(ws)}/${foreignFile.id}/link`, headers: bearer(ws.owner) })).statusCode).toBe(404);
      expect((await ctx().app.inject({ method: 'POST', url: `${base(other)}/${foreignFile.id}/link`, headers: bearer(ws.owner) })).statusCode).toBe(404);
      expect((await ctx().app.inject({ method: 'GET', url: base(ws, ws.ids.products.p2), headers: bearer(ws.tokens.scoped!) })).statusCode).toBe(404);
      expect((await upload(ws, Buffer.from('x'), {}, ws.tokens.scoped!, ws.ids.products.p2)).statusCode).toBe(404);
      expect((await upload(ws, Buffer.from('x'), {}, ws.tokens.scoped!, ws.ids.products.p1)).statusCode).toBe(201);
    });

    it('refuses bad fields, a missing file part and a bad external URL with 400, and leaves nothing stored', async () => {
      const ws = await seedWorkspace(ctx());
      const bad = await upload(ws, Buffer.from('x'), { platform: 'amiga' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors).toEqual([{ path: 'body/platform', message: expect.stringContaining('macos') }]);
      const noFile = multipart([{ name: 'platform', value: 'macos' }]);
      expect((await ctx().app.inject({ method: 'POST', url: base(ws), headers: { ...bearer(ws.owner), ...noFile.headers }, payload: noFile.payload })).statusCode).toBe(400);
      for (const payload of [{ filename: 'a', url: 'http://insecure.example/a' }, { filename: 'a' }, { filename: '', url: 'https://x.example/a' }]) {
        expect((await ctx().app.inject({ method: 'POST', url: base(ws), headers: bearer(ws.owner), payload })).statusCode, JSON.stringify(payload)).toBe(400);
      }
      expect((await ctx().app.inject({ method: 'GET', url: base(ws), headers: bearer(ws.owner) })).json().files).toEqual([]);
    });
  });
}

const localDir = mkdtempSync(path.join(os.tmpdir(), 'patchbay-files-'));
afterAll(async () => {
  await fs.rm(localDir, { recursive: true, force: true });
});

filesSuite('local storage', () => useTestApp({ storage: new LocalStorage(localDir) }));

describe('delivery files on an S3-compatible server', () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let ctx: TestContext;
  beforeAll(async () => {
    s3 = await startS3Server('patchbay-files');
    ctx = await buildTestApp({
      storage: new S3Storage({ bucket: 'patchbay-files', endpoint: s3.endpoint, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true, prefix: 'test/' }),
    });
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.database.close();
    await s3?.stop();
  });

  it('uploads, downloads through a link and deletes through the bucket', async () => {
    const ws = await seedWorkspace(ctx);
    const content = randomBytes(6 * 1024 * 1024 + 17);
    const form = multipart([{ name: 'file', value: content, filename: 'big.zip' }]);
    const res = await ctx.app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(res.statusCode, res.body).toBe(201);
    const file = res.json();
    expect(file.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    const { url } = (await ctx.app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/files/${file.id}/link`, headers: bearer(ws.owner) })).json();
    const got = await ctx.app.inject({ method: 'GET', url });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(content)).toBe(true);
    await ctx.app.inject({ method: 'DELETE', url: `/api/developer/products/${ws.ids.products.p1}/files/${file.id}`, headers: bearer(ws.owner) });
    await ctx.app.jobs.idle();
    expect((await ctx.app.inject({ method: 'GET', url })).statusCode).toBe(404);
  });

  it('answers 503 PRIVATE_PACKAGE_STORAGE_REQUIRED when the bucket cannot be reached, with no public fallback', async () => {
    const down = await buildTestApp({
      storage: new S3Storage({ bucket: 'patchbay-files', endpoint: 'http://127.0.0.1:9', region: 'us-east-1', accessKeyId: 'x', secretAccessKey: 'y', forcePathStyle: true, prefix: '' }),
    });
    try {
      const ws = await seedWorkspace(down);
      const form = multipart([{ name: 'file', value: Buffer.from('x'), filename: 'a.zip' }]);
      const res = await down.app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('PRIVATE_PACKAGE_STORAGE_REQUIRED');
      expect(JSON.stringify(res.json())).not.toMatch(/https?:\/\/(?!patchbay)/);
    } finally {
      await down.app.close();
      await down.database.close();
    }
  });
});

describe('delivery files without storage', () => {
  const ctx = useTestApp({ storage: new NoStorage() });
  it('answers 503 PRIVATE_PACKAGE_STORAGE_REQUIRED for uploads, while external files still register', async () => {
    const ws = await seedWorkspace(ctx());
    const form = multipart([{ name: 'file', value: Buffer.from('x'), filename: 'a.zip' }]);
    const res = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('PRIVATE_PACKAGE_STORAGE_REQUIRED');
    expect(res.headers['retry-after']).toBeDefined();
    const external = await ctx().app.inject({
      method: 'POST',
      url: `/api/developer/products/${ws.ids.products.p1}/files`,
      headers: bearer(ws.owner),
      payload: { filename: 'a.zip', url: 'https://cdn.example/a.zip' },
    });
    expect(external.statusCode).toBe(201);
  });
});
