import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { PayoutRuns } from '../../src/modules/ledger/payout-runs.service.js';
import type { Transfers } from '../../src/modules/ledger/transfers.service.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { bearer, seedWorkspace, type TestContext, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { CHECKOUT_SECRET, collaboration, payablePartner, privateDatabaseUrl, transfersOf } from './partner-money.js';

// Payout runs from the console: a job of the server's own runner, so they work on the embedded
// database while the server runs. A run covers the whole service, so on PostgreSQL this file has a
// database of its own.

const databaseUrl = await privateDatabaseUrl('payout_runs');
const ctx = useTestApp({ checkout: { webhookSecrets: [CHECKOUT_SECRET] }, ...(databaseUrl ? { databaseUrl } : {}) });
const RUNS = '/api/developer/partners/payouts/runs';

/** How many ledger entries a workspace has (a payout books some). */
const ledgerEntries = async (workspaceId: number) =>
  Number((await sql<{ n: string }>`select count(*)::text as n from ledger_entries where workspace_id = ${workspaceId}`.execute(ctx().database.db)).rows[0]!.n);

const start = (c: TestContext, token: string, payload: object = {}) => c.app.inject({ method: 'POST', url: RUNS, headers: bearer(token), payload });
const read = (c: TestContext, token: string, id: number) => c.app.inject({ method: 'GET', url: `${RUNS}/${id}`, headers: bearer(token) });

/** Polls a run as the console does until it and its transfers have settled. */
async function settled(c: TestContext, token: string, id: number) {
  for (let i = 0; i < 100; i += 1) {
    await c.app.jobs.idle();
    const run = (await read(c, token, id)).json();
    if (['succeeded', 'failed'].includes(run.state) && run.transfers.every((t: { status: string }) => ['paid', 'failed'].includes(t.status))) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`payout run ${id} did not settle`);
}

describe('payout runs from the console', () => {
  it('queues a run that the server runs, and shows its transfers moving to paid', async () => {
    const { ws, co } = await payablePartner(ctx());
    const res = await start(ctx(), ws.owner);
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json();
    expect(res.headers.location).toBe(`${RUNS}/${queued.id}`);
    expect(queued).toMatchObject({ livemode: false, requested_by: { id: ws.ids.accounts.owner, email: `owner-${ws.suffix}@dev.test` }, transfers_truncated: false });
    expect(['queued', 'running', 'succeeded']).toContain(queued.state);

    const run = await settled(ctx(), ws.owner, queued.id);
    expect(run).toMatchObject({ state: 'succeeded', failure: null, skipped: [] });
    expect(run.started_at).not.toBeNull();
    expect(run.finished_at).not.toBeNull();
    expect(run.transfers).toEqual([
      expect.objectContaining({ agreement_id: co, provider: 'wallet', livemode: false, currency: 'usd', amount_cents: 4500, status: 'paid', failure_reason: null }),
    ]);
    const [entry] = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'payouts.run_requested').selectAll().execute();
    expect(entry).toMatchObject({ actor_account_id: ws.ids.accounts.owner, subject_id: String(queued.id), data: { livemode: false } });

    // Nothing left to pay: the next run transfers nothing.
    const again = await settled(ctx(), ws.owner, (await start(ctx(), ws.owner)).json().id);
    expect(again).toMatchObject({ state: 'succeeded', transfers: [], skipped: [] });
  });

  it('pays only the asking workspace’s partners: another workspace’s payable balance stays untouched', async () => {
    const a = await payablePartner(ctx());
    const b = await payablePartner(ctx());
    const run = await settled(ctx(), a.ws.owner, (await start(ctx(), a.ws.owner)).json().id);
    expect(run.transfers).toEqual([expect.objectContaining({ agreement_id: a.co, status: 'paid' })]);
    expect(await transfersOf(ctx(), b.co)).toEqual([]);
    const before = await ledgerEntries(b.ws.workspaceId);
    // B's own run pays B.
    const own = await settled(ctx(), b.ws.owner, (await start(ctx(), b.ws.owner)).json().id);
    expect(own.transfers).toEqual([expect.objectContaining({ agreement_id: b.co, status: 'paid' })]);
    const after = await ledgerEntries(b.ws.workspaceId);
    expect(after).toBeGreaterThan(before);
  });

  it('answers the run already queued instead of queuing a second one', async () => {
    const ws = await seedWorkspace(ctx());
    const [held] = await ctx()
      .database.db.insertInto('payout_runs')
      .values({ workspace_id: ws.workspaceId, requested_by: ws.ids.accounts.owner!, livemode: false })
      .returning('id')
      .execute();
    const res = await start(ctx(), ws.owner);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id: held!.id, state: 'queued' });
    await ctx().database.db.updateTable('payout_runs').set({ state: 'failed', finished_at: new Date() }).where('id', '=', held!.id).execute();
  });

  it('keeps live runs for the owner, and needs partners.manage', async () => {
    const { ws } = await collaboration(ctx(), { members: [{ key: 'money', permissions: ['partners.manage'], products: 'all' }, { key: 'viewer', permissions: ['partners.view'], products: 'all' }] });
    expectProblem(await start(ctx(), ws.tokens.money!, { livemode: true }), 403, 'OWNER_REQUIRED');
    expectProblem(await start(ctx(), ws.tokens.viewer!), 403, 'FORBIDDEN');
    const test = await start(ctx(), ws.tokens.money!);
    expect(test.statusCode, test.body).toBe(202);
    expectProblem(await read(ctx(), ws.tokens.viewer!, test.json().id), 403, 'FORBIDDEN');
    // The owner's live run: no live provider is configured here, so it pays nothing.
    const live = await start(ctx(), ws.owner, { livemode: true });
    expect(live.statusCode, live.body).toBe(202);
    const done = await settled(ctx(), ws.owner, live.json().id);
    expect(done).toMatchObject({ livemode: true, state: 'succeeded', transfers: [] });
  });

  it('answers 404 for another workspace’s run and refuses bad input', async () => {
    const mine = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const theirs = (await start(ctx(), other.owner)).json();
    expectProblem(await read(ctx(), mine.owner, theirs.id), 404, 'NOT_FOUND');
    expectProblem(await read(ctx(), mine.owner, 2_000_000_000), 404, 'NOT_FOUND');
    expectProblem(await ctx().app.inject({ method: 'GET', url: `${RUNS}/0`, headers: bearer(mine.owner) }), 400, 'VALIDATION_FAILED');
    expectProblem(await start(ctx(), mine.owner, { livemode: 'yes' }), 400, 'VALIDATION_FAILED');
    expectProblem(await start(ctx(), mine.owner, { livemode: false, workspace: other.workspaceId }), 400, 'VALIDATION_FAILED');
    expectProblem(await ctx().app.inject({ method: 'POST', url: RUNS, payload: {} }), 401, 'UNAUTHENTICATED');
  });

  it('marks a run failed after its last attempt, with why', async () => {
    const ws = await seedWorkspace(ctx());
    const scope = operatorScope(ws.workspaceId, ws.ids.accounts.owner!);
    const broken = { run: async () => Promise.reject(new Error('the provider registry is unreachable')) } as unknown as Transfers;
    const runs = new PayoutRuns(ctx().database.db, broken);
    const [row] = await ctx().database.db.insertInto('payout_runs').values({ workspace_id: ws.workspaceId, requested_by: null, livemode: false }).returning('id').execute();
    await expect(runs.runJob(row!.id, false)).rejects.toThrow('unreachable');
    expect((await runs.get(scope, row!.id)).state).toBe('running');
    await expect(runs.runJob(row!.id, true)).rejects.toThrow('unreachable');
    expect(await runs.get(scope, row!.id)).toMatchObject({ state: 'failed', failure: 'the provider registry is unreachable', requested_by: null });
  });
});
