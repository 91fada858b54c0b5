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

describe('licensing rate limits per serial and address', () => {
  const limited = useTestApp({ rateLimit: { perIp: 1_000, perSerial: 2, perSerialTotal: 5 } });
  it('gives each address its own budget for a serial, under a higher ceiling for all addresses together', async () => {
    const ws = await seedWorkspace(limited(), { serials: [{ key: 'a', product: 'p1' }] });
    const validate = (ip: string) =>
      limited().app.inject({
        method: 'POST',
        url: '/api/licensing/v1/validate',
        remoteAddress: ip,
        payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.a, machineId: 'm' },
      });
    // Someone else who knows the serial uses up their own budget, not the owner's.
    expect((await validate('203.0.113.9')).statusCode).toBe(200);
    expect((await validate('203.0.113.9')).statusCode).toBe(200);
    expect((await validate('203.0.113.9')).statusCode).toBe(429);
    expect((await validate('198.51.100.1')).statusCode).toBe(200);
    expect((await validate('198.51.100.1')).statusCode).toBe(200);
    // A fifth accepted call reaches the serial's ceiling, which then applies to every address.
    expect((await validate('192.0.2.77')).statusCode).toBe(200);
    expect((await validate('192.0.2.77')).statusCode).toBe(429);
    expect((await validate('192.0.2.78')).statusCode).toBe(429);
  });
});
