import { describe, expect, it } from 'vitest';
import { seedWorkspace, useTestApp } from '../helpers/app.js';
import { client, expectProblem, MEMBERS, SERIALS } from './serials-helpers.js';

const ctx = useTestApp();
const api = client(ctx);
const LEGACY = '/api/serials';

describe('GET /api/serials (deprecated alias)', () => {
  it('answers the same rows as /api/developer/serials for the same query', async () => {
    const ws = await seedWorkspace(ctx(), {
      customers: [{ key: 'c' }],
      serials: [
        { key: 'a', product: 'p1' },
        { key: 'b', product: 'p2', customer: 'c' },
        { key: 'c', product: 'p1' },
      ],
    });
    for (const query of ['', '?limit=2&page=2', '?status=redeemed', `?productId=${ws.ids.products.p1}`, `?search=${ws.serialCodes.a!.slice(0, 11)}`]) {
      const legacy = await api.get(ws.owner, `${LEGACY}${query}`);
      expect(legacy.statusCode, query).toBe(200);
      expect(legacy.json(), query).toEqual((await api.get(ws.owner, `${SERIALS}${query}`)).json());
    }
  });

  it('announces its deprecation, sunset and successor', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await api.get(ws.owner, LEGACY);
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toMatch(/^@\d+$/);
    expect(Number(String(res.headers.deprecation).slice(1)) * 1000).toBeLessThan(Date.parse(String(res.headers.sunset)));
    expect(new Date(String(res.headers.sunset)).toUTCString()).toBe(res.headers.sunset);
    expect(res.headers.link).toBe('</api/developer/serials>; rel="successor-version"');
    expect((await api.get(ws.owner, SERIALS)).headers.deprecation).toBeUndefined();
  });

  it('keeps the product scope and the serials.view permission of the successor', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [MEMBERS.scoped, MEMBERS.manager],
      serials: [
        { key: 'mine', product: 'p1' },
        { key: 'theirs', product: 'p2' },
      ],
    });
    const scoped = (await api.get(ws.tokens.scoped!, LEGACY)).json();
    expect(scoped.rows.map((r: { serial: string }) => r.serial)).toEqual([ws.serialCodes.mine]);
    expect((await api.get(ws.tokens.scoped!, `${LEGACY}?productId=${ws.ids.products.p2}`)).json().total).toBe(0);
    expectProblem(await api.get(ws.tokens.manager!, LEGACY), 403, 'FORBIDDEN');
  });

  it('rejects bad filters with 400 like its successor', async () => {
    const ws = await seedWorkspace(ctx());
    expectProblem(await api.get(ws.owner, `${LEGACY}?status=revoked`), 400, 'VALIDATION_FAILED');
    expectProblem(await api.get(ws.owner, `${LEGACY}?dateRange=yesterday`), 400, 'VALIDATION_FAILED');
  });
});
