import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { askLink, exchange, linkTokenFor, someClient } from './accounts-helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, trustProxy: true });

// Real parallelism needs PostgreSQL (PGlite serialises transactions); the same assertions hold on both.
describe('console identity under concurrency', () => {
  it('opens one session from one sign-in link however many exchanges race for it', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `owner-${ws.suffix}@dev.test`;
    await askLink(ctx(), email, someClient());
    const token = (await linkTokenFor(ctx(), transport, email))!;
    const results = await Promise.all(Array.from({ length: 12 }, () => exchange(ctx(), token, someClient())));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, ...Array(11).fill(401)]);
    const sessions = await ctx().database.db.selectFrom('developer_sessions').where('account_id', '=', ws.ids.accounts.owner!).select('id').execute();
    expect(sessions).toHaveLength(1);
  });

  it('removes a member once when removals race, with one audit record', async () => {
    const ws = await seedWorkspace(ctx(), { members: [{ key: 'lead', permissions: ['members.manage', 'customers.view'], products: 'all' }, { key: 'leaving', permissions: ['customers.view'], products: 'all' }] });
    const callers = [ws.owner, ws.tokens.lead!, ws.owner, ws.tokens.lead!, ws.owner, ws.tokens.lead!];
    const results = await Promise.all(callers.map((token) => ctx().app.inject({ method: 'DELETE', url: `/api/developer/members/${ws.ids.accounts.leaving}`, headers: bearer(token) })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 404, 404, 404, 404, 404]);
    const audit = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'member.removed').select('id').execute();
    expect(audit).toHaveLength(1);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/developer/customers', headers: bearer(ws.tokens.leaving!) })).statusCode).toBe(403);
  });

  it('lets only one of two managers who remove each other at once succeed', async () => {
    for (let round = 0; round < 3; round += 1) {
      const ws = await seedWorkspace(ctx(), {
        members: [
          { key: 'a', permissions: ['members.manage'], products: 'all' },
          { key: 'b', permissions: ['members.manage'], products: 'all' },
        ],
      });
      const [aRemovesB, bRemovesA] = await Promise.all([
        ctx().app.inject({ method: 'DELETE', url: `/api/developer/members/${ws.ids.accounts.b}`, headers: bearer(ws.tokens.a!) }),
        ctx().app.inject({ method: 'DELETE', url: `/api/developer/members/${ws.ids.accounts.a}`, headers: bearer(ws.tokens.b!) }),
      ]);
      const statuses = [aRemovesB.statusCode, bRemovesA.statusCode].sort();
      // The loser was removed before its own removal could run (403), or found its lock in a deadlock cycle (409, retryable).
      expect(statuses[0], `${aRemovesB.body} ${bRemovesA.body}`).toBe(200);
      expect([403, 409]).toContain(statuses[1]);
      const left = await ctx().database.db.selectFrom('memberships').where('workspace_id', '=', ws.workspaceId).select('account_id').execute();
      expect(left).toHaveLength(2);
    }
  });
});
