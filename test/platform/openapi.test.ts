import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { errorCatalogue } from '../../src/platform/http/errors.js';
import { registerPolicy } from '../../src/platform/auth/policy.js';
import { useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every registered route', async () => {
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const route of ctx().app.routeCatalog) {
      // The documentation's own routes, and the web front end's pages and assets (hidden on purpose; served only with a build).
      if (route.url.startsWith('/docs') || route.url === '/openapi.json' || route.hidden) continue;
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${route.url}`).toBeDefined();
    }
  });

  it('serves the reference UI', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('error codes are UPPER_SNAKE and have 4xx/5xx statuses', () => {
    for (const [code, spec] of errorCatalogue()) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(spec.status).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('route policies', () => {
  it('refuses to start with a route that declares no policy', async () => {
    const app = Fastify();
    registerPolicy(app, {} as never, async () => ({ accountId: 1, workspaceId: 1 }));
    expect(() => app.get('/api/unguarded', async () => 'open')).toThrow(/declares no access policy/);
    await app.close();
  });
});

describe('health', () => {
  it('answers /healthz and /readyz without auth', async () => {
    expect((await ctx().app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await ctx().app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('answers unknown routes with the problem shape', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('ROUTE_NOT_FOUND');
  });
});
