import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp({ rateLimit: { perIp: 1_000, perSerial: 3 } });

describe('licensing rate limits', () => {
  it('answers 429 with Retry-After once a serial exceeds its budget, without affecting other serials', async () => {
    const ws = await seedWorkspace(ctx(), { serials: [{ key: 'a', product: 'p1' }, { key: 'b', product: 'p1' }] });
    const validate = (serial: string) =>
      ctx().app.inject({ method: 'POST', url: '/api/licensing/v1/validate', payload: { productAppId: ws.appIds.p1, serial, machineId: 'm' } });
    for (let i = 0; i < 3; i++) expect((await validate(ws.serialCodes.a!)).statusCode).toBe(200);
    const limited = await validate(ws.serialCodes.a!);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Same serial written differently is the same budget.
    expect((await validate(ws.serialCodes.a!.toLowerCase())).statusCode).toBe(429);
    expect((await validate(ws.serialCodes.b!)).statusCode).toBe(200);
  });
});

describe('licensing rate limits per address', () => {
  const small = useTestApp({ rateLimit: { perIp: 2, perSerial: 1_000 } });
  it('limits one client address across serials', async () => {
    const get = () => small().app.inject({ method: 'GET', url: '/api/licensing/v1/keys?productAppId=app_none' });
    expect((await get()).statusCode).toBe(404);
    expect((await get()).statusCode).toBe(404);
    const limited = await get();
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });
});
