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

const latin1 = (text: string) => Buffer.from(text, 'latin1');

describe('bytes that are not UTF-8', () => {
  const grant = (token: string, payload: Buffer) =>
    ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload,
    });

  it('answers 400 INVALID_UTF8 for a JSON body, with the byte offset and the field', async () => {
    const ws = await seedWorkspace(ctx());
    // "Müller" in Latin-1: the ü is the single byte 0xFC, which no UTF-8 character starts with.
    const head = `{"productId": ${ws.ids.products.p1}, "email": "utf8@x.test", "reason": "M`;
    const res = await grant(ws.owner, Buffer.concat([Buffer.from(head), latin1('üller"}')]));
    expectProblem(res, 400, 'INVALID_UTF8');
    expect(res.json()).toMatchObject({ offset: Buffer.byteLength(head), errors: [{ path: 'body/reason', message: expect.stringMatching(/not UTF-8/) }] });
    // Nothing was granted with a replacement character in it.
    const purchases = await ctx().app.inject({ method: 'GET', url: '/api/developer/purchases', headers: bearer(ws.owner) });
    expect(purchases.json().total).toBe(0);
  });

  it('names a key that is not UTF-8, and gives the offset alone when the bytes are outside any string', async () => {
    const ws = await seedWorkspace(ctx());
    const key = await grant(ws.owner, Buffer.concat([Buffer.from(`{"productId": ${ws.ids.products.p1}, "email": "k@x.test", "r`), latin1('é'), Buffer.from('ason": "x"}')]));
    expectProblem(key, 400, 'INVALID_UTF8');
    expect(key.json().errors[0].path).toMatch(/^body\/r\uFFFDason$/);
    const outside = await grant(ws.owner, Buffer.concat([Buffer.from('{"productId": 1'), Buffer.from([0xc3, 0x28]), Buffer.from('}')]));
    expectProblem(outside, 400, 'INVALID_UTF8');
    expect(outside.json()).toMatchObject({ offset: 15 });
    expect(outside.json().errors).toBeUndefined();
  });

  it('refuses an encoded surrogate and a character cut off at the end, and accepts real UTF-8 with a byte order mark', async () => {
    const ws = await seedWorkspace(ctx());
    const base = `{"productId": ${ws.ids.products.p1}, "email": "s@x.test", "reason": "`;
    // U+D800 encoded as if it were a character (CESU-8): not UTF-8.
    expectProblem(await grant(ws.owner, Buffer.concat([Buffer.from(base), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])), 400, 'INVALID_UTF8');
    expectProblem(await grant(ws.owner, Buffer.concat([Buffer.from(`${base}x"}`), Buffer.from([0xe2, 0x82])])), 400, 'INVALID_UTF8');
    const fine = await grant(ws.owner, Buffer.from(`\uFEFF${base}Grüße 🎛️"}`));
    expect(fine.statusCode, fine.body).toBe(201);
  });

  it('answers 400 INVALID_UTF8 for a large JSON import body, with the offset', async () => {
    const ws = await seedWorkspace(ctx());
    const customers = Array.from({ length: 5_000 }, (_, i) => ({ email: `big-${i}@x.test`, firstName: `Name ${i}` }));
    const text = Buffer.from(JSON.stringify({ customers }));
    const at = text.indexOf('Name 4000');
    text[at] = 0xff;
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), 'content-type': 'application/json' }, payload: text });
    expectProblem(res, 400, 'INVALID_UTF8');
    expect(res.json().offset).toBe(at);
  });

  it('answers 400 INVALID_UTF8 for a CSV cell, naming the row and the column', async () => {
    const ws = await seedWorkspace(ctx());
    const csv = Buffer.concat([Buffer.from('email,firstName,lastName\nok@x.test,Ann,Lee\nbad@x.test,Jos'), latin1('é'), Buffer.from(',Ruiz\n')]);
    const form = multipart([{ name: 'file', value: csv, filename: 'c.csv' }]);
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expectProblem(res, 400, 'INVALID_UTF8');
    expect(res.json()).toMatchObject({ row: 2, line: 3, column: 'firstname' });
    const customers = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
    expect(customers.json().total).toBe(0);
  });

  it('names the header line, and reads UTF-8 with a byte order mark and multi-byte characters unchanged', async () => {
    const ws = await seedWorkspace(ctx());
    const header = Buffer.concat([Buffer.from('email,Pr'), latin1('é'), Buffer.from('nom\nh@x.test,Ann\n')]);
    const headerForm = multipart([{ name: 'file', value: header, filename: 'c.csv' }]);
    const bad = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...headerForm.headers }, payload: headerForm.payload });
    expectProblem(bad, 400, 'INVALID_UTF8');
    expect(bad.json()).toMatchObject({ row: 0, column: '2' });

    const good = multipart([{ name: 'file', value: Buffer.from('\uFEFFemail,firstName\nzoe@x.test,Zoë 🎹\n'), filename: 'c.csv' }]);
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...good.headers }, payload: good.payload });
    expect(res.statusCode, res.body).toBe(201);
    const list = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers?search=zoe', headers: bearer(ws.owner) });
    expect(list.json().rows[0]).toMatchObject({ first_name: 'Zoë 🎹' });
  });

  it('refuses a productMappings form field the form parser had to repair', async () => {
    const ws = await seedWorkspace(ctx());
    const form = multipart([
      { name: 'productMappings', value: Buffer.concat([Buffer.from('{"Caf'), latin1('é'), Buffer.from(`": ${ws.ids.products.p1}}`)]) },
      { name: 'file', value: 'email\nm@x.test\n', filename: 'c.csv' },
    ]);
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(ws.owner), ...form.headers }, payload: form.payload });
    expectProblem(res, 400, 'INVALID_UTF8');
    expect(res.json().errors).toEqual([{ path: 'body/productMappings', message: expect.stringMatching(/UTF-8/) }]);
  });
});

describe('large JSON bodies, parsed in slices', () => {
  const importJson = (token: string, payload: string) =>
    ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: { ...bearer(token), 'content-type': 'application/json' }, payload });
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `slice-${i}@x.test`, firstName: `Name ${i}` }));

  it('refuses broken JSON, a prototype key and a NUL escape as the small-body parser does', async () => {
    const ws = await seedWorkspace(ctx());
    const text = JSON.stringify({ customers: rows(5_000) });
    expectProblem(await importJson(ws.owner, text.slice(0, -3)), 400, 'MALFORMED_JSON');
    expectProblem(await importJson(ws.owner, text.replace('"firstName":"Name 4000"', '"__proto__":{"x":1}')), 400, 'MALFORMED_JSON');
    const nul = await importJson(ws.owner, text.replace('"Name 4000"', '"Name\\u00004000"'));
    expectProblem(nul, 400, 'INVALID_TEXT');
    expect(nul.json().errors).toEqual([{ path: 'body/customers/4000/firstName', message: expect.stringMatching(/NUL/) }]);
  });

  it('names the item of a long array that fails the schema, as for a short one', async () => {
    const ws = await seedWorkspace(ctx());
    for (const count of [100, 5_000]) {
      const customers: unknown[] = rows(count);
      customers[count - 7] = 'not a row';
      const res = await importJson(ws.owner, JSON.stringify({ customers }));
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.json().errors[0].path).toBe(`body/customers/${count - 7}`);
    }
  });

  it('imports a large body like a small one', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await importJson(ws.owner, `\uFEFF${JSON.stringify({ customers: rows(5_000).map((r) => ({ ...r, email: `${ws.suffix}-${r.email}` })) })}`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 5_000, failedCount: 0 });
  });
});

describe('lengths in characters (code points)', () => {
  const emoji = (n: number) => '🎛'.repeat(n);

  it('fits 100 emoji in a 100-character import field, and not 101', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/customers/import',
      headers: bearer(ws.owner),
      payload: { customers: [{ email: `e1-${ws.suffix}@x.test`, firstName: emoji(100) }, { email: `e2-${ws.suffix}@x.test`, firstName: emoji(101) }] },
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json().errors).toEqual([expect.objectContaining({ row: 2, field: 'firstName', code: 'TOO_LONG' })]);
  });

  it('fits 200 emoji in a 200-character product name, and not 201', async () => {
    const ws = await seedWorkspace(ctx());
    const create = (name: string) =>
      ctx().app.inject({ method: 'POST', url: '/api/developer/products', headers: bearer(ws.owner), payload: { name, priceCents: 100, currency: 'usd' } });
    const fits = await create(emoji(200));
    expect(fits.statusCode, fits.body).toBe(201);
    expect(fits.json().name).toBe(emoji(200));
    expectProblem(await create(emoji(201)), 400, 'VALIDATION_FAILED');
  });
});

describe('unknown query parameters', () => {
  it('are refused on the partner accounting route, as everywhere', async () => {
    const ws = await seedWorkspace(ctx());
    const url = '/api/developer/partners/programs/accounting';
    expect((await ctx().app.inject({ method: 'GET', url: `${url}?page=1&pageSize=10`, headers: bearer(ws.owner) })).statusCode).toBe(200);
    const res = await ctx().app.inject({ method: 'GET', url: `${url}?page=1&currency=usd`, headers: bearer(ws.owner) });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.json().errors).toEqual([{ path: 'querystring/currency', message: 'unknown parameter "currency"' }]);
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
