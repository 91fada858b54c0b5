import net, { type AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { unzipSync } from 'fflate';
import { ProductCredentials } from '../../src/modules/products/product-credentials.service.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { buyerToken, PORTAL } from '../customer-portal/portal-helpers.js';
import { bearer, type SeededWorkspace, TEST_LICENSE_KEY, type TestContext } from '../helpers/app.js';

// What the plugin package proofs share: the package as a developer downloads it, the secrets a package build
// embeds, a network the plugin cannot reach, and the buyer's side of an offline activation.

/** An origin where nothing listens (connections are refused): the plugin without network. */
export async function closedOrigin(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The product key in clear and the JWKS of product p1, as a package build reads them. */
export async function packageSecrets(c: TestContext, ws: SeededWorkspace): Promise<{ productKey: string; jwksJson: string }> {
  const { db } = c.database;
  const credentials = new ProductCredentials(db, TEST_LICENSE_KEY);
  const state = await credentials.ensure(db, operatorScope(ws.workspaceId, ws.ids.accounts.owner!), { id: ws.ids.products.p1!, app_id: ws.appIds.p1! }, 'live');
  const productKey = credentials.reveal(state.key!);
  if (!productKey) throw new Error('product key cannot be revealed');
  const keys = await c.app.inject({ method: 'GET', url: `/api/licensing/v1/keys?productAppId=${ws.appIds.p1}` });
  expect(keys.statusCode, keys.body).toBe(200);
  return { productKey, jwksJson: keys.body };
}

/** The files of product p1's package (paths below the archive's root folder): downloaded through its private link, as a developer would. */
export async function downloadPackage(c: TestContext, ws: SeededWorkspace, query: string): Promise<Map<string, Buffer>> {
  const link = await c.app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package?${query}`, headers: bearer(ws.owner) });
  expect(link.statusCode, link.body).toBe(200);
  const archive = await c.app.inject({ method: 'GET', url: link.json().url });
  expect(archive.statusCode).toBe(200);
  const files = new Map<string, Buffer>();
  for (const [name, content] of Object.entries(unzipSync(new Uint8Array(archive.rawPayload)))) {
    const at = name.indexOf('/');
    const path = name.slice(at + 1);
    if (path === '' || path === 'patchbay-manifest.json') continue;
    files.set(path, Buffer.from(content));
  }
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * The buyer's half of an offline activation, over real HTTP: signed in to the portal, they upload the machine request
 * file the plugin wrote (multipart, as the portal page sends it) to their serial and get the license file.
 */
export async function uploadMachineRequest(
  c: TestContext,
  origin: string,
  buyer: { workspaceId: number; email: string },
  serialId: number,
  request: string,
  filename = 'machine-request.patchbay-request',
): Promise<{ status: number; body: { license: string; filename: string; expiresAt: string; activation: { id: number }; code?: string } }> {
  const token = await buyerToken(c, buyer.workspaceId, buyer.email);
  const form = new FormData();
  form.append('file', new Blob([request], { type: 'application/octet-stream' }), filename);
  const res = await fetch(`${origin}${PORTAL}/licenses/${serialId}/offline-activations`, { method: 'POST', headers: bearer(token), body: form });
  return { status: res.status, body: (await res.json()) as never };
}

/** The license token of a license file, with one part's JSON changed (the signature kept): a tampered file. */
export function withClaims(license: string, change: { header?: Record<string, unknown>; payload?: Record<string, unknown> }): string {
  const file = JSON.parse(license) as { token: string };
  const [header, payload, signature] = file.token.split('.') as [string, string, string];
  const edit = (part: string, values?: Record<string, unknown>) =>
    values ? Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(part, 'base64url').toString('utf8')), ...values })).toString('base64url') : part;
  return JSON.stringify({ ...file, token: `${edit(header, change.header)}.${edit(payload, change.payload)}.${signature}` }, null, 2);
}
