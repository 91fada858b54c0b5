import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// Regression tests for inputs that once answered 500: NUL characters (PostgreSQL refuses them in
// text), unpaired surrogates, malformed CSV and multipart bodies, oversized headers and URLs.

const ctx = useTestApp();

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ code, requestId: expect.any(String) });
}

describe('text with NUL characters or unpaired surrogates', () => {
  it('answers 400 INVALID_TEXT for a NUL in a JSON body, naming the field', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p1, email: 'nul@x.test', reason: 'support\u0000case' },
    });
    expectProblem(res, 400, 'INVALID_TEXT');
    expect(res.json().errors).toEqual([{ path: 'body/reason', message: expect.stringMatching(/NUL/) }]);
  });

  it('answers 400 for a NUL in a JSON key and for an unpaired surrogate', async () => {
    const ws = await seedWorkspace(ctx());
    const key = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/serials/generate',
      headers: { ...bearer(ws.owner), 'content-type': 'application/json' },
      payload: `{"productId": ${ws.ids.products.p1}, "no\\u0000tes": "x"}`,
    });
    expectProblem(key, 400, 'INVALID_TEXT');
    const surrogate = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/serials/generate',
      headers: { ...bearer(ws.owner), 'content-type': 'application/json' },
      payload: `{"productId": ${ws.ids.products.p1}, "notes": "half \\ud800 pair"}`,
    });
    expectProblem(surrogate, 400, 'INVALID_TEXT');
  });

  it('answers 400 for a NUL in a search, on the list and on the export (before any CSV is sent)', async () => {
    const ws = await seedWorkspace(ctx());
    for (const url of ['/api/developer/customers', '/api/developer/customers/export', '/api/developer/serials', '/api/developer/purchases/export']) {
      const res = await ctx().app.inject({ method: 'GET', url: `${url}?search=a%00b`, headers: bearer(ws.owner) });
      expectProblem(res, 400, 'INVALID_TEXT');
    }
  });

  it('answers 400 on the public licensing runtime', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    for (const path of ['activate', 'validate', 'deactivate']) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: `/api/licensing/v1/${path}`,
        payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'machine\u0000id' },
      });
      expectProblem(res, 400, 'INVALID_TEXT');
    }
  });

  it('answers 400 INVALID_CSV for a NUL inside a CSV cell, with its line and column', async () => {
    const ws = await seedWorkspace(ctx());
    const form = multipart([{ name: 'file', value: 'email,firstName\nnul@x.test,An\u0000n\n', filename: 'c.csv' }]);
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expectProblem(res, 400, 'INVALID_CSV');
    expect(res.json()).toMatchObject({ line: 2, column: 'firstname' });
  });
});

describe('malformed CSV and multipart bodies', () => {
  const importCsv = async (token: string, csv: string) => {
    const form = multipart([{ name: 'file', value: csv, filename: 'c.csv' }]);
    return ctx().app.inject({ method: 'POST', url: '/api/developer/serials/import', headers: { ...bearer(token), ...form.headers }, payload: form.payload });
  };

  it('answers 400 INVALID_CSV with line and column for a quote inside an unquoted field', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await importCsv(ws.owner, 'serialCode,productId\nAB"CD-1234,1\n');
    expectProblem(res, 400, 'INVALID_CSV');
    expect(res.json()).toMatchObject({ line: 2, column: 'serialcode' });
  });

  it('answers 400 INVALID_CSV for an unterminated quote', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await importCsv(ws.owner, 'serialCode\n"ABCD-1234\n');
    expectProblem(res, 400, 'INVALID_CSV');
    expect(res.json().line).toBe(2);
  });

  it('answers 400 MALFORMED_MULTIPART without a boundary and for a truncated body', async () => {
    const ws = await seedWorkspace(ctx());
    const noBoundary = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: { ...bearer(ws.owner), 'content-type': 'multipart/form-data' },
      payload: 'email\na@x.test\n',
    });
    expectProblem(noBoundary, 400, 'MALFORMED_MULTIPART');

    const form = multipart([{ name: 'file', value: 'email\na@x.test\nb@x.test\n', filename: 'c.csv' }]);
    const truncated = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: { ...bearer(ws.owner), ...form.headers },
      payload: form.payload.subarray(0, form.payload.length - 20),
    });
    expectProblem(truncated, 400, 'MALFORMED_MULTIPART');
  });
});

describe('oversized requests', () => {
  it('answers problem+json for headers over 16 KB (431) and URLs that are too long (414)', async () => {
    const { app } = ctx();
    const address = await app.listen({ port: 0, host: '127.0.0.1' }).catch(() => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
    const big = await fetch(`${address}/healthz`, { headers: { 'x-filler': 'a'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(big.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await big.json()).toMatchObject({ code: 'HEADERS_TOO_LARGE', requestId: expect.any(String) });

    const long = await fetch(`${address}/api/developer/serials/${'9'.repeat(9000)}/events`);
    expect(long.status).toBe(414);
    expect(long.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await long.json()).toMatchObject({ code: 'URI_TOO_LONG', requestId: expect.any(String) });
  });
});
