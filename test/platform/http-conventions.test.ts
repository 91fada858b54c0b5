import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/platform/http/logging.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

describe('HTTP conventions', () => {
  it.each(['/api/developer/customers/demo-csv', '/api/developer/serials/resellers', '/api/developer/purchases/filter-options', '/api/developer/serials/demo-csv'])(
    'answers 400 for an unknown query parameter on %s',
    async (url) => {
      const ws = await seedWorkspace(ctx());
      const res = await ctx().app.inject({ method: 'GET', url: `${url}?surprise=1`, headers: bearer(ws.owner) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'querystring/surprise' }] });
    },
  );

  it('marks authenticated JSON no-store and nosniff', async () => {
    const ws = await seedWorkspace(ctx());
    const res = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.owner) });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const denied = await ctx().app.inject({ method: 'GET', url: '/api/developer/customers' });
    expect(denied.headers['x-content-type-options']).toBe('nosniff');
  });

  it('shows a product-scoped member only the resellers with sales of their products', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'scoped', permissions: ['serials.view', 'purchases.view'], products: ['p1'] }],
      customers: [{ key: 'c', products: ['p1', 'p2'] }],
      resellers: [
        { key: 'mine', name: 'Sells P1' },
        { key: 'theirs', name: 'Sells P2' },
        { key: 'idle', name: 'Sells nothing' },
      ],
      orders: [
        { key: 'o1', customer: 'c', channel: 'external_store', reseller: 'mine', items: [{ product: 'p1', priceCents: 100 }] },
        { key: 'o2', customer: 'c', channel: 'external_store', reseller: 'theirs', items: [{ product: 'p2', priceCents: 100 }] },
      ],
    });
    const names = async (token: string) =>
      ((await ctx().app.inject({ method: 'GET', url: '/api/developer/serials/resellers', headers: bearer(token) })).json().resellers as Array<{ name: string }>).map(
        (r) => r.name,
      );
    expect((await names(ws.owner)).sort()).toEqual(['Sells P1', 'Sells P2', 'Sells nothing'].sort());
    expect(await names(ws.tokens.scoped!)).toEqual(['Sells P1']);
  });
});

describe('redactUrl', () => {
  it.each([
    ['/api/developer/customers?search=ann%40x.test&limit=5', '/api/developer/customers?search=[redacted]&limit=5'],
    ['/api/developer/customers?limit=5', '/api/developer/customers?limit=5'],
    ['/x?email=a@b.c&first_name=Ann', '/x?email=[redacted]&first_name=[redacted]'],
    ['/x?search', '/x?search'],
    ['/x', '/x'],
    ['/api/partner-portal/programs/invitations/abcDEF_123-xyz', '/api/partner-portal/programs/invitations/[redacted]'],
    ['/api/partner-portal/programs/invitations/abc?x=1', '/api/partner-portal/programs/invitations/[redacted]?x=1'],
    ['/api/partner-portal/programs/invitations/accept', '/api/partner-portal/programs/invitations/accept'],
    ['/api/payouts/sandbox/onboarding/sbo_abc123', '/api/payouts/sandbox/onboarding/[redacted]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
