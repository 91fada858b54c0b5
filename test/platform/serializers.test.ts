import { describe, expect, it } from 'vitest';
import { compileAllSerializers, lazySerializerRegistry, lazySerializers } from '../../src/platform/http/serializers.js';
import { useTestApp } from '../helpers/app.js';

// Response serializers compile on first use (src/platform/http/serializers.ts): the answers must be what
// Fastify's eager compilation gave, and a schema that cannot compile must still fail a test.

const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });

describe('every response schema of the app', () => {
  const ctx = useTestApp();

  it('compiles', async () => {
    await ctx().app.ready();
    // Before the unit cases below add a broken one.
    expect(compileAllSerializers()).toBeGreaterThan(100);
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
