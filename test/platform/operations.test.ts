import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

// Browser and operations readiness: CORS for allowlisted origins, security headers, metrics.

const ORIGIN = 'https://console.vendor.example';

describe('CORS and security headers', () => {
  const ctx = useTestApp({ corsOrigins: [ORIGIN] });

  it('answers a preflight from an allowlisted origin with the methods and headers the API uses', async () => {
    const res = await ctx().app.inject({
      method: 'OPTIONS',
      url: '/api/developer/purchases/manual-grant',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(res.headers['access-control-allow-headers'])).toContain('idempotency-key');
  });

  it('exposes the headers a browser client needs on actual answers', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: { ...bearer(ws.owner), origin: ORIGIN } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    const exposed = String(res.headers['access-control-expose-headers']);
    for (const header of ['x-request-id', 'idempotent-replayed', 'content-disposition', 'retry-after']) expect(exposed).toContain(header);
  });

  it('gives other origins no CORS permission', async () => {
    const res = await ctx().app.inject({
      method: 'OPTIONS',
      url: '/api/developer/customers',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends security headers on API answers, and a content policy that forbids everything', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/healthz' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBeDefined();
  });

  it('serves the API reference with a policy that lets its own scripts run', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'self'");
  });
});

describe('GET /metrics', () => {
  const ctx = useTestApp();

  it('reports requests by route and status, job and licensing outcomes in the Prometheus format', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 's', product: 'p1' }] });
    await ctx().app.inject({ method: 'GET', url: `/api/developer/customers/${999999}`, headers: bearer(ws.owner) });
    await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
    await ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/validate', payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'm' } });
    await ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/activate', payload: { productAppId: ws.appIds.p1, serial: 'NOPE-NOPE', machineId: 'm' } });
    const grant = await ctx().app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p1, email: `m-${ws.suffix}@x.test`, reason: 'x', sendProductPurchaseEmails: true },
    });
    expect(grant.statusCode).toBe(201);
    await ctx().app.jobs.idle();

    const res = await ctx().app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toMatch(/patchbay_http_requests_total\{method="GET",route="\/api\/developer\/customers",status="200"\} \d+/);
    expect(text).toMatch(/patchbay_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/developer\/customers",status="200"\}/);
    expect(text).toContain('patchbay_licensing_outcomes_total{operation="validate",code="MACHINE_NOT_ACTIVATED"} 1');
    expect(text).toContain('patchbay_licensing_outcomes_total{operation="activate",code="LICENSE_NOT_FOUND"} 1');
    expect(text).toContain('patchbay_jobs_total{kind="email.send",outcome="succeeded"} 1');
    expect(text).toContain('# TYPE patchbay_jobs_queue_depth gauge');
  });

  describe('with METRICS_TOKEN', () => {
    const guarded = useTestApp({ metricsToken: 'metrics-secret-0123456789' });
    it('answers 401 without the token and 200 with it', async () => {
      expect((await guarded().app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect((await guarded().app.inject({ method: 'GET', url: '/metrics', headers: bearer('wrong') })).statusCode).toBe(401);
      expect((await guarded().app.inject({ method: 'GET', url: '/metrics', headers: bearer('metrics-secret-0123456789') })).statusCode).toBe(200);
    });
  });
});
