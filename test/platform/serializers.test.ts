import { describe, expect, it } from 'vitest';
import { compileAllSerializers, lazySerializerRegistry, lazySerializers } from '../../src/platform/http/serializers.js';
import { compileAllValidators, lazyValidatorRegistry } from '../../src/platform/http/validation.js';
import { useTestApp } from '../helpers/app.js';

// Response serializers and request validators compile on first use (src/platform/http/serializers.ts, validation.ts):
// the answers must be what Fastify's eager compilation gave, and a schema that cannot compile must still fail a test.

const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });

describe('every response schema of the app', () => {
  const ctx = useTestApp();

  it('compiles', async () => {
    await ctx().app.ready();
    // Before the unit cases below add a broken one.
    expect(compileAllSerializers()).toBeGreaterThan(100);
    expect(compileAllValidators()).toBeGreaterThan(100);
    const res = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: expect.any(String), status: 401 });
  });
});

describe('lazy response serializers', () => {
  it('serializes as fast-json-stringify does: declared fields only, in schema order', () => {
    const compile = lazySerializers({}, {});
    const serialize = compile(route({ type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } }));
    expect(serialize({ name: 'Nebula', id: 7, secret: 'never answered' })).toBe('{"id":7,"name":"Nebula"}');
  });

  it('resolves references to schemas added to the app', () => {
    const compile = lazySerializers({ Thing: { $id: 'Thing', type: 'object', properties: { a: { type: 'string' } } } }, {});
    expect(compile(route({ $ref: 'Thing#' }))({ a: 'b', c: 'd' })).toBe('{"a":"b"}');
  });

  it('forgets the definitions of a closed app: a process that builds many apps neither keeps nor compiles them', () => {
    const registry = lazySerializerRegistry();
    registry.factory({}, {})(route({ type: 'object', properties: { a: { $ref: 'Missing#' } } }));
    expect(() => compileAllSerializers()).toThrow();
    registry.close();
    expect(() => compileAllSerializers()).not.toThrow();
  });

  it('reports a schema that cannot compile when it is first used, and compileAllSerializers finds it first', () => {
    const broken = { type: 'object', properties: { a: { $ref: 'Missing#' } } };
    const serialize = lazySerializers({}, {})(route(broken));
    expect(() => compileAllSerializers()).toThrow();
    expect(() => serialize({ a: 1 })).toThrow();
  });
});

describe('lazy request validators', () => {
  const schemaOf = (schema: unknown, httpPart: string) => ({ schema, httpPart, method: 'GET', url: '/x' }) as never;

  it('check as Ajv does: coercion of the query string, errors read after a failed check, nothing compiled before use', () => {
    const registry = lazyValidatorRegistry();
    try {
      const schema = { type: 'object', properties: { page: { type: 'integer', minimum: 1 } }, additionalProperties: false };
      compileAllValidators();
      const validate = registry.compiler(schemaOf(schema, 'querystring')) as unknown as ((data: unknown, context?: object) => boolean) & {
        errors?: unknown[] | null;
        schemaEnv?: unknown;
      };
      // Declared, not compiled: the one pending validator.
      expect(compileAllValidators()).toBe(1);
      // Fastify passes the parent when the function has a schemaEnv, so that a coerced root is written back.
      expect(validate.schemaEnv).toBeTruthy();
      const request = { query: { page: '2' } as Record<string, unknown> };
      expect(validate(request.query, { parentData: request, parentDataProperty: 'query' } as object)).toBe(true);
      expect(request.query.page).toBe(2);
      expect(validate({ page: '0' })).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ instancePath: '/page' });
      expect(validate({ other: 1 })).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ params: { additionalProperty: 'other' } });
    } finally {
      registry.close();
    }
  });

  it('reports a schema that cannot compile when it is first used, and compileAllValidators finds it first; a closed app is forgotten', () => {
    const registry = lazyValidatorRegistry();
    const validate = registry.compiler(schemaOf({ type: 'object', properties: { a: { $ref: 'Missing#' } } }, 'body')) as unknown as (data: unknown) => boolean;
    expect(() => compileAllValidators()).toThrow();
    expect(() => validate({ a: 1 })).toThrow();
    registry.close();
    expect(() => compileAllValidators()).not.toThrow();
  });
});
