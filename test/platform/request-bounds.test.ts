import Fastify from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApiDocument } from '../../src/operator/openapi-document.js';
import { Id, Int, TEXT_LIMITS } from '../../src/platform/http/bounded.js';
import { METHODS, type OpenApiDocument } from '../../src/platform/http/openapi-document.js';
import { registerOpenApi } from '../../src/platform/http/openapi.js';
import { enforceLimits, registerRateLimits } from '../../src/platform/http/rate-limits.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

// OWASP API4 (unrestricted resource consumption) without an external linter: every string, number
// and list a request may carry is bounded in the published document, so a new field without bounds
// fails here; `npm run openapi:owasp` runs the Spectral ruleset over the committed file as well.

type Schema = Record<string, unknown>;

/** Import cells take any JSON value: the row reader checks and bounds each one (a row error, not a 400). */
const isImportJson = (where: string) => / \/api\/developer\/\w+\/import body\(application\/json\)/.test(where);

/** What is unbounded in the request side of a document: parameters and request bodies, through `$ref`s. */
function unboundedRequestFields(doc: OpenApiDocument): string[] {
  const found: string[] = [];
  const resolve = (node: unknown): Schema | undefined => {
    let current = node as Schema | undefined;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops += 1) {
      const parts = (current.$ref as string).replace(/^#\//, '').split('/');
      current = parts.reduce<unknown>((n, part) => (n as Schema | undefined)?.[part], doc) as Schema | undefined;
    }
    return current;
  };
  const visit = (node: unknown, where: string, seen: Set<unknown>): void => {
    const schema = resolve(node);
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    const inPath = new Set(seen).add(schema);
    const types = ([] as unknown[]).concat(schema.type ?? []);
    const closed = 'enum' in schema || 'const' in schema;
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      for (const [i, part] of ((schema[key] as unknown[] | undefined) ?? []).entries()) visit(part, `${where} ${key}[${i}]`, inPath);
    }
    const has = (...keys: string[]) => keys.some((k) => typeof schema[k] === 'number');
    if (types.includes('string') && !closed && !has('maxLength')) found.push(`${where}: string without maxLength`);
    for (const numeric of ['integer', 'number']) {
      if (types.includes(numeric) && !closed && !(has('minimum', 'exclusiveMinimum') && has('maximum', 'exclusiveMaximum'))) {
        found.push(`${where}: ${numeric} without minimum and maximum`);
      }
    }
    if (types.includes('integer') && !closed && schema.format !== 'int32' && schema.format !== 'int64') found.push(`${where}: integer without format int32 or int64`);
    if (types.includes('array')) {
      if (!has('maxItems')) found.push(`${where}: array without maxItems`);
      visit(schema.items, `${where}[]`, inPath);
    }
    for (const [name, property] of Object.entries((schema.properties as Schema | undefined) ?? {})) visit(property, `${where} ${name}`, inPath);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${where} *`, inPath);
    const combined = ['anyOf', 'oneOf', 'allOf', 'not'].some((k) => k in schema);
    if (types.length === 0 && !closed && !combined && !has('maxLength') && !isImportJson(where)) found.push(`${where}: any value, unbounded`);
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) {
        const p = resolve(parameter) as { in: string; name: string; schema?: unknown };
        visit(p.schema, `${at} ${p.in} ${p.name}`, new Set());
      }
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) visit(media.schema, `${at} body(${type})`, new Set());
    }
  }
  return found;
}

let doc: OpenApiDocument;
beforeAll(async () => {
  doc = await generateOpenApiDocument();
});

describe('bounds of what a request may carry (OWASP API4)', () => {

  it('holds every request string, number and array of the document to a maximum, every integer to a width', () => {
    expect(unboundedRequestFields(doc)).toEqual([]);
  });

  it('reports a field without bounds (the check itself)', () => {
    const body = (schema: Schema) => ({ requestBody: { content: { 'application/json': { schema } } }, responses: {} });
    const probe = {
      openapi: '3.1.0',
      info: {},
      components: { schemas: { Named: { type: 'object', properties: { note: { type: 'string' } } } } },
      paths: {
        '/api/widgets/{widgetId}': {
          post: {
            parameters: [{ in: 'path', name: 'widgetId', schema: { type: 'integer', minimum: 1 } }],
            ...body({
              type: 'object',
              properties: {
                tags: { type: 'array', items: { type: 'string', maxLength: 10 } },
                name: { anyOf: [{ type: 'string' }, { type: 'null' }] },
                named: { $ref: '#/components/schemas/Named' },
                kind: { type: 'string', enum: ['a', 'b'] },
                anything: {},
                size: Int(0, 10),
                id: Id(),
              },
            }),
          },
        },
        '/api/developer/widgets/import': { post: body({ type: 'object', properties: { rows: { type: 'array', maxItems: 5, items: { properties: { cell: {} } } } } }) },
      },
    } as unknown as OpenApiDocument;
    expect(unboundedRequestFields(probe)).toEqual([
      'POST /api/widgets/{widgetId} path widgetId: integer without minimum and maximum',
      'POST /api/widgets/{widgetId} path widgetId: integer without format int32 or int64',
      'POST /api/widgets/{widgetId} body(application/json) tags: array without maxItems',
      'POST /api/widgets/{widgetId} body(application/json) name anyOf[0]: string without maxLength',
      'POST /api/widgets/{widgetId} body(application/json) named note: string without maxLength',
      'POST /api/widgets/{widgetId} body(application/json) anything: any value, unbounded',
    ]);
  });

  it('derives the integer width from the bounds', () => {
    expect(Id()).toMatchObject({ minimum: 1, maximum: 2_147_483_647, format: 'int32' });
    expect(Int(0, 2 ** 40)).toMatchObject({ format: 'int64' });
    expect(() => Int(5, 1)).toThrow(/minimum first/);
  });
});

describe('limits documented as 429 with Retry-After', () => {
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ key: `${method.toUpperCase()} ${path}`, path, op: item[method]! })));

  it('on every public API route (a cap of requests in progress per address, or the webhook’s own bound)', () => {
    const missing = operations().filter(({ path, op }) => path.startsWith('/api/') && (op.security ?? []).length === 0 && !op.responses['429']);
    expect(missing.map((o) => o.key)).toEqual([]);
  });

  it('on the rate-limited and slot-limited developer and portal routes', () => {
    const limited = [
      // Invitation cooldown and daily invitation count (INVITE_COOLDOWN, INVITE_LIMIT_REACHED).
      'POST /api/developer/partners/programs',
      'PATCH /api/developer/partners/programs/{id}',
      'POST /api/developer/partners/programs/{id}/invite',
      // Package downloads per product and minute, and the build slots (PACKAGE_BUILD_BUSY).
      'GET /api/developer/products/{productId}/plugin-package',
      'POST /api/developer/products/{productId}/plugin-package/generate',
      'POST /api/developer/products/{productId}/plugin-package/regenerate',
      'GET /api/developer/storefront/plugin-package',
      // Onboarding starts per recipient and hour.
      'POST /api/partner-portal/programs/payouts/card-provider',
      'POST /api/partner-portal/programs/payouts/card-provider/refresh',
      'POST /api/partner-portal/programs/payouts/wallet-provider',
    ];
    const documented = new Map(operations().map(({ key, op }) => [key, op.responses['429']]));
    expect(limited.filter((key) => !documented.get(key))).toEqual([]);
  });

  it('with a required Retry-After wherever 429 is documented', () => {
    const problem = (doc.components as { responses: Record<string, { headers: Record<string, { required?: boolean }> }> }).responses;
    for (const { key, op } of operations()) {
      const answer = op.responses['429'] as { $ref?: string; headers?: Record<string, { required?: boolean }> } | undefined;
      if (!answer) continue;
      const headers = answer.$ref ? problem[answer.$ref.split('/').pop()!]!.headers : answer.headers!;
      expect(headers['Retry-After']?.required, key).toBe(true);
    }
  });

  it('for a route behind a rate limit even when its schema does not declare 429', async () => {
    const app = Fastify({ logger: false });
    await registerRateLimits(app, {});
    await registerOpenApi(app, { publicBaseUrl: 'http://patchbay.test' });
    app.post('/api/widgets', { preHandler: enforceLimits(app, [{ max: 1, windowMs: 1_000, key: () => 'k' }]), config: { policy: { auth: 'public' } } }, async () => ({}));
    app.get('/api/gadgets', { config: { policy: { auth: 'account', permission: null } } }, async () => ({}));
    await app.ready();
    const served = app.swagger() as unknown as OpenApiDocument;
    expect(served.paths['/api/widgets']!.post!.responses['429']).toBeDefined();
    expect(served.paths['/api/gadgets']!.get!.responses['429']).toBeUndefined();
    await app.close();
  });
});

describe('an over-long or out-of-range value', () => {
  const ctx = useTestApp();
  const long = (n: number) => 'x'.repeat(n);

  /** 400 VALIDATION_FAILED naming exactly the field. */
  function expectRefused(res: { statusCode: number; json(): any }, path: string) {
    expect(res.statusCode, JSON.stringify(res.json())).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path, message: expect.any(String) }] });
  }

  it('answers 400 naming a body field: an agreement name over 200 characters, a grant of more than 50 products', async () => {
    const ws = await seedWorkspace(ctx());
    const app = ctx().app;
    const agreement = await app.inject({
      method: 'POST',
      url: '/api/developer/partners/programs',
      headers: bearer(ws.owner),
      payload: { kind: 'affiliate', recipient_email: 'r@x.test', name: long(201), rate_bps: 500 },
    });
    expectRefused(agreement, 'body/name');
    expect(agreement.json().errors[0].message).toMatch(/200 characters/);

    const grant = await app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productIds: Array.from({ length: 51 }, (_, i) => i + 1), email: 'g@x.test', reason: 'support' },
    });
    expectRefused(grant, 'body/productIds');
  });

  it('answers 400 naming a date-time longer than any RFC 3339 instant, and a serial prefix over 12 characters', async () => {
    const ws = await seedWorkspace(ctx());
    const app = ctx().app;
    const grant = await app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p1, email: 'g@x.test', reason: 'support', grantType: 'subscription', accessUntil: `2030-01-01T00:00:00.${'0'.repeat(TEXT_LIMITS.dateTime)}Z` },
    });
    expectRefused(grant, 'body/accessUntil');
    const generate = await app.inject({
      method: 'POST',
      url: '/api/developer/serials/generate',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p1, prefix: 'ABCDEFGHIJKLM' },
    });
    expectRefused(generate, 'body/prefix');
  });

  it('answers 400 naming a query parameter: a search over 200 characters, a product id beyond the id column', async () => {
    const ws = await seedWorkspace(ctx());
    const app = ctx().app;
    expectRefused(await app.inject({ method: 'GET', url: `/api/developer/customers?search=${long(201)}`, headers: bearer(ws.owner) }), 'querystring/search');
    expectRefused(await app.inject({ method: 'GET', url: '/api/developer/serials?productId=2147483648', headers: bearer(ws.owner) }), 'querystring/productId');
    expectRefused(await app.inject({ method: 'GET', url: `/api/developer/purchases?dateFrom=${long(33)}`, headers: bearer(ws.owner) }), 'querystring/dateFrom');
  });

  it('answers 400 naming the field on public routes: an e-mail over 254 characters, a sign-in token over 100', async () => {
    const app = ctx().app;
    const email = `${long(250)}@x.test`;
    expectRefused(await app.inject({ method: 'POST', url: '/api/partner-portal/session/link', payload: { email } }), 'body/email');
    expectRefused(await app.inject({ method: 'POST', url: '/api/partner-portal/session', payload: { token: long(101) } }), 'body/token');
    // A path parameter is cut off earlier, by the router's length limit.
    expect((await app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${long(101)}` })).json().code).toBe('URI_TOO_LONG');
  });

  it('keeps the import row limit a 413 IMPORT_TOO_LARGE (the row array is bounded in the schema too)', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/serials/import',
      headers: bearer(ws.owner),
      payload: { serials: Array.from({ length: 100_001 }, () => ({})) },
    });
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().code).toBe('IMPORT_TOO_LARGE');
  });
});
