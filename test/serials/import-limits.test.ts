import { describe, expect, it } from 'vitest';
import { bearer, onPostgres, seedWorkspace, unique, useTestApp } from '../helpers/app.js';

// Imports at the documented limit on a stock PostgreSQL server. With one advisory lock per serial
// code, 10,000–20,000 codes exhausted PostgreSQL's lock table ("out of shared memory", a 500).
// PostgreSQL only: the embedded database has no shared lock table, and these take a while.

const ctx = useTestApp();

describe.skipIf(!onPostgres)('imports at the documented limit (PostgreSQL)', () => {
  it('imports 100,000 serial codes in one request', { timeout: 300_000 }, async () => {
    const ws = await seedWorkspace(ctx());
    const tag = unique().toUpperCase();
    const serials = Array.from({ length: 100_000 }, (_, i) => ({ serialCode: `LIM-${tag}-${i}`, productId: ws.ids.products.p1 }));
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/serials/import', headers: bearer(ws.owner), payload: { serials } });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 100_000, insertedCount: 100_000 });
  });

  it('imports 100,000 purchases that each name a new serial code', { timeout: 600_000 }, async () => {
    const ws = await seedWorkspace(ctx());
    const tag = unique().toUpperCase();
    const purchases = Array.from({ length: 100_000 }, (_, i) => ({
      email: `lim-${i}-${tag.toLowerCase()}@x.test`,
      productId: ws.ids.products.p1,
      serialCode: `PLIM-${tag}-${i}`,
      price: '10.00',
      date: '2026-01-02',
      externalReference: `EXT-${i}`,
    }));
    const res = await ctx().app.inject({ method: 'POST', url: '/api/developer/purchases/import', headers: bearer(ws.owner), payload: { purchases } });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
    expect(res.json()).toMatchObject({ importedCount: 100_000, insertedCount: 100_000 });
  });
});
