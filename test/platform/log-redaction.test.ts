import { Type } from '@sinclair/typebox';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { loggerOptions } from '../../src/platform/http/logging.js';
import { defineJob } from '../../src/platform/jobs/define-job.js';
import { findJob } from '../../src/platform/jobs/jobs.testing.js';
import { JobRunner, PermanentJobError } from '../../src/platform/jobs/runner.js';
import { redactText, redactUrl } from '../../src/platform/logging/redact.js';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, seedWorkspace, type SeededWorkspace, unique, useTestApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log-capture.js';
import { multipart } from '../helpers/multipart.js';
import { buyerToken } from '../customer-portal/portal-helpers.js';

// Finding 3 of issue 19: the request log held whole private links (a live product key for 300 s).
// One rule redacts credentials from every logged URL: request lines, error messages, job errors.

const log = captureLog();
const storage = new LocalStorage(mkdtempSync(path.join(os.tmpdir(), 'patchbay-redaction-')));
const ctx = useTestApp({ storage, loggerInstance: log.logger, packages: { downloadsPerMinute: 1000 } });

const SIGNATURE = /[?&]signature=([A-Za-z0-9_-]{43})/;
const LINK = { $ref: '#/components/schemas/PrivateLink' };

/** How to get a link from each route that answers one; the walk below fails for a route missing here. */
const linkRoutes: Record<string, (ws: SeededWorkspace) => Promise<{ statusCode: number; body: string; json: () => { url: string } }>> = {
  'POST /api/developer/products/{productId}/files/{fileId}/link': async (ws) => {
    const form = multipart([{ name: 'file', value: Buffer.from(`installer ${ws.suffix}`), filename: 'Installer.pkg', contentType: 'application/octet-stream' }]);
    const p1 = ws.ids.products.p1;
    const file = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${p1}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(file.statusCode, file.body).toBe(201);
    return ctx().app.inject({ method: 'POST', url: `/api/developer/products/${p1}/files/${file.json().id}/link`, headers: bearer(ws.owner) });
  },
  'GET /api/developer/products/{productId}/plugin-package': (ws) =>
    ctx().app.inject({ method: 'GET', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package?variant=pluginscript`, headers: bearer(ws.owner) }),
  'POST /api/developer/products/{productId}/plugin-package/generate': (ws) =>
    ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package/generate`, headers: bearer(ws.owner), payload: { variant: 'pluginscript' } }),
  'POST /api/developer/products/{productId}/plugin-package/regenerate': (ws) =>
    ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/plugin-package/regenerate`, headers: bearer(ws.owner), payload: { variant: 'native' } }),
  'GET /api/developer/storefront/plugin-package': (ws) => ctx().app.inject({ method: 'GET', url: '/api/developer/storefront/plugin-package', headers: bearer(ws.owner) }),
  // A buyer's download: a file of a product the buyer bought, through a buyer session.
  'POST /api/customer-portal/downloads/{fileId}/link': async (ws) => {
    const form = multipart([{ name: 'file', value: Buffer.from(`installer ${ws.suffix}`), filename: 'Installer.pkg', contentType: 'application/octet-stream' }]);
    const file = await ctx().app.inject({ method: 'POST', url: `/api/developer/products/${ws.ids.products.p1}/files`, headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expect(file.statusCode, file.body).toBe(201);
    const buyer = await buyerToken(ctx(), ws.workspaceId, `c0-${ws.suffix}@cust.test`);
    return ctx().app.inject({ method: 'POST', url: `/api/customer-portal/downloads/${file.json().id}/link`, headers: bearer(buyer) });
  },
};

describe('private links in the log', () => {
  it('walks every route that answers a private link', async () => {
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
    };
    const answering = Object.entries(doc.paths).flatMap(([route, operations]) =>
      Object.entries(operations)
        .filter(([, op]) => JSON.stringify(op.responses?.['200']?.content?.['application/json']?.schema) === JSON.stringify(LINK))
        .map(([method]) => `${method.toUpperCase()} ${route}`),
    );
    expect(answering.sort()).toEqual(Object.keys(linkRoutes).sort());
  });

  it.each(Object.keys(linkRoutes))('%s answers an absolute link that downloads, and its signature never reaches the log', async (route) => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'buyer' }], orders: [{ key: 'o', customer: 'buyer', items: [{ product: 'p1', salePriceCents: 100 }] }] });
    const answer = await linkRoutes[route]!(ws);
    expect(answer.statusCode, answer.body).toBe(200);
    const { url } = answer.json();
    expect(url).toMatch(/^http:\/\/patchbay\.test\/api\/private-links\/(files|packages)\/[^?]+\?expires=\d+&signature=/);
    const signature = SIGNATURE.exec(url)![1]!;

    const download = await ctx().app.inject({ method: 'GET', url });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.length).toBeGreaterThan(0);
    // A tampered and an expired link are logged the same way.
    expect((await ctx().app.inject({ method: 'GET', url: url.replace(signature, `${signature.slice(0, -2)}AA`) })).statusCode).toBe(404);
    const [pathname] = new URL(url).pathname.split('?');
    const expired = ctx().app.privateLinks.signer.sign(pathname!, -10);
    expect((await ctx().app.inject({ method: 'GET', url: expired })).statusCode).toBe(410);

    const text = log.text();
    expect(text).toContain(`${pathname}?expires=`);
    expect(text).toContain('signature=[redacted]');
    expect(text).not.toContain(signature);
    expect(text).not.toContain(SIGNATURE.exec(expired)![1]!);
  });
});

describe('credentials in other log lines', () => {
  it('redacts error messages and stacks, free-text messages, and job errors (in the log and in jobs.last_error)', async () => {
    const secret = `S3cr3t${unique()}${unique()}${unique()}${unique()}xyz`;
    const url = `https://patchbay.test/api/private-links/packages/pkg_1?expires=1&signature=${secret}`;
    const kind = defineJob(`test.redaction-${unique()}`, Type.Object({}));
    const runner = new JobRunner(ctx().database.db, { pollIntervalMs: 3_600_000, log: log.logger });
    runner.handle(kind, async () => {
      throw new PermanentJobError(`could not fetch ${url}`);
    });
    const id = await inTransaction(ctx().database.db, (tx) => kind.enqueue(tx, {}, { workspaceId: null }));
    runner.start();
    await runner.idle();
    await runner.stop();
    log.logger.error({ err: new Error(`upstream refused ${url}`) }, 'unhandled error');
    log.logger.warn(`retrying ${url}`);

    expect((await findJob(ctx().database.db, id))?.last_error).toBe(`could not fetch ${url.replace(secret, '[redacted]')}`);
    expect(log.text()).not.toContain(secret);
    expect(log.text().match(/signature=\[redacted\]/g)?.length).toBeGreaterThanOrEqual(3);
  });

  it('keeps the redaction in the serialisers the server uses', () => {
    const options = loggerOptions('info');
    const serialised = options.serializers.err(new Error('GET /x?token=abc&limit=5 failed')) as { message: string; stack: string };
    expect(serialised.message).toBe('GET /x?token=[redacted]&limit=5 failed');
    expect(serialised.stack).not.toContain('abc');
  });
});

describe('redactUrl and redactText', () => {
  it.each([
    ['/api/private-links/files/f_1?expires=17&signature=AbC-_9', '/api/private-links/files/f_1?expires=17&signature=[redacted]'],
    ['/x?token=abc&access_token=def&X-Amz-Signature=ghi&page=2', '/x?token=[redacted]&access_token=[redacted]&X-Amz-Signature=[redacted]&page=2'],
    ['/api/developer/customers?search=ann%40x.test&limit=5', '/api/developer/customers?search=[redacted]&limit=5'],
    ['/x?email=a@b.c&first_name=Ann', '/x?email=[redacted]&first_name=[redacted]'],
    ['/x?signature', '/x?signature'],
    ['/api/partner-portal/programs/invitations/abcDEF_123-xyz', '/api/partner-portal/programs/invitations/[redacted]'],
    // Not a route: still redacted, since the prefix is a credential route's.
    ['/api/partner-portal/programs/invitations/abc/extra?x=1', '/api/partner-portal/programs/invitations/[redacted]/extra?x=1'],
    ['/api/partner-portal/programs/invitations/accept', '/api/partner-portal/programs/invitations/accept'],
    ['/api/payouts/sandbox/onboarding/sbo_abc123', '/api/payouts/sandbox/onboarding/[redacted]'],
    ['/anything/psl_0123456789abcdefghij', '/anything/psl_[redacted]'],
  ])('%s → %s', (url, expected) => {
    // The app built above registered its routes, so the credential routes are known.
    expect(redactUrl(url)).toBe(expected);
  });

  it('decides by the matched route when there is one', () => {
    expect(redactUrl('/api/partner-portal/programs/invitations/accept', '/api/partner-portal/programs/invitations/accept')).toBe('/api/partner-portal/programs/invitations/accept');
    expect(redactUrl('/api/partner-portal/programs/invitations/T0k3n', '/api/partner-portal/programs/invitations/:token')).toBe('/api/partner-portal/programs/invitations/[redacted]');
  });

  it('finds credentials inside text', () => {
    expect(redactText('see https://h/api/partner-portal/programs/invitations/T0k3n and http://h/p?a=1&signature=xyz, pk_live_0123456789abcdefghijklmn')).toBe(
      'see https://h/api/partner-portal/programs/invitations/[redacted] and http://h/p?a=1&signature=[redacted], pk_live_[redacted]',
    );
    expect(redactText('https://portal/invitations#token=abc')).toBe('https://portal/invitations#token=[redacted]');
    expect(redactText('buyer pcl_0123456789abcdefghij session pcs_0123456789abcdefghij')).toBe('buyer pcl_[redacted] session pcs_[redacted]');
  });
});
