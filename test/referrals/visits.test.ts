import { describe, expect, it } from 'vitest';
import { Recipients } from '../../src/modules/recipients/recipients.service.js';
import { bearer, seedWorkspace, type TestContext, unique, useTestApp } from '../helpers/app.js';

// The partner portal's view of a referral link's visits (issue 21): counts per day and totals, the
// recipient's own agreements only, nothing of who visited.

const ctx = useTestApp({ partners: { referralsPerMinute: 100_000 } });
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const DAY = 86_400_000;

async function affiliate(c: TestContext, email = `aff-${unique()}@partner.test`) {
  const ws = await seedWorkspace(c, { programs: [{ key: 'aff', kind: 'affiliate', name: 'Aff', recipientEmail: email, rateBps: 1000, status: 'active' }] });
  const id = ws.ids.programs.aff!;
  const { referral_code } = await c.database.db.selectFrom('partner_agreements').where('id', '=', id).select('referral_code').executeTakeFirstOrThrow();
  const session = (await new Recipients(c.database.db).operatorSession(email)).token;
  return { ws, id, code: referral_code!, session };
}

const visits = (c: TestContext, id: number, session: string | null, query = '') =>
  c.app.inject({ method: 'GET', url: `/api/partner-portal/programs/${id}/referral-visits${query}`, headers: session ? bearer(session) : {} });

async function waitForTotal(c: TestContext, id: number, session: string, total: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await visits(c, id, session);
    expect(res.statusCode, res.body).toBe(200);
    if (res.json().total_visits >= total || Date.now() > deadline) return res.json();
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('GET /api/partner-portal/programs/:id/referral-visits', () => {
  it('counts a followed link per UTC day, bots apart, zero-filled, and answers nothing of the visitor', async () => {
    const c = ctx();
    const { ws, id, code, session } = await affiliate(c);
    const empty = await visits(c, id, session);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toMatchObject({ agreement_id: id, days: 30, total_visits: 0, last_visit_at: null, period_visits: 0, period_bot_visits: 0 });
    expect(empty.json().daily).toHaveLength(30);
    expect(empty.json().daily.at(-1).date).toBe(new Date().toISOString().slice(0, 10));

    expect((await c.app.inject({ method: 'GET', url: `/api/partner-referrals/${code}`, headers: { 'user-agent': IPHONE } })).statusCode).toBe(303);
    expect((await c.app.inject({ method: 'GET', url: `/api/partner-referrals/${code}`, headers: { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' } })).statusCode).toBe(303);
    // An older visit (within the window) and one beyond it.
    await c.database.db
      .insertInto('partner_referral_visits')
      .values([
        { workspace_id: ws.workspaceId, agreement_id: id, product_id: null, visited_at: new Date(Date.now() - 3 * DAY), address_hash: 'h1', user_agent_class: 'desktop' },
        { workspace_id: ws.workspaceId, agreement_id: id, product_id: null, visited_at: new Date(Date.now() - 40 * DAY), address_hash: 'h2', user_agent_class: 'desktop' },
      ])
      .execute();

    const body = await waitForTotal(c, id, session, 4);
    expect(body).toMatchObject({ total_visits: 4, period_visits: 3, period_bot_visits: 1 });
    expect(Date.now() - new Date(body.last_visit_at).getTime()).toBeLessThan(60_000);
    const today = new Date().toISOString().slice(0, 10);
    const threeDaysAgo = new Date(Date.now() - 3 * DAY).toISOString().slice(0, 10);
    expect(body.daily.find((d: { date: string }) => d.date === today)).toEqual({ date: today, visits: 2, bot_visits: 1 });
    expect(body.daily.find((d: { date: string }) => d.date === threeDaysAgo)).toEqual({ date: threeDaysAgo, visits: 1, bot_visits: 0 });
    expect(body.daily.filter((d: { visits: number }) => d.visits === 0)).toHaveLength(28);
    expect(JSON.stringify(body)).not.toMatch(/h1|h2|address|agent|iPhone|mobile/i);

    const wide = await visits(c, id, session, '?days=90');
    expect(wide.json()).toMatchObject({ days: 90, period_visits: 4 });
    expect(wide.json().daily).toHaveLength(90);
    const one = await visits(c, id, session, '?days=1');
    expect(one.json()).toMatchObject({ days: 1, period_visits: 2, daily: [{ date: today, visits: 2, bot_visits: 1 }] });
  });

  it('answers 401 without a recipient session (a developer’s token is not one)', async () => {
    const c = ctx();
    const { ws, id } = await affiliate(c);
    expect((await visits(c, id, null)).statusCode).toBe(401);
    const dev = await visits(c, id, ws.owner);
    expect(dev.statusCode).toBe(401);
  });

  it('answers 404 for another recipient’s agreement, an unknown one, and one of a workspace whose programs are off', async () => {
    const c = ctx();
    const a = await affiliate(c);
    const b = await affiliate(c);
    const other = await visits(c, b.id, a.session);
    expect(other.statusCode).toBe(404);
    expect(other.json().code).toBe('NOT_FOUND');
    expect((await visits(c, 2_000_000_000, a.session)).statusCode).toBe(404);
    await c.database.db.updateTable('workspaces').set({ partner_programs_enabled: false }).where('id', '=', a.ws.workspaceId).execute();
    expect((await visits(c, a.id, a.session)).statusCode).toBe(404);
  });

  it('refuses bad input with 400 VALIDATION_FAILED', async () => {
    const c = ctx();
    const { id, session } = await affiliate(c);
    for (const query of ['?days=0', '?days=91', '?days=x', '?page=1']) {
      const res = await visits(c, id, session, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    expect((await c.app.inject({ method: 'GET', url: '/api/partner-portal/programs/abc/referral-visits', headers: bearer(session) })).statusCode).toBe(400);
  });
});
