import fc from 'fast-check';

/**
 * Request generators for the OpenAPI fuzz test: every operation of the served document gets
 * requests built from its own parameter and body schemas, some valid, most subtly or grossly
 * wrong (wrong types, boundary numbers, NUL and lone surrogates, prototype keys, wrong content
 * types, malformed JSON, CSV and multipart).
 */

export type JsonSchema = { [keyword: string]: unknown };

export interface FuzzParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface FuzzOperation {
  method: string;
  /** The OpenAPI path, `{name}` placeholders. */
  path: string;
  parameters: FuzzParameter[];
  body?: { required: boolean; content: Record<string, JsonSchema> };
  /** True when the operation takes a bearer token. */
  secured: boolean;
  /** The security schemes it accepts (bearer, customerBearer …). */
  schemes: string[];
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** How the body was made (for the failure message). */
  note: string;
}

/** Values of this workspace, by parameter or property name (productId, serialId, email ...). */
export type KnownValues = Record<string, readonly unknown[]>;

export interface FuzzContext {
  token: string;
  /** Bearer tokens of other kinds of caller, by the security scheme that takes them (a buyer's `customerBearer`). */
  tokens?: Record<string, string>;
  known: KnownValues;
  /** Workspace ids for X-Workspace-Id (the caller's and another one). */
  workspaceIds: readonly number[];
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** A copy of a schema with its `$ref`s replaced by the component they name. */
function resolve(doc: { components?: { schemas?: Record<string, JsonSchema> } }, schema: unknown, depth = 0): any {
  if (schema === null || typeof schema !== 'object' || depth > 16) return schema;
  if (Array.isArray(schema)) return schema.map((s) => resolve(doc, s, depth + 1));
  const ref = (schema as JsonSchema).$ref;
  if (typeof ref === 'string') return resolve(doc, doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] ?? {}, depth + 1);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolve(doc, value, depth + 1)]));
}

/** Every operation of an OpenAPI 3.1 document, schemas resolved. */
export function operationsOf(doc: any): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters: FuzzParameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => ({
        name: p.name,
        in: p.in,
        required: Boolean(p.required),
        schema: resolve(doc, p.schema ?? {}),
      }));
      const content = op.requestBody?.content as Record<string, { schema?: unknown }> | undefined;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters,
        ...(content
          ? {
              body: {
                required: Boolean(op.requestBody.required),
                content: Object.fromEntries(Object.entries(content).map(([type, media]) => [type, resolve(doc, media.schema ?? {})])),
              },
            }
          : {}),
        secured: Array.isArray(op.security) && op.security.length > 0,
        schemes: (Array.isArray(op.security) ? op.security : []).flatMap((requirement: Record<string, unknown>) => Object.keys(requirement)),
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------
// Values

/** Text that is inserted into a URL or JSON text as is (an undecodable escape, `1e999`). */
export class Raw {
  constructor(readonly text: string) {}
  toJSON() {
    return `\u0001raw:${this.text}\u0001`;
  }
}

const LONG = 'x'.repeat(10_000);
export const HOSTILE_STRINGS: readonly string[] = [
  ...['', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\ud83d', '😀🎛️', '\u202egnp.exe', '\ufeff'],
  ...['NaN', 'Infinity', '-1', '0', '1.5', '1e309', '9007199254740993', '99999999999999999999', '0x1F'],
  ...['__proto__', 'constructor', 'prototype', 'null', 'true', '[]', '{}'],
  ...["'; DROP TABLE customers; --", '../../../etc/passwd', '=HYPERLINK("http://evil.example")', '%00', '%s%n%x', '<x/>'],
  'é'.repeat(300),
  LONG,
];

export const HOSTILE_NUMBERS: readonly number[] = [
  ...[0, -1, 1, -0, 0.5, 1.5, -1.5, Number.MIN_VALUE],
  ...[2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 2 ** 63, 1e21, 1e308, -1e308],
];

const RAW_NUMBERS = ['1e999', '-1e999', '-0', '123456789012345678901234567890', '0.1e-400', '1E+2'].map((t) => new Raw(t));

const hostileObjects = (): fc.Arbitrary<unknown> =>
  fc.constantFrom<unknown>(
    [],
    {},
    [1, 'a', null],
    ownKey('__proto__', { polluted: true }),
    { constructor: { prototype: { polluted: true } } },
    [ownKey('__proto__', { isAdmin: true })],
    { toString: 'x', valueOf: 1, hasOwnProperty: null },
  );

/** An object with an own `__proto__` key (a literal would set the prototype instead). */
export function ownKey(key: string, value: unknown, base: Record<string, unknown> = {}): Record<string, unknown> {
  const out = { ...base };
  Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true });
  return out;
}

/** A value of any type that a schema did not ask for. */
export const hostileValue = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { arbitrary: fc.constantFrom<unknown>(...HOSTILE_STRINGS), weight: 4 },
    { arbitrary: fc.constantFrom<unknown>(...HOSTILE_NUMBERS), weight: 3 },
    { arbitrary: fc.constantFrom<unknown>(...RAW_NUMBERS), weight: 1 },
    { arbitrary: fc.constantFrom<unknown>(true, false, null), weight: 1 },
    { arbitrary: hostileObjects(), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
  );

const MAX_DEPTH = 4;

function types(schema: JsonSchema): string[] {
  const type = schema.type;
  if (Array.isArray(type)) return type as string[];
  if (typeof type === 'string') return [type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

const num = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

/** Strings the schema accepts: its format, else its pattern, else any text within its lengths. */
function stringFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const minLength = num(schema.minLength, 0);
  switch (schema.format) {
    case 'date-time':
      return fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'] });
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
  const text = fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength ?? 40, 40)) });
  return maxLength !== undefined && maxLength <= 100_000 ? fc.oneof(text, fc.constant('x'.repeat(maxLength))) : text;
}

/** Strings that a format or pattern only just accepts, or does not. */
const EDGE_STRINGS: Record<string, readonly string[]> = {
  'date-time': ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+14:00', '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59-15:00', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2016-12-31T23:59:60Z', '2024-01-01T00:00:00-23:59', '2024-01-01'],
  date: ['0000-01-01', '2024-02-30', '0000-00-00', '9999-12-31'],
  email: ['a@b', '"quoted local"@x.test', 'ÿ@x.test', 'x@[127.0.0.1]', `${'a'.repeat(250)}@x.test`],
  uri: ['https://', `https://x.example/${'a'.repeat(2000)}`, 'javascript:alert(1)', 'http://insecure.example'],
};

function numberFor(schema: JsonSchema, integer: boolean): fc.Arbitrary<unknown> {
  const min = Math.max(num(schema.minimum, -(2 ** 31)), Number.MIN_SAFE_INTEGER);
  const max = Math.min(num(schema.maximum, 2 ** 31), Number.MAX_SAFE_INTEGER);
  const near = Math.min(max, min + 1000);
  const inRange = integer ? fc.integer({ min, max: near }) : fc.double({ min, max: near, noNaN: true, noDefaultInfinity: true });
  return fc.oneof(inRange, fc.constantFrom(min, max));
}

/** A value the schema accepts (give or take formats and patterns), preferring known values by name. */
export function validValue(schema: JsonSchema, name: string, known: KnownValues, depth = 0): fc.Arbitrary<unknown> {
  const base = validBase(schema, known, depth);
  const mine = known[name];
  return mine?.length ? fc.oneof({ arbitrary: fc.constantFrom(...mine), weight: 3 }, { arbitrary: base, weight: 1 }) : base;
}

function validBase(schema: JsonSchema, known: KnownValues, depth: number): fc.Arbitrary<unknown> {
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives?.length) return fc.oneof(...alternatives.map((alt) => validBase(alt, known, depth)));
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  const kinds = types(schema);
  if (kinds.length === 0) {
    // Described but untyped (import rows): anything JSON.
    return fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
  }
  return fc.oneof(
    ...kinds.map((kind): fc.Arbitrary<unknown> => {
      switch (kind) {
        case 'integer':
          return numberFor(schema, true);
        case 'number':
          return numberFor(schema, false);
        case 'string':
          return stringFor(schema);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array': {
          if (depth >= MAX_DEPTH) return fc.constant([]);
          const items = (schema.items ?? {}) as JsonSchema;
          const minItems = num(schema.minItems, 0);
          return fc.array(validValue(items, '', known, depth + 1), { minLength: minItems, maxLength: Math.max(minItems, Math.min(num(schema.maxItems, 3), 3)) });
        }
        default:
          return objectFor(schema, known, depth);
      }
    }),
  );
}

function objectFor(schema: JsonSchema, known: KnownValues, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  if (depth >= MAX_DEPTH) return fc.constant({});
  const names = Object.keys(properties);
  if (names.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 3 });
  const shape = Object.fromEntries(names.map((name) => [name, validValue(properties[name]!, name, known, depth + 1)]));
  return fc.record(shape, { requiredKeys: required.filter((r) => names.includes(r)) }) as fc.Arbitrary<Record<string, unknown>>;
}

/** A value the schema does not accept, or only just accepts: boundaries, wrong types, mutated objects. */
export function invalidValue(schema: JsonSchema, name: string, known: KnownValues, depth = 0): fc.Arbitrary<unknown> {
  const kinds = types(schema);
  const options: Array<fc.WeightedArbitrary<unknown>> = [{ arbitrary: hostileValue(), weight: 3 }];
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives?.length && depth < MAX_DEPTH) {
    options.push({ arbitrary: fc.oneof(...alternatives.map((alt) => invalidValue(alt, name, known, depth))), weight: 6 });
  }
  if (kinds.includes('integer') || kinds.includes('number')) {
    const min = num(schema.minimum, 0);
    const max = num(schema.maximum, 2 ** 31);
    options.push({ arbitrary: fc.constantFrom<unknown>(min - 1, max + 1, min + 0.5, String(min), `${max}0`, 'NaN', 2 ** 53, -(2 ** 53)), weight: 3 });
  }
  if (kinds.includes('string') && typeof schema.maxLength === 'number' && schema.maxLength < 200_000) {
    options.push({ arbitrary: fc.constant('y'.repeat(schema.maxLength + 1)), weight: 1 });
  }
  const edges = typeof schema.format === 'string' ? EDGE_STRINGS[schema.format] : undefined;
  if (edges) options.push({ arbitrary: fc.constantFrom(...edges), weight: 3 });
  if (typeof schema.pattern === 'string') options.push({ arbitrary: fc.string({ maxLength: 12 }), weight: 1 });
  if (kinds.includes('object') && depth < MAX_DEPTH) options.push({ arbitrary: mutatedObject(schema, known, depth), weight: 6 });
  if (kinds.includes('array') && depth < MAX_DEPTH) {
    const items = (schema.items ?? {}) as JsonSchema;
    options.push({
      arbitrary: fc.oneof(
        fc.array(anyValue(items, '', known, depth + 1), { minLength: 1, maxLength: 3 }),
        validValue(items, '', known, depth + 1),
        fc.constant(Array.from({ length: 200 }, () => null)),
      ),
      weight: 4,
    });
  }
  return fc.oneof(...options);
}

/** Mostly invalid, sometimes valid. */
export function anyValue(schema: JsonSchema, name: string, known: KnownValues, depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: validValue(schema, name, known, depth), weight: 1 }, { arbitrary: invalidValue(schema, name, known, depth), weight: 2 });
}

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'extra', '', '\u0000', '\ud800', 'a'.repeat(300)];

function mutatedObject(schema: JsonSchema, known: KnownValues, depth: number): fc.Arbitrary<unknown> {
  const valid = (schema.anyOf ? validBase(schema, known, depth) : objectFor(schema, known, depth)) as fc.Arbitrary<unknown>;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  const required = (schema.required ?? []) as string[];
  const asObject = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const options: Array<fc.Arbitrary<unknown>> = [
    // One extra or prototype-polluting key.
    fc.tuple(valid, fc.constantFrom(...EXTRA_KEYS), hostileValue()).map(([v, key, value]) => ownKey(key, value, asObject(v))),
    // An array where an object is expected.
    fc.array(valid, { minLength: 0, maxLength: 2 }),
  ];
  if (names.length > 0) {
    // One property wrong (recursively).
    options.push(
      fc
        .constantFrom(...names)
        .chain((key) => fc.tuple(valid, fc.constant(key), invalidValue(properties[key]!, key, known, depth + 1)))
        .map(([v, key, value]) => ownKey(key, value, asObject(v))),
    );
  }
  if (required.length > 0) {
    options.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([v, key]) => {
        const copy = { ...asObject(v) };
        delete copy[key];
        return copy;
      }),
    );
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------
// Serialisation

/** JSON text of a value; `Raw` values appear unquoted. */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(/"\\u0001raw:(.*?)\\u0001"/g, (_, raw: string) => raw);
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Percent-encoding that also encodes lone surrogates (as their WTF-8 bytes, which are not UTF-8). */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i += 1;
    } else if (isHigh(c) || isLow(c)) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}

function urlText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (typeof value === 'string') return percentEncode(value);
  if (value !== null && typeof value === 'object') return percentEncode(jsonText(value));
  return percentEncode(String(value));
}

const RAW_URL_PIECES = ['%', '%zz', '%ED%A0%80', '%00', '%FF', '%C0%AF', '+', '..', '%2e%2e', '%2F', '%252F', '?', '#', 'a;b', '%F0%9F'].map((t) => new Raw(t));

function queryPairs(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.length === 0 ? [`${percentEncode(name)}=`] : value.map((v) => `${percentEncode(name)}=${urlText(v)}`);
  return [`${percentEncode(name)}=${urlText(value)}`];
}

// ---------------------------------------------------------------------------------------------
// Bodies

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'];
const WRONG_TYPES: ReadonlyArray<string | undefined> = [
  ...[undefined, '', ';', '*/*', 'text/plain', 'application/xml', 'text/xml', 'text/csv', 'application/x-www-form-urlencoded', 'application/octet-stream'],
  ...['application/jsonx', 'application/vnd.api+json', 'application/json; boundary=', 'application/json; charset=utf-16'],
  ...['multipart/form-data', 'multipart/mixed; boundary=x'],
];

interface Body {
  payload?: string | Buffer;
  contentType?: string;
  note: string;
}

/** JSON texts that are not JSON (or only barely). */
function malformedJson(validText: string): fc.Arbitrary<Body> {
  const fixed = fc.constantFrom(
    ...['', ' ', '{', '[', '{"a":}', '{"a":1,}', "{'a':1}", 'nul', 'undefined', 'NaN', '\ufeff{}', '{}{}', '"just a string"', '12', 'null', 'true'],
    ...['{"a":"\u0000"}', '{"a":"\\ud800"}', '{"\\u0000":1}', '{"a":1,"a":2}', '{"a":1e999}', '<?xml version="1.0"?><a/>'],
    ...['{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}'],
    ...['['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(2000) + '1' + '}'.repeat(2000)],
  );
  return fc.oneof(
    fixed.map((text) => ({ payload: text, contentType: 'application/json', note: 'json:malformed' })),
    // Truncated valid JSON.
    fc.nat({ max: Math.max(0, validText.length - 1) }).map((cut) => ({ payload: validText.slice(0, cut), contentType: 'application/json', note: `json:truncated at ${cut}` })),
    // Bytes that are not UTF-8 inside a JSON string.
    fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]).map((bytes) => ({
      payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]),
      contentType: 'application/json',
      note: 'json:invalid utf-8',
    })),
    // Over the 1 MiB body limit.
    fc.constant({ payload: `{"a":"${'z'.repeat(1024 * 1024 + 10)}"}`, contentType: 'application/json', note: 'json:over the body limit' }),
  );
}

/** A CSV text with the given columns, perhaps broken. */
const CSV_DEFECTS = ['unterminated quote', 'stray quote', 'nul', 'invalid utf-8', 'lone surrogate', 'ragged', 'empty', 'header only', 'long line', 'binary'] as const;

/** A CSV file with the given columns; when faulty, perhaps broken. */
function csvFile(columns: readonly string[], known: KnownValues, faulty: boolean): fc.Arbitrary<{ bytes: Buffer; note: string }> {
  const realCells = [...(known.email ?? []), ...(known.serialCode ?? []), ...(known.productId ?? [])].map(String);
  const cell = fc.oneof(
    { arbitrary: fc.constantFrom(...realCells, 'a@b.test'), weight: 3 },
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((s) => s.length < 1000)), weight: faulty ? 3 : 1 },
    { arbitrary: fc.string({ maxLength: 12 }), weight: 2 },
    { arbitrary: fc.constantFrom('=1+1', '"quoted, with comma"', 'line\nbreak', 'x""y', '49.99', '-1', '1e9', '2024-01-01', 'true'), weight: 2 },
  );
  const escape = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const header = faulty ? fc.shuffledSubarray([...columns, '__proto__', 'constructor', 'Unknown Column', ''], { minLength: 0 }) : fc.shuffledSubarray([...columns], { minLength: 1 });
  return fc
    .record({
      header,
      rows: fc.array(fc.array(cell, { minLength: faulty ? 0 : 1, maxLength: 8 }), { maxLength: 5 }),
      eol: fc.constantFrom('\n', '\r\n', faulty ? '\r' : '\n'),
      bom: fc.boolean(),
      defect: faulty ? fc.constantFrom<string>('none', ...CSV_DEFECTS) : fc.constant('none'),
    })
    .map(({ header: names, rows, eol, bom, defect }) => {
      const lines = [names.map(escape).join(','), ...rows.map((r) => r.map(escape).join(','))];
      let text = lines.join(eol) + eol;
      if (defect === 'unterminated quote') text += `"never closed,1${eol}`;
      if (defect === 'stray quote') text += `ab"cd,1${eol}`;
      if (defect === 'nul') text += `a\u0000b,1${eol}`;
      if (defect === 'ragged') text += `a,b,c,d,e,f,g,h,i,j,k${eol}a${eol}`;
      if (defect === 'empty') text = '';
      if (defect === 'header only') text = lines[0]!;
      if (defect === 'long line') text += 'q'.repeat(200_000) + eol;
      let bytes = Buffer.from((bom ? '\ufeff' : '') + text);
      if (defect === 'invalid utf-8') bytes = Buffer.concat([bytes, Buffer.from([0xff, 0xfe, 0x2c, 0xc3, 0x0a])]);
      if (defect === 'lone surrogate') bytes = Buffer.concat([bytes, Buffer.from([0xed, 0xa0, 0x80, 0x2c, 0x31, 0x0a])]);
      if (defect === 'binary') bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0xff, 0x00, 0x0a, 0x01]);
      return { bytes, note: `csv (${defect === 'none' ? 'well-formed' : defect}${bom ? ', BOM' : ''}, line end ${JSON.stringify(eol)})` };
    });
}

interface Part {
  name: string;
  value: Buffer;
  filename?: string;
  contentType?: string;
}

function encodeMultipart(parts: Part[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), part.value, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Columns of the CSV form of an import: the item properties of the JSON form's array. */
export function csvColumns(op: FuzzOperation): string[] {
  const json = op.body?.content['application/json'];
  for (const property of Object.values((json?.properties ?? {}) as Record<string, JsonSchema>)) {
    const items = property.items as JsonSchema | undefined;
    if (property.type === 'array' && items?.properties) return Object.keys(items.properties as object);
  }
  return ['name', 'email'];
}

const BOUNDARY = '----fuzzboundary7MA4YWxkTrZu0gW';
const MULTIPART_DEFECTS = ['no boundary', 'truncated', 'other boundary', 'no closing boundary', 'bad part header', 'empty boundary', 'long boundary', 'garbage'] as const;

function brokenMultipart(parts: Part[], note: string, defect: (typeof MULTIPART_DEFECTS)[number], n: number): Body {
  const payload = encodeMultipart(parts, BOUNDARY);
  const contentType = `multipart/form-data; boundary=${BOUNDARY}`;
  const base = `multipart (${defect}) of ${note}`;
  switch (defect) {
    case 'no boundary':
      return { payload, contentType: 'multipart/form-data', note: base };
    case 'truncated':
      return { payload: payload.subarray(0, n % payload.length), contentType, note: `${base}, cut at ${n % payload.length}` };
    case 'other boundary':
      return { payload, contentType: 'multipart/form-data; boundary=somethingelse', note: base };
    case 'no closing boundary':
      return { payload: payload.subarray(0, payload.length - BOUNDARY.length - 6), contentType, note: base };
    case 'bad part header':
      return { payload: Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\nX: y\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`), contentType, note: base };
    case 'empty boundary':
      return { payload, contentType: 'multipart/form-data; boundary=', note: base };
    case 'long boundary':
      return { payload: encodeMultipart(parts, 'b'.repeat(100)), contentType: `multipart/form-data; boundary=${'b'.repeat(100)}`, note: base };
    default:
      return { payload: Buffer.from('this is not multipart at all\r\n\r\n--'), contentType, note: base };
  }
}

function multipartBody(op: FuzzOperation, known: KnownValues, faulty: boolean): fc.Arbitrary<Body> {
  const schema = op.body?.content['multipart/form-data'] ?? { properties: { file: { format: 'binary' } } };
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const fieldNames = Object.keys(properties).filter((name) => properties[name]!.format !== 'binary');
  const fileNames = Object.keys(properties).filter((name) => properties[name]!.format === 'binary');
  const productIds = (known.productId ?? [1]).map(Number);
  const goodMappings = fc
    .dictionary(fc.constantFrom(...(known.productName ?? ['x']).map(String), 'Old Name'), fc.constantFrom(...productIds), { maxKeys: 2 })
    .map((m) => JSON.stringify(m));
  const mappings = faulty
    ? fc.oneof(
        goodMappings,
        fc.constantFrom('{', '[]', 'null', '"x"', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{}}}', '\u0000', '{"a":"\\ud800"}', '', '{"x":-1}', '{"x":1e999}'),
      )
    : goodMappings;
  const text = (v: unknown) => (typeof v === 'string' ? v : jsonText(v));
  const field = (name: string): fc.Arbitrary<string> =>
    name === 'productMappings' ? mappings : (faulty ? anyValue(properties[name]!, name, known) : validValue(properties[name]!, name, known)).map(text);
  const fields = fc.record(Object.fromEntries(fieldNames.map((name) => [name, field(name)])), { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
  const filename = faulty
    ? fc.constantFrom('data.csv', 'Plugin Installer.pkg', '../../etc/passwd', 'a"b.csv', 'ä.csv', '', `${'x'.repeat(300)}.csv`, 'nul\u0000.csv')
    : fc.constantFrom('data.csv', 'Plugin Installer.pkg');
  const extras = faulty
    ? fc.constantFrom<Part[]>(
        [],
        [],
        [{ name: '__proto__', value: Buffer.from('{"polluted":true}') }],
        [{ name: 'file', value: Buffer.from('second,file\n1,2\n'), filename: 'second.csv' }],
        [{ name: 'other', value: Buffer.from('email\na@b.test\n'), filename: 'other.csv' }],
        Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, value: Buffer.from('v') })),
      )
    : fc.constant<Part[]>([]);
  const form = fc
    .record({ csv: csvFile(csvColumns(op), known, faulty), fields, filename, fileFirst: fc.boolean(), withFile: faulty ? fc.constantFrom(true, true, false) : fc.constant(true), extras })
    .map(({ csv, fields: values, filename: name, fileFirst, withFile, extras: more }) => {
      const fieldParts: Part[] = Object.entries(values).map(([n, v]) => ({ name: n, value: Buffer.from(v) }));
      const fileParts: Part[] = withFile ? (fileNames.length ? fileNames : ['file']).map((n) => ({ name: n, value: csv.bytes, filename: name, contentType: 'text/csv' })) : [];
      const parts = [...(fileFirst ? [...fileParts, ...fieldParts] : [...fieldParts, ...fileParts]), ...more];
      return { parts, note: `multipart: ${withFile ? csv.note : 'no file'}, fields ${JSON.stringify(Object.keys(values))}, ${more.length} extra parts` };
    });
  const wellFormed = form.map(({ parts, note }): Body => ({ payload: encodeMultipart(parts, BOUNDARY), contentType: `multipart/form-data; boundary=${BOUNDARY}`, note }));
  if (!faulty) return wellFormed;
  return fc.oneof(
    wellFormed,
    fc.tuple(form, fc.nat(), fc.constantFrom(...MULTIPART_DEFECTS)).map(([{ parts, note }, n, defect]) => brokenMultipart(parts, note, defect, n)),
  );
}

const ODD_BODIES: Body[] = [
  { payload: '<customers><customer email="a@b.test"/></customers>', contentType: 'application/xml', note: 'xml' },
  { payload: 'email\na@b.test\n', contentType: 'text/csv', note: 'csv as text/csv' },
  { payload: 'email\n"a@b.test\n', contentType: 'text/csv', note: 'malformed csv as text/csv' },
  { payload: 'a=1&b=2&__proto__[x]=1', contentType: 'application/x-www-form-urlencoded', note: 'form' },
  { payload: Buffer.from([0, 1, 2, 255]), contentType: 'application/octet-stream', note: 'bytes' },
];

/** A body the operation accepts, or (faulty) one that is wrong in some way. */
function bodyArbitrary(op: FuzzOperation, known: KnownValues, faulty: boolean): fc.Arbitrary<Body> {
  const jsonSchema = op.body?.content['application/json'];
  const takesMultipart = Boolean(op.body?.content['multipart/form-data']);
  if (!faulty) {
    const valid: Array<fc.Arbitrary<Body>> = [];
    if (jsonSchema) {
      valid.push(fc.tuple(validValue(jsonSchema, '', known), fc.constantFrom(...JSON_TYPES)).map(([value, type]) => ({ payload: jsonText(value), contentType: type, note: 'json' })));
    }
    if (takesMultipart) valid.push(multipartBody(op, known, false));
    return valid.length ? fc.oneof(...valid) : fc.constant({ note: 'no body' });
  }
  const json = (jsonSchema ? invalidValue(jsonSchema, '', known) : hostileValue()).chain((value) => {
    const text = jsonText(value);
    return fc.oneof(
      { arbitrary: fc.constantFrom(...JSON_TYPES).map((type) => ({ payload: text, contentType: type, note: 'json (invalid value)' })), weight: 5 },
      { arbitrary: malformedJson(text), weight: 2 },
      { arbitrary: fc.constantFrom(...WRONG_TYPES).map((type) => ({ payload: text, ...(type === undefined ? {} : { contentType: type }), note: `json text as ${type ?? 'no content type'}` })), weight: 2 },
    );
  });
  return fc.oneof(
    { arbitrary: json, weight: 6 },
    { arbitrary: multipartBody(op, known, true), weight: takesMultipart ? 6 : 1 },
    { arbitrary: fc.constantFrom(...ODD_BODIES), weight: 1 },
    { arbitrary: fc.constant<Body>({ note: 'no body' }), weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Requests

const headerSafe = (text: string) => text.replace(/[^\x20-\x7e]/g, '?');

function paramValue(p: FuzzParameter, known: KnownValues, faulty: boolean): fc.Arbitrary<unknown> {
  const mine = known[p.name] ?? [];
  if (!faulty) return mine.length ? fc.oneof({ arbitrary: fc.constantFrom(...mine), weight: 4 }, validValue(p.schema, p.name, known)) : validValue(p.schema, p.name, known);
  return fc.oneof({ arbitrary: invalidValue(p.schema, p.name, known), weight: 4 }, fc.constantFrom<unknown>(...RAW_URL_PIECES));
}

function queryValue(p: FuzzParameter, known: KnownValues, faulty: boolean): fc.Arbitrary<unknown> {
  const valid = validValue(p.schema, p.name, known);
  if (!faulty) return valid;
  return fc.oneof(
    { arbitrary: invalidValue(p.schema, p.name, known), weight: 4 },
    fc.array(valid, { minLength: 2, maxLength: 3 }),
    fc.constantFrom<unknown>(...RAW_URL_PIECES),
  );
}

const EXTRA_QUERIES = [['__proto__=1'], ['constructor=x'], ['__proto__[polluted]=1'], ['unknown=1'], ['toString=1'], ['a=1&a=2'], ['&&='], ['%=%'], [`x=${'q'.repeat(5000)}`]];

/**
 * Requests for one operation: a third valid, half with exactly one part wrong (a path or query
 * parameter, the body, a header, the method, an extra query key), the rest wrong everywhere.
 */
export function requestArbitrary(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header' && p.name.toLowerCase() !== 'authorization');
  const targets = ['body', 'headers', 'method', 'extra query', ...pathParams.map((p) => `path ${p.name}`), ...queryParams.map((p) => `query ${p.name}`)];
  const fault = fc.oneof({ arbitrary: fc.constant('none'), weight: 3 }, { arbitrary: fc.constantFrom(...targets), weight: 5 }, { arbitrary: fc.constant('everything'), weight: 2 });

  return fault.chain((wrong) => {
    const faulty = (target: string) => wrong === 'everything' || wrong === target;
    const path = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, paramValue(p, ctx.known, faulty(`path ${p.name}`))]))) as fc.Arbitrary<Record<string, unknown>>;
    const query = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p, ctx.known, faulty(`query ${p.name}`))])), {
      requiredKeys: queryParams.filter((p) => p.required || wrong === `query ${p.name}`).map((p) => p.name),
    }) as fc.Arbitrary<Record<string, unknown>>;
    const extraQuery = faulty('extra query') ? fc.constantFrom(...EXTRA_QUERIES) : fc.constant<string[]>([]);
    const headerText = (v: unknown) => headerSafe(typeof v === 'string' ? v : jsonText(v));
    const headerShape: Record<string, fc.Arbitrary<string>> = {
      ...Object.fromEntries(
        headerParams.map((p) => [p.name, (faulty('headers') ? anyValue(p.schema, p.name, ctx.known) : validValue(p.schema, p.name, ctx.known)).map(headerText)]),
      ),
      ...(faulty('headers')
        ? {
            'x-workspace-id': fc.constantFrom<string>(...ctx.workspaceIds.map(String), 'abc', '0', '-1', '99999999999', ''),
            'idempotency-key': fc.constantFrom('fuzz-key-1', 'fuzz-key-2', '', ' ', 'x'.repeat(300)),
            prefer: fc.constantFrom('respond-async', 'return=minimal'),
            accept: fc.constantFrom('text/csv', 'application/xml', '*/*', 'application/problem+json'),
          }
        : { 'idempotency-key': fc.uuid(), prefer: fc.constant('respond-async') }),
    };
    const headers = fc.record(headerShape, { requiredKeys: [] });
    // A wrong method only answers 404 (no route): only when it is the one fault.
    const method = wrong === 'method' ? fc.constantFrom('PUT', 'PATCH', 'DELETE', 'POST', 'GET').filter((m) => m !== op.method) : fc.constant(op.method);
    const body = bodyArbitrary(op, ctx.known, faulty('body'));
    return fc.record({ method, path, query, extraQuery, headers, body }).map(({ method: m, path: params, query: q, extraQuery: extra, headers: h, body: b }): FuzzRequest => {
      const pairs = [...Object.entries(q).flatMap(([name, value]) => queryPairs(name, value)), ...extra];
      const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => urlText(params[name])) + (pairs.length ? `?${pairs.join('&')}` : '');
      const token = op.schemes.map((scheme) => ctx.tokens?.[scheme]).find((t) => t !== undefined) ?? ctx.token;
      const allHeaders: Record<string, string> = { ...(op.secured ? { authorization: `Bearer ${token}` } : {}), ...h };
      if (b.contentType !== undefined) allHeaders['content-type'] = b.contentType;
      return { method: m, url, headers: allHeaders, ...(b.payload === undefined ? {} : { payload: b.payload }), note: `wrong: ${wrong}; body: ${b.note}` };
    });
  });
}

/** The request as code, for the failure message (the token is elided). */
export function describeRequest(req: FuzzRequest, maxChars = 20_000): string {
  const headers = { ...req.headers };
  if (headers.authorization) headers.authorization = 'Bearer <token>';
  const lines = [`${req.method} ${req.url}`, `headers: ${JSON.stringify(headers)}`];
  if (req.payload !== undefined) {
    const bytes = Buffer.isBuffer(req.payload) ? req.payload : Buffer.from(req.payload);
    const asText = Buffer.isBuffer(req.payload) ? req.payload.toString('utf8') : req.payload;
    const exact = typeof req.payload === 'string' || Buffer.from(asText).equals(bytes);
    const shown = exact ? JSON.stringify(asText) : `base64:${bytes.toString('base64')}`;
    const cut = shown.length > maxChars ? `${shown.slice(0, maxChars)}… (${shown.length - maxChars} more characters)` : shown;
    lines.push(`body (${req.note}, ${bytes.length} bytes): ${cut}`);
  } else {
    lines.push(`body: none (${req.note})`);
  }
  return lines.join('\n');
}
