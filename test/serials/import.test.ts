import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { client, expectProblem, MEMBERS, SERIALS, type SerialRow } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);
const URL = `${SERIALS}/import`;

const postCsv = (token: string, csv: string, productMappings?: unknown) => {
  const form = multipart([
    ...(productMappings === undefined ? [] : [{ name: 'productMappings', value: JSON.stringify(productMappings) }]),
    { name: 'file', value: csv, filename: 'serials.csv', contentType: 'text/csv' },
  ]);
  return ctx().app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${token}`, ...form.headers }, payload: form.payload });
};

const customers = async (token: string) =>
  (await api.get(token, '/api/developer/customers')).json() as { total: number; rows: Array<{ customer_id: number; email: string; product_ids: number[] }> };

const bySerial = async (token: string) => new Map((await api.list(token, '?limit=500')).rows.map((r) => [r.serial, r] as [string, SerialRow]));

const rowErrors = (body: { errors: Array<{ row: number; field: string; code: string }> }) => body.errors.map((e) => `${e.row}:${e.field}:${e.code}`);

/** Codes unique across the service (and across runs on a shared database). */
const code = (label: string) => `${label}-${unique().toUpperCase()}`;

describe('POST /api/developer/serials/import', () => {
  it('imports JSON rows with 201, by product id or name, as available inventory', async () => {
    const ws = await seedWorkspace(ctx(), { productSettings: { maxActivations: 4 } });
    const [a, b] = [code('IMPA'), code('IMPB')];
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: a, productId: ws.ids.products.p1 },
        { serial_code: b, product_name: `product P2 ${ws.suffix}` },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ success: true, importedCount: 2, insertedCount: 2, failedCount: 0, errors: [] });
    const rows = await bySerial(ws.owner);
    expect(rows.get(a)).toMatchObject({ product_id: ws.ids.products.p1, status: 'available', customer_id: null, origin: 'imported', max_activations: 4 });
    expect(rows.get(b)).toMatchObject({ product_id: ws.ids.products.p2, status: 'available' });
  });

  it('assigns a serial to the customer of its row, creating the customer relationship', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `Serial.Buyer-${unique()}@X.test`;
    const assigned = code('OWN');
    const res = await api.importJson(ws.owner, {
      serials: [{ serialCode: assigned, productId: ws.ids.products.p2, email, firstName: 'Sam', lastName: 'Ortiz' }],
    });
    expect(res.statusCode, res.body).toBe(201);

    const list = await customers(ws.owner);
    expect(list.total).toBe(1);
    expect(list.rows[0]).toMatchObject({ email, product_ids: [ws.ids.products.p2] });
    const serial = (await bySerial(ws.owner)).get(assigned)!;
    expect(serial).toMatchObject({ customer_id: list.rows[0]!.customer_id, status: 'redeemed', redeemed: true });
    expect((await api.list(ws.owner, `?search=${encodeURIComponent(email.toLowerCase())}`)).rows.map((r) => r.serial)).toEqual([assigned]);
  });

  it('accepts codes already in the workspace without duplicating them, comparing without case or dashes', async () => {
    const key = `ABCDEFGHJK${unique().toUpperCase()}`;
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1', code: key }] });
    const variant = `${key.slice(0, 4).toLowerCase()}-${key.slice(4, 8).toLowerCase()}-${key.slice(8).toLowerCase()}`;
    const fresh = code('NEW');
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: variant, productId: ws.ids.products.p1 },
        { serialCode: key, productId: ws.ids.products.p1 },
        { serialCode: fresh, productId: ws.ids.products.p1 },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 3, insertedCount: 1, failedCount: 0 });
    const rows = await bySerial(ws.owner);
    expect([...rows.keys()].sort()).toEqual([key, fresh].sort());
    expect(rows.get(key)).toMatchObject({ id: ws.ids.serials.s, origin: 'generated' });
  });

  it('refuses a code held by another workspace as a row error and writes nothing for that row', async () => {
    const other = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const ws = await seedWorkspace(ctx());
    const email = `taken-${unique()}@x.test`;
    const good = code('GOOD');
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: good, productId: ws.ids.products.p1 },
        { serialCode: other.serialCodes.s!.toLowerCase(), productId: ws.ids.products.p1, email },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 1, insertedCount: 1, failedCount: 1 });
    expect(rowErrors(res.json())).toEqual(['2:serialCode:SERIAL_CODE_TAKEN']);
    // Nothing about the holder leaks, and the row created no customer.
    expect(JSON.stringify(res.json())).not.toContain(String(other.workspaceId));
    expect([...(await bySerial(ws.owner)).keys()]).toEqual([good]);
    expect((await customers(ws.owner)).total).toBe(0);
    expect((await api.list(other.owner)).rows[0]).toMatchObject({ serial: other.serialCodes.s, customer_id: null, status: 'available' });
  });

  it('answers 207 with the good rows committed and a stable code per bad row', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const [good, dup] = [code('GOOD'), code('DUP')];
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: good, productId: ws.ids.products.p1 },
        { productId: ws.ids.products.p1 },
        { serialCode: 'A', productId: ws.ids.products.p1 },
        { serialCode: '=SUM(A1)', productId: ws.ids.products.p1 },
        { serialCode: code('NOPROD') },
        { serialCode: code('FOREIGN'), productId: other.ids.products.p1 },
        { serialCode: code('NAME'), productName: 'No such product' },
        { serialCode: code('MAIL'), productId: ws.ids.products.p1, email: 'not-an-email' },
        { serialCode: dup, productId: ws.ids.products.p1 },
        { serialCode: dup.toLowerCase(), productId: ws.ids.products.p2 },
        { serialCode: 12345678, productId: ws.ids.products.p1 },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ success: false, importedCount: 2, insertedCount: 2, failedCount: 9 });
    expect(rowErrors(res.json())).toEqual([
      '2:serialCode:REQUIRED',
      '3:serialCode:INVALID_SERIAL_CODE',
      '4:serialCode:INVALID_SERIAL_CODE',
      '5:productId:REQUIRED',
      '6:productId:PRODUCT_NOT_FOUND',
      '7:productName:PRODUCT_NOT_FOUND',
      '8:email:INVALID_EMAIL',
      '10:serialCode:DUPLICATE_IN_FILE',
      '11:serialCode:INVALID_TYPE',
    ]);
    expect([...(await bySerial(ws.owner)).keys()].sort()).toEqual([good, dup].sort());
  });

  it('answers 422 IMPORT_REJECTED and writes nothing when no row can be imported', async () => {
    const holder = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const ws = await seedWorkspace(ctx());
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: holder.serialCodes.s, productId: ws.ids.products.p1, email: `rejected-${unique()}@x.test` },
        { serialCode: '!!', productId: ws.ids.products.p1 },
      ],
    });
    const body = expectProblem(res, 422, 'IMPORT_REJECTED');
    expect(body).toMatchObject({ success: false, importedCount: 0, insertedCount: 0, failedCount: 2 });
    expect(rowErrors(body as never)).toEqual(['1:serialCode:SERIAL_CODE_TAKEN', '2:serialCode:INVALID_SERIAL_CODE']);
    expect((await api.list(ws.owner)).total).toBe(0);
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('applies productMappings to names and foreign ids', async () => {
    const ws = await seedWorkspace(ctx());
    const [byName, byId] = [code('MAPN'), code('MAPI')];
    const res = await api.importJson(ws.owner, {
      serials: [
        { serialCode: byName, productName: 'Legacy Synth' },
        { serialCode: byId, productId: 9001 },
      ],
      productMappings: { 'legacy synth': ws.ids.products.p3, '9001': ws.ids.products.p2 },
    });
    expect(res.statusCode, res.body).toBe(201);
    const rows = await bySerial(ws.owner);
    expect(rows.get(byName)!.product_id).toBe(ws.ids.products.p3);
    expect(rows.get(byId)!.product_id).toBe(ws.ids.products.p2);
  });

  it('refuses productMappings that are malformed, foreign or out of scope', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.scoped] });
    const other = await seedWorkspace(ctx());
    const serials = [{ serialCode: code('MAP'), productName: 'x' }];
    for (const [token, productMappings] of [
      [ws.owner, { x: other.ids.products.p1 }],
      [ws.owner, [ws.ids.products.p1]],
      [ws.owner, 'p1'],
      [ws.tokens.scoped!, { x: ws.ids.products.p2 }],
    ] as const) {
      expectProblem(await api.importJson(token, { serials, productMappings }), 400, 'INVALID_PRODUCT_MAPPING');
    }
    expect((await api.list(ws.owner)).total).toBe(0);
  });

  it('refuses productMappings that carry credentials', async () => {
    const ws = await seedWorkspace(ctx());
    const serials = [{ serialCode: code('CRED'), productId: ws.ids.products.p1 }];
    for (const productMappings of [{ password: 'x' }, { apiKey: 'k' }, { nested: { client_secret: 's' } }, { 'access-token': 't' }]) {
      expectProblem(await api.importJson(ws.owner, { serials, productMappings }), 400, 'CREDENTIALS_NOT_ALLOWED');
    }
    expectProblem(await postCsv(ws.owner, `serialCode,productId\r\n${code('CRED')},${ws.ids.products.p1}\r\n`, { token: 'x' }), 400, 'CREDENTIALS_NOT_ALLOWED');
    expect((await api.list(ws.owner)).total).toBe(0);
  });

  it('imports a multipart CSV with productMappings and reports CSV rows by data row number', async () => {
    const ws = await seedWorkspace(ctx());
    const [a, b] = [code('CSVA'), code('CSVB')];
    const email = `csv-${unique()}@x.test`;
    const csv = `Serial Code,product_name,E-mail,First Name,last_name\r\n${a},Old Synth,${email},"Bo, Jr",Kim\r\n${b},${`Product p1 ${ws.suffix}`},,,\r\nbad code,Old Synth,,,\r\n`;
    const res = await postCsv(ws.owner, csv, { 'Old Synth': ws.ids.products.p3 });
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({ importedCount: 2, insertedCount: 2, failedCount: 1 });
    expect(rowErrors(res.json())).toEqual(['3:serialCode:INVALID_SERIAL_CODE']);
    const rows = await bySerial(ws.owner);
    expect(rows.get(a)).toMatchObject({ product_id: ws.ids.products.p3, status: 'redeemed' });
    expect(rows.get(b)).toMatchObject({ product_id: ws.ids.products.p1, status: 'available' });
  });

  it('re-imports its own export without creating anything', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p2' }] });
    const exported = await api.get(ws.owner, `${SERIALS}/export`);
    const res = await postCsv(ws.owner, exported.body);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 2, insertedCount: 0 });
    expect((await api.list(ws.owner)).total).toBe(2);
  });

  it('lets a product-scoped member import only for their products', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.scoped] });
    const mine = code('MINE');
    const res = await api.importJson(ws.tokens.scoped!, {
      serials: [
        { serialCode: mine, productId: ws.ids.products.p1 },
        { serialCode: code('THEIRS'), productId: ws.ids.products.p2 },
        { serialCode: code('BYNAME'), productName: `Product p2 ${ws.suffix}` },
      ],
    });
    expect(res.statusCode, res.body).toBe(207);
    expect(rowErrors(res.json())).toEqual(['2:productId:PRODUCT_NOT_FOUND', '3:productName:PRODUCT_NOT_FOUND']);
    expect([...(await bySerial(ws.owner)).keys()]).toEqual([mine]);
  });

  it('answers a code of a product outside the member\'s assignment exactly like a foreign code, and leaves it alone', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.scoped], serials: [{ key: 'hidden', product: 'p2' }] });
    const foreign = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    const email = `probe-${unique()}@x.test`;
    const probe = (serialCode: string) =>
      api.importJson(ws.tokens.scoped!, { serials: [{ serialCode, productId: ws.ids.products.p1, email }] });
    const hidden = await probe(ws.serialCodes.hidden!);
    const other = await probe(foreign.serialCodes.s!);
    // Same status, same body apart from the request id: the member cannot tell the two apart.
    expect(hidden.statusCode).toBe(422);
    const strip = (body: Record<string, unknown>) => ({ ...body, requestId: undefined });
    expect(strip(hidden.json())).toEqual(strip(other.json()));
    expect(rowErrors(hidden.json())).toEqual(['1:serialCode:SERIAL_CODE_TAKEN']);
    // Untouched: still available, no customer, no relationship created.
    expect((await bySerial(ws.owner)).get(ws.serialCodes.hidden!)).toMatchObject({ customer_id: null, status: 'available' });
    expect((await customers(ws.owner)).total).toBe(0);
  });

  it('records an imported event for every new serial', async () => {
    const ws = await seedWorkspace(ctx());
    const imported = code('EVT');
    await api.importJson(ws.owner, { serials: [{ serialCode: imported, productId: ws.ids.products.p1 }] });
    const serial = (await bySerial(ws.owner)).get(imported)!;
    const events = (await api.get(ws.owner, `${SERIALS}/${serial.id}/events`)).json();
    expect(events.rows).toMatchObject([{ action: 'imported', actor_type: 'developer', actor_account_id: ws.ids.accounts.owner, before_status: null, after_status: 'available' }]);
  });

  it('needs serials.manage', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.viewer, MEMBERS.outsider] });
    const serials = [{ serialCode: code('PERM'), productId: ws.ids.products.p1 }];
    expectProblem(await api.importJson(ws.tokens.viewer!, { serials }), 403, 'FORBIDDEN');
    expectProblem(await api.importJson(ws.tokens.outsider!, { serials }), 403, 'FORBIDDEN');
    expect((await api.list(ws.owner)).total).toBe(0);
  });

  it.each([
    ['an empty import', { serials: [] }, 400, 'IMPORT_EMPTY'],
    ['no serials array', { rows: [] }, 400, 'VALIDATION_FAILED'],
    ['serials that is not an array', { serials: 'ABCD-EFGH' }, 400, 'VALIDATION_FAILED'],
    ['a row that is not an object', { serials: [{ serialCode: 'ABCD-EFGH-JKLM' }, 'ABCD'] }, 400, 'VALIDATION_FAILED'],
  ])('rejects %s', async (_label, payload, status, errorCode) => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.importJson(ws.owner, payload), status, errorCode);
  });

  it('rejects malformed bodies and files with a 4xx problem', async () => {
    const ws = await seedWorkspace(ctx());
    const raw = (payload: string, contentType: string) =>
      ctx().app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${ws.owner}`, 'content-type': contentType }, payload });
    expectProblem(await raw('{"serials": [', 'application/json'), 400, 'MALFORMED_JSON');
    expectProblem(await raw('serialCode\nABCD', 'text/csv'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await postCsv(ws.owner, 'serialCode,productId\r\n"unterminated,1\r\n'), 400, 'INVALID_CSV');
    const noFile = multipart([{ name: 'productMappings', value: '{}' }]);
    expectProblem(
      await ctx().app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${ws.owner}`, ...noFile.headers }, payload: noFile.payload }),
      400,
      'VALIDATION_FAILED',
    );
    const badMappings = multipart([
      { name: 'productMappings', value: '{not json' },
      { name: 'file', value: 'serialCode\r\nABCD-EFGH\r\n', filename: 's.csv' },
    ]);
    expectProblem(
      await ctx().app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${ws.owner}`, ...badMappings.headers }, payload: badMappings.payload }),
      400,
      'INVALID_PRODUCT_MAPPING',
    );
    expect((await api.list(ws.owner)).total).toBe(0);
  });
});

describe('GET /api/developer/serials/demo-csv', () => {
  const download = async (token: string) => {
    const res = await api.get(token, `${SERIALS}/demo-csv`);
    expect(res.statusCode).toBe(200);
    return res;
  };

  it('has the import columns and imports unchanged, with fresh codes on every download', async () => {
    const ws = await seedWorkspace(ctx());
    const first = await download(ws.owner);
    expect(first.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(first.headers['content-disposition']).toBe('attachment; filename="serials-template.csv"');
    const records = parse(first.body, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(records[0]!)).toEqual(['serialCode', 'productId', 'productName', 'email', 'firstName', 'lastName']);

    const imported = await postCsv(ws.owner, first.body);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json()).toMatchObject({ importedCount: 2, insertedCount: 2 });

    const second = await download(ws.owner);
    const secondCodes = (parse(second.body, { columns: true }) as Array<Record<string, string>>).map((r) => r.serialCode);
    expect(secondCodes.some((c) => records.some((r) => r.serialCode === c))).toBe(false);
    const again = await postCsv(ws.owner, second.body);
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json()).toMatchObject({ importedCount: 2, insertedCount: 2 });
    expect((await api.list(ws.owner)).total).toBe(4);
  });

  it('names a product the caller can see', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'p2only', permissions: ['serials.view', 'serials.manage'], products: ['p2'] }] });
    const records = parse((await download(ws.tokens.p2only!)).body, { columns: true }) as Array<Record<string, string>>;
    expect(records[0]!.productId).toBe(String(ws.ids.products.p2));
    expect(records[1]!.productName).toBe(`Product p2 ${ws.suffix}`);
    expect((await postCsv(ws.tokens.p2only!, (await download(ws.tokens.p2only!)).body)).statusCode).toBe(201);
  });

  it('needs serials.view', async () => {
    const ws = await seedWorkspace(ctx(), { members: [MEMBERS.manager, MEMBERS.outsider] });
    expectProblem(await api.get(ws.tokens.manager!, `${SERIALS}/demo-csv`), 403, 'FORBIDDEN');
    expectProblem(await api.get(ws.tokens.outsider!, `${SERIALS}/demo-csv`), 403, 'FORBIDDEN');
  });
});
