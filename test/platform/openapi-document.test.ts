import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApiDocument, serializeOpenApiDocument } from '../../src/operator/openapi-document.js';
import { OPERATION_IDS } from '../../src/openapi.js';
import { METHODS, type OpenApiDocument, type Operation } from '../../src/platform/http/openapi-document.js';
import { deriveOperationId } from '../../src/platform/http/openapi-operation-ids.js';
import { generateClientTypes } from '../client/generate.js';
import { useTestApp } from '../helpers/app.js';

const root = new URL('../../', import.meta.url);
const committedFile = new URL('docs/openapi.json', root);
const typesFile = new URL('test/client/schema.d.ts', root);
const STALE = 'is stale: run `npm run openapi` and commit docs/openapi.json and test/client/schema.d.ts';

const ctx = useTestApp();
let generated: OpenApiDocument;
beforeAll(async () => {
  generated = await generateOpenApiDocument();
});

function operations(doc: OpenApiDocument): Array<{ key: string; path: string; method: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op: item[method]! })),
  );
}

/** A response after following `#/components/responses/…`. */
function resolveResponse(doc: OpenApiDocument, response: unknown): { content?: Record<string, unknown>; headers?: Record<string, unknown> } {
  const ref = (response as { $ref?: string }).$ref;
  if (!ref) return response as never;
  return (doc.components.responses as Record<string, never>)[ref.replace('#/components/responses/', '')]!;
}

describe('the committed OpenAPI document', () => {
  it('is the document the service generates', () => {
    const committed = fs.readFileSync(committedFile, 'utf8');
    // Compared as text: key order and formatting are part of what reviewers diff.
    expect(committed === serializeOpenApiDocument(generated), `docs/openapi.json ${STALE}`).toBe(true);
  });

  it('and the typed client is generated from it', async () => {
    const types = fs.readFileSync(typesFile, 'utf8');
    expect(types === (await generateClientTypes(committedFile)), `test/client/schema.d.ts ${STALE}`).toBe(true);
    // openapi-typescript makes one entry per operationId; without ids it writes Record<string, never>.
    expect(types).toContain('export interface operations {');
    expect(types).toMatch(/^ {4}"customers\.list": \{$/m);
  });

  it('passes the Redocly linter with the repository rules (redocly.yaml)', async () => {
    const cli = new URL('node_modules/@redocly/cli/bin/cli.js', root);
    const { stdout } = await promisify(execFile)(process.execPath, [cli.pathname, 'lint', 'docs/openapi.json', '--format=json'], {
      cwd: root.pathname,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});

describe('OpenAPI operations', () => {
  it('each have an operationId of their own', () => {
    const seen = new Map<string, string[]>();
    for (const { key, op } of operations(generated)) seen.set(op.operationId!, [...(seen.get(op.operationId!) ?? []), key]);
    const shared = [...seen].filter(([, keys]) => keys.length > 1);
    expect(shared, 'operationIds used by more than one operation').toEqual([]);
    expect([...seen.keys()].every((id) => /^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$/.test(id))).toBe(true);
  });

  it('pins only ids of operations that exist', () => {
    const keys = new Set(operations(generated).map((o) => o.key));
    expect(Object.keys(OPERATION_IDS).filter((key) => !keys.has(key))).toEqual([]);
  });

  it('declare security from the route policy: none for public routes, the developer, recipient or customer schemes otherwise', () => {
    const doc = generated;
    for (const route of ctx().app.routeCatalog) {
      const op = doc.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
      if (!op || route.url === '/metrics') continue;
      const session = [{ developerSession: [] }, { developerSessionBearer: [] }];
      const expected = {
        public: [],
        account: [{ bearer: [] }, ...session, ...(route.policy.auth === 'account' && route.policy.apiTokens === false ? [] : [{ apiToken: [] }])],
        recipient: [{ recipientSession: [] }, { recipientBearer: [] }],
        developer: session,
        customer: [{ customerSession: [] }, { customerBearer: [] }],
      }[route.policy.auth];
      expect(op.security, `${route.method} ${route.url}`).toEqual(expected);
    }
  });

  it('answer errors as application/problem+json with the Problem schema, and 500 everywhere (CSV routes included)', () => {
    for (const { key, op } of operations(generated)) {
      expect(op.responses['500'], key).toBeDefined();
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const resolved = resolveResponse(generated, response);
        expect(Object.keys(resolved.content ?? {}), `${key} ${status}`).toEqual(['application/problem+json']);
        expect((resolved.content!['application/problem+json'] as { schema: unknown }).schema).toEqual({ $ref: '#/components/schemas/Problem' });
        expect(resolved.headers?.['X-Request-Id'], `${key} ${status}`).toBeDefined();
      }
    }
    expect(JSON.stringify(generated)).not.toContain('def-');
  });

  it('document their headers: the request id everywhere, Retry-After on 429, the idempotency replay, deprecation and downloads', () => {
    for (const { key, op, method } of operations(generated)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = resolveResponse(generated, response).headers ?? {};
        expect(headers['X-Request-Id'], `${key} ${status}`).toBeDefined();
        if (status === '429') expect(headers['Retry-After'], key).toMatchObject({ required: true });
        const ok = Number(status) >= 200 && Number(status) < 300;
        if (ok && op.security?.[0]?.bearer && method !== 'get') expect(headers['Idempotent-Replayed'], key).toBeDefined();
        if (ok && Object.keys((response as { content?: object }).content ?? {}).includes('text/csv')) expect(headers['Content-Disposition'], key).toBeDefined();
      }
    }
    const deprecated = generated.paths['/api/serials']!.get!;
    expect(deprecated.deprecated).toBe(true);
    expect(Object.keys(deprecated.responses['200']!.headers!)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
  });

  it('name the main rows as components instead of inline copies', () => {
    const schemas = generated.components.schemas!;
    for (const name of ['Problem', 'CustomerRow', 'SerialRow', 'PurchaseRow', 'ImportResult', 'ImportResource', 'ProductRow']) expect(schemas[name], name).toBeDefined();
    const list = generated.paths['/api/developer/customers']!.get!.responses['200']!.content!['application/json']!.schema as { properties: { rows: unknown } };
    expect(list.properties.rows).toEqual({ type: 'array', items: { $ref: '#/components/schemas/CustomerRow' } });
  });

  it('carry request and response examples (generated from the schemas; the linter validates them)', () => {
    for (const { key, op } of operations(generated)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) expect(media.example, `${key} request ${type}`).toBeDefined();
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(resolveResponse(generated, response).content ?? {})) {
          expect((media as { example?: unknown }).example, `${key} ${status} ${type}`).toBeDefined();
        }
      }
    }
  });

  it('name the deployment in servers (PUBLIC_BASE_URL)', async () => {
    const served = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(served.servers).toEqual([{ url: 'http://patchbay.test', description: expect.any(String) }]);
    expect(generated.servers?.[0]?.url).toBe('http://127.0.0.1:3000');
  });
});

describe('operation ids of routes added later', () => {
  it.each([
    ['a top-level list', 'GET', '/api/developer/customers', 'customers.list'],
    ['a create on a top-level collection', 'POST', '/api/developer/widgets', 'widgets.create'],
    ['a record', 'GET', '/api/developer/widgets/{widgetId}', 'widgets.get'],
    ['a record change', 'PATCH', '/api/developer/widgets/{widgetId}', 'widgets.update'],
    ['a record removal', 'DELETE', '/api/developer/widgets/{widgetId}', 'widgets.delete'],
    ['an action on a record', 'POST', '/api/developer/serials/{serialId}/transfer', 'serials.transfer'],
    ['a child list', 'GET', '/api/developer/serials/{serialId}/notes', 'serials.notes'],
    ['a child record removal', 'DELETE', '/api/developer/serials/{serialId}/notes/{noteId}', 'serials.notes.delete'],
    ['a licensing runtime call', 'POST', '/api/licensing/v1/heartbeat', 'licensing.heartbeat'],
    ['a partner portal read', 'GET', '/api/partner-portal/payouts', 'partnerPortal.payouts'],
    ['a kebab-case segment', 'POST', '/api/developer/serials/bulk-revoke', 'serials.bulkRevoke'],
  ])('%s: %s %s → %s', (_label, method, path, id) => {
    expect(deriveOperationId(method, path)).toBe(id);
  });
});
