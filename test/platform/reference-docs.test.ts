import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorsMarkdown, generateReferenceDocs } from '../../src/operator/reference-docs.js';
import { errorCatalogue } from '../../src/platform/http/errors.js';
import { ROW_ERROR_CODES } from '../../src/platform/import/errors.js';
import { useTestApp } from '../helpers/app.js';

const ctx = useTestApp();
const root = new URL('../../', import.meta.url);
const STALE = 'is stale: run `npm run docs:generate` and commit it';

describe('generated reference docs', () => {
  it('docs/errors.md and docs/permissions.md are what the code generates', async () => {
    for (const doc of await generateReferenceDocs()) {
      expect(fs.readFileSync(new URL(doc.path, root), 'utf8') === doc.content, `${doc.path} ${STALE}`).toBe(true);
    }
  }, 120_000);

  it('has an anchor and a meaning for every error code and import row code', () => {
    const markdown = errorsMarkdown();
    for (const [code, spec] of errorCatalogue()) {
      expect(markdown).toContain(`| <a id="${code}"></a>\`${code}\` | ${spec.status} | ${(spec.description ?? spec.title).replaceAll('|', '\\|')} |`);
    }
    for (const [code, meaning] of Object.entries(ROW_ERROR_CODES)) expect(markdown).toContain(`\`${code}\` | ${meaning} |`);
  });
});

describe('problem type URLs', () => {
  it("point at the code's entry of this deployment's /docs/errors page", async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(res.statusCode).toBe(404);
    // buildTestApp's PUBLIC_BASE_URL
    expect(res.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND', type: 'http://patchbay.test/docs/errors#ROUTE_NOT_FOUND' });
  });

  it('serves the catalogue with one anchor per code, without a credential', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/docs/errors' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    for (const [code, spec] of errorCatalogue()) expect(res.body).toContain(`<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${spec.status}</td>`);
    expect(res.body).toContain('<code>INVALID_TEXT</code>');
    expect(res.body).not.toContain('`');
  });

  it('uses the same base on answers written to the raw socket (431)', async () => {
    const { app } = ctx();
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const big = await fetch(`${address}/healthz`, { headers: { 'x-filler': 'a'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(await big.json()).toMatchObject({ code: 'HEADERS_TOO_LARGE', type: 'http://patchbay.test/docs/errors#HEADERS_TOO_LARGE' });
  });
});
