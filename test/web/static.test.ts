import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';

// A build as `npm run build:web` lays it out: one HTML page per app (Vite writes the nonce
// placeholder into it), content-hashed assets with precompressed copies.
const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-web-'));
const PLACEHOLDER = '__PATCHBAY_CSP_NONCE__';
for (const app of ['console', 'partner-portal', 'portal']) {
  fs.mkdirSync(path.join(dist, app), { recursive: true });
  fs.writeFileSync(
    path.join(dist, app, 'index.html'),
    `<!doctype html><html lang="en"><head><meta property="csp-nonce" nonce="${PLACEHOLDER}"><title>${app}</title>` +
      `<script type="module" crossorigin src="/web/assets/${app}-AbC123.js" nonce="${PLACEHOLDER}"></script></head><body><div id="root"></div></body></html>`,
  );
}
fs.mkdirSync(path.join(dist, 'assets'));
const script = `console.log(${JSON.stringify('x'.repeat(4000))});`;
fs.writeFileSync(path.join(dist, 'assets', 'partner-portal-AbC123.js'), script);
fs.writeFileSync(path.join(dist, 'assets', 'partner-portal-AbC123.js.gz'), gzipSync(script));
fs.writeFileSync(path.join(dist, 'assets', 'partner-portal-AbC123.js.br'), brotliCompressSync(script));
afterAll(() => fs.rmSync(dist, { recursive: true, force: true }));

const ctx = useTestApp({ web: { dir: dist } });
const missing = useTestApp({ web: { dir: path.join(dist, 'not-built') } });
const get = (url: string, headers: Record<string, string> = {}) => ctx().app.inject({ method: 'GET', url, headers });

const nonceOf = (html: string) => /<meta property="csp-nonce" nonce="([^"]+)">/.exec(html)?.[1];

describe('the web front end, served from its build', () => {
  it('answers every client-side route of an app with the app’s page: no-store, no referrer, a strict policy with a fresh nonce', async () => {
    const first = await get('/partner-portal/invitations');
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.headers['referrer-policy']).toBe('no-referrer');
    const nonce = nonceOf(first.body);
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{24}$/);
    expect(first.body).not.toContain(PLACEHOLDER);
    const policy = String(first.headers['content-security-policy']);
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain(`style-src 'self' 'nonce-${nonce}'`);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');

    const second = await get('/partner-portal/programs/12?status=active&page=2');
    expect(second.statusCode).toBe(200);
    expect(nonceOf(second.body)).not.toBe(nonce);
  });

  it('serves each app at its own path', async () => {
    for (const [url, app] of [
      ['/console', 'console'],
      ['/console/', 'console'],
      ['/console/customers/42', 'console'],
      ['/partner-portal/', 'partner-portal'],
      ['/portal/acme-audio/', 'portal'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain(`<title>${app}</title>`);
    }
  });

  it('serves hashed assets for a year as immutable, precompressed when the browser accepts it', async () => {
    const plain = await get('/web/assets/partner-portal-AbC123.js');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toContain('javascript');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(script);
    const br = await get('/web/assets/partner-portal-AbC123.js', { 'accept-encoding': 'br, gzip' });
    expect(br.headers['content-encoding']).toBe('br');
    const gz = await get('/web/assets/partner-portal-AbC123.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
  });

  it('answers 404 for a missing asset and never serves a page or anything outside the assets', async () => {
    expect((await get('/web/assets/nope-123.js')).statusCode).toBe(404);
    for (const url of ['/web/assets/../partner-portal/index.html', '/web/assets/%2e%2e/partner-portal/index.html', '/web/partner-portal/index.html']) {
      const res = await get(url);
      expect([403, 404], url).toContain(res.statusCode);
      expect(res.body, url).not.toContain('<title>');
    }
  });

  it('leaves the API alone: an unknown /api path is still a JSON 404', async () => {
    const res = await get('/api/partner-portal/nope');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('the web front end without a build', () => {
  it('answers its pages with a 503 that says how to build, while the API works', async () => {
    const page = await missing().app.inject({ method: 'GET', url: '/partner-portal/sign-in' });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('npm run build:web');
    expect((await missing().app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
