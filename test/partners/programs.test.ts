import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, buildTestApp, onPostgres, seedWorkspace, type SeededWorkspace, type TestContext, unique, useTestApp } from '../helpers/app.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, partners: { inviteResendCooldownSeconds: 0 } });
const POLICY = 'patchbay-managed-live-v1';
const PROGRAMS = '/api/developer/partners/programs';

const MEMBERS = [
  { key: 'viewer', permissions: ['partners.view'], products: 'all' as const },
  { key: 'manager', permissions: ['partners.view', 'partners.manage'], products: 'all' as const },
  { key: 'star', permissions: ['*'], products: 'all' as const },
  { key: 'scoped', permissions: ['partners.view', 'partners.manage'], products: ['p1'] },
  { key: 'none', permissions: ['products.view'], products: 'all' as const },
];

const dev = (c: TestContext, token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  c.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

async function session(c: TestContext, email: string): Promise<string> {
  // The operator path (`patchbay token create --recipient`) and the e-mailed link are both tested; this is the operator one.
  const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
  return (await new Recipients(c.database.db).operatorSession(email)).token;
}

const portal = (c: TestContext, token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  c.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

const affiliate = (ws: SeededWorkspace, email: string, extra: object = {}) => ({
  kind: 'affiliate',
  recipient_email: email,
  name: 'Spring affiliates',
  rate_bps: 1500,
  product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 2000 }],
  attribution_window_days: 30,
  include_reseller_sales: false,
  send_email: false,
  ...extra,
});

const tokenOf = (link: string) => /#token=([A-Za-z0-9_-]{43})$/.exec(link)![1]!;

async function proposeAndAccept(c: TestContext, ws: SeededWorkspace, email = `p-${unique()}@partner.test`) {
  const created = await dev(c, ws.owner, 'POST', PROGRAMS, affiliate(ws, email));
  expect(created.statusCode, created.body).toBe(201);
  const token = tokenOf(created.json().invitation.invitation_link);
  const recipient = await session(c, email);
  const accepted = await portal(c, recipient, 'POST', '/api/partner-portal/programs/invitations/accept', {
    token,
    accept_preview_terms: true,
    preview_terms_version: 1,
    payout_policy_version: created.json().agreement.payout_policy_version,
  });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { id: created.json().agreement.id as number, email, recipient, token };
}

describe('agreements (developer side)', () => {
  it('creates an agreement with its first terms and an invitation, and lists it', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `Ann-${unique()}@Partner.test`;
    const res = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email));
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.proposal).toEqual({ terms_version: 1 });
    expect(body.agreement).toMatchObject({
      kind: 'affiliate',
      recipient_email: email.toLowerCase(),
      status: 'pending',
      terms_version: null,
      proposed_terms_version: 1,
      policy_version: POLICY,
      proposed_terms: { terms_version: 1, rate_bps: 1500, product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 2000 }], attribution_window_days: 30 },
      invitation: { status: 'pending', terms_version: 1, email_queued: false },
      consent: { developer: null, recipient: null, live_terms_consented: false },
    });
    expect(body.invitation).toMatchObject({ status: 'pending', delivery: 'not_sent', invitation_link: expect.stringMatching(/\/invitations#token=/) });
    const list = await dev(ctx(), ws.tokens.viewer ?? ws.owner, 'GET', PROGRAMS);
    expect(list.json().programs.map((p: { id: number }) => p.id)).toEqual([body.agreement.id]);
    // An agreement makes nobody a team member or a reseller.
    const members = await ctx().database.db.selectFrom('memberships').where('workspace_id', '=', ws.workspaceId).select('account_id').execute();
    expect(members).toHaveLength(1);
    expect(await ctx().database.db.selectFrom('reseller_relationships').where('workspace_id', '=', ws.workspaceId).select('id').execute()).toEqual([]);
  });

  it('queues the invitation e-mail only when send_email is true, with the token only inside the invitation link', async () => {
    const ws = await seedWorkspace(ctx());
    const quiet = `quiet-${unique()}@partner.test`;
    const loud = `loud-${unique()}@partner.test`;
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, quiet))).statusCode).toBe(201);
    const sent = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, loud, { send_email: true }));
    expect(sent.json().invitation).toEqual(expect.objectContaining({ delivery: 'queued', email_queued: true }));
    expect(sent.json().invitation.invitation_link).toBeUndefined();
    await ctx().app.jobs.idle();
    expect(transport.sent.filter((m) => m.to === quiet)).toEqual([]);
    const [mail] = transport.sent.filter((m) => m.to === loud);
    const token = /#token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
    expect(mail!.subject).not.toContain(token);
    expect(JSON.stringify(sent.json())).not.toContain(token);
    // The token works on the invitation route and is stored only as a hash.
    expect((await ctx().app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${token}` })).statusCode).toBe(200);
    const stored = await ctx().database.db.selectFrom('partner_invitations').where('workspace_id', '=', ws.workspaceId).select('token_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('refuses bad terms with 400, foreign products with 404, inactive products and over-capacity collaborators with 409', async () => {
    const ws = await seedWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const email = `c-${unique()}@partner.test`;
    for (const bad of [
      { rate_bps: 10_001 },
      { rate_bps: -1 },
      { rate_bps: 1.5 },
      { attribution_window_days: 0 },
      { attribution_window_days: 366 },
      { effective_from: '2020-01-01T00:00:00Z' },
      { kind: 'reseller' },
      { recipient_email: 'not-an-email' },
      { product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 100 }, { product_id: ws.ids.products.p1, rate_bps: 200 }] },
      { kind: 'collaborator', product_rates: [] },
    ]) {
      const res = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email, bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    const foreign = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email, { product_rates: [{ product_id: other.ids.products.p1, rate_bps: 100 }] }));
    expect(foreign.statusCode).toBe(404);
    await dev(ctx(), ws.owner, 'PATCH', `/api/developer/products/${ws.ids.products.p2}`, { status: 'archived' });
    const inactive = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email, { product_rates: [{ product_id: ws.ids.products.p2, rate_bps: 100 }] }));
    expect(inactive.statusCode).toBe(409);
    expect(inactive.json().code).toBe('PRODUCT_NOT_ELIGIBLE');

    const collaborator = (rate: number) => affiliate(ws, `co-${unique()}@partner.test`, { kind: 'collaborator', product_rates: [{ product_id: ws.ids.products.p3, rate_bps: rate }] });
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, collaborator(6000))).statusCode).toBe(201);
    const full = await dev(ctx(), ws.owner, 'POST', PROGRAMS, collaborator(4001));
    expect(full.statusCode).toBe(409);
    expect(full.json()).toMatchObject({ code: 'COLLABORATOR_CAPACITY_EXCEEDED', product_id: ws.ids.products.p3, available_bps: 4000 });
    expect(full.json().detail).toContain(`product ${ws.ids.products.p3}`);
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, collaborator(4000))).statusCode).toBe(201);
  });

  it('counts a collaborator at the higher of its accepted and proposed rates, and frees the room when it ends', async () => {
    const ws = await seedWorkspace(ctx(), {
      programs: [{ key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `co-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 3000 }], status: 'active' }],
    });
    const id = ws.ids.programs.co!;
    // A revision proposes more; until it is accepted, both rates can come into force.
    expect((await dev(ctx(), ws.owner, 'PATCH', `${PROGRAMS}/${id}`, { product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 7000 }], send_email: false })).statusCode).toBe(200);
    const other = affiliate(ws, `x-${unique()}@partner.test`, { kind: 'collaborator', product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 3001 }] });
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, other)).json().code).toBe('COLLABORATOR_CAPACITY_EXCEEDED');
    expect((await dev(ctx(), ws.owner, 'POST', `${PROGRAMS}/${id}/status`, { status: 'ended' })).statusCode).toBe(200);
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, other)).statusCode).toBe(201);
  });

  it('keeps the accepted terms in force through a revision, every version readable, until the recipient accepts it', async () => {
    const ws = await seedWorkspace(ctx());
    const { id, recipient, token: firstToken } = await proposeAndAccept(ctx(), ws);
    const revised = await dev(ctx(), ws.owner, 'PATCH', `${PROGRAMS}/${id}`, { rate_bps: 2500, send_email: false });
    expect(revised.statusCode, revised.body).toBe(200);
    expect(revised.json().agreement).toMatchObject({ status: 'accepted', terms_version: 1, proposed_terms_version: 2, revision_pending: true, accepted_terms: { rate_bps: 1500 }, proposed_terms: { rate_bps: 2500 } });
    expect(revised.json().agreement.terms_history.map((t: { terms_version: number }) => t.terms_version)).toEqual([1, 2]);
    // The old invitation is spent; the revision's invitation, accepted with the revision's versions, brings it into force.
    const token = tokenOf(revised.json().invitation.invitation_link);
    const stale = await portal(ctx(), recipient, 'POST', '/api/partner-portal/programs/invitations/accept', { token, accept_preview_terms: true, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1' });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ code: 'TERMS_VERSION_MISMATCH', preview_terms_version: 2 });
    const ok = await portal(ctx(), recipient, 'POST', '/api/partner-portal/programs/invitations/accept', { token, accept_preview_terms: true, preview_terms_version: 2, payout_policy_version: 'patchbay-payouts-v1' });
    expect(ok.statusCode, ok.body).toBe(200);
    const [row] = (await dev(ctx(), ws.owner, 'GET', PROGRAMS)).json().programs;
    expect(row).toMatchObject({ terms_version: 2, revision_pending: false, accepted_terms: { rate_bps: 2500 } });
    expect(firstToken).not.toBe(token);
  });

  it('moves through the status table and refuses what it forbids; every change is audited with its actor', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const created = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, `s-${unique()}@partner.test`));
    const pendingId = created.json().agreement.id;
    const status = (id: number, s: string, token = ws.owner) => dev(ctx(), token, 'POST', `${PROGRAMS}/${id}/status`, { status: s });
    expect((await status(pendingId, 'active')).json().code).toBe('AGREEMENT_NOT_ACCEPTED');

    const { id } = await proposeAndAccept(ctx(), ws);
    expect((await status(id, 'paused')).json().code).toBe('INVALID_AGREEMENT_TRANSITION');
    expect((await status(id, 'active', ws.tokens.manager!)).json().status).toBe('active');
    expect((await status(id, 'active')).statusCode).toBe(200);
    expect((await status(id, 'paused')).json().status).toBe('paused');
    expect((await status(id, 'active')).json().status).toBe('active');
    expect((await status(id, 'ended')).json().status).toBe('ended');
    for (const s of ['active', 'paused']) {
      const refused = await status(id, s);
      expect(refused.statusCode).toBe(409);
      expect(refused.json().code).toBe('AGREEMENT_ENDED');
    }
    expect((await dev(ctx(), ws.owner, 'PATCH', `${PROGRAMS}/${id}`, { rate_bps: 1 })).json().code).toBe('AGREEMENT_ENDED');
    expect((await dev(ctx(), ws.owner, 'POST', `${PROGRAMS}/${id}/invite`, {})).json().code).toBe('AGREEMENT_ENDED');
    const events = await ctx().database.db.selectFrom('partner_agreement_events').where('agreement_id', '=', id).where('action', '=', 'status').select(['from_status', 'to_status', 'actor_id']).orderBy('id').execute();
    expect(events.map((e) => `${e.from_status}>${e.to_status}`)).toEqual(['accepted>active', 'active>paused', 'paused>active', 'active>ended']);
    expect(events[0]!.actor_id).toBe(ws.ids.accounts.manager);
  });

  it('replaces invitations (the old link stops working) within the cooldown and the daily limit', async () => {
    const limited = await buildTestApp({ partners: { inviteResendCooldownSeconds: 30, invitesPerWorkspacePerDay: 3 } });
    try {
      const ws = await seedWorkspace(limited);
      const created = await dev(limited, ws.owner, 'POST', PROGRAMS, affiliate(ws, `r-${unique()}@partner.test`));
      const id = created.json().agreement.id;
      const cooling = await dev(limited, ws.owner, 'POST', `${PROGRAMS}/${id}/invite`, { send_email: false });
      expect(cooling.statusCode).toBe(429);
      expect(cooling.json().code).toBe('INVITE_COOLDOWN');
      expect(Number(cooling.headers['retry-after'])).toBeGreaterThan(0);
      await limited.database.db.updateTable('partner_invitations').set({ created_at: new Date(Date.now() - 60_000) }).where('agreement_id', '=', id).execute();
      const replaced = await dev(limited, ws.owner, 'POST', `${PROGRAMS}/${id}/invite`, { send_email: false });
      expect(replaced.statusCode, replaced.body).toBe(200);
      const oldToken = tokenOf(created.json().invitation.invitation_link);
      expect((await limited.app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${oldToken}` })).statusCode).toBe(404);
      expect((await limited.app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${tokenOf(replaced.json().invitation.invitation_link)}` })).statusCode).toBe(200);
      expect((await dev(limited, ws.owner, 'POST', PROGRAMS, affiliate(ws, `r2-${unique()}@partner.test`))).statusCode).toBe(201);
      const over = await dev(limited, ws.owner, 'POST', PROGRAMS, affiliate(ws, `r3-${unique()}@partner.test`));
      expect(over.statusCode).toBe(429);
      expect(over.json().code).toBe('INVITE_LIMIT_REACHED');
      expect(await limited.database.db.selectFrom('partner_agreements').where('workspace_id', '=', ws.workspaceId).select('id').execute()).toHaveLength(2);
    } finally {
      await limited.app.close();
      await limited.database.close();
    }
  });

  it('needs partners.view and all-products access to read, partners.manage to change; 404 across workspaces', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const other = await seedWorkspace(ctx());
    const { id } = await proposeAndAccept(ctx(), other);
    expect((await ctx().app.inject({ method: 'GET', url: PROGRAMS })).statusCode).toBe(401);
    expect((await dev(ctx(), ws.tokens.none!, 'GET', PROGRAMS)).statusCode).toBe(403);
    expect((await dev(ctx(), ws.tokens.scoped!, 'GET', PROGRAMS)).statusCode).toBe(403);
    expect((await dev(ctx(), ws.tokens.viewer!, 'GET', PROGRAMS)).statusCode).toBe(200);
    expect((await dev(ctx(), ws.tokens.viewer!, 'POST', PROGRAMS, affiliate(ws, 'v@partner.test'))).statusCode).toBe(403);
    expect((await dev(ctx(), ws.tokens.scoped!, 'POST', PROGRAMS, affiliate(ws, 'v@partner.test'))).statusCode).toBe(403);
    for (const [method, path, body] of [
      ['PATCH', `${PROGRAMS}/${id}`, { rate_bps: 1 }],
      ['POST', `${PROGRAMS}/${id}/status`, { status: 'paused' }],
      ['POST', `${PROGRAMS}/${id}/invite`, {}],
      ['POST', `${PROGRAMS}/${id}/live-consent`, { accept: true, terms_version: 1, policy_version: POLICY }],
    ] as const) {
      expect((await dev(ctx(), ws.owner, method, path, body)).statusCode, path).toBe(404);
    }
    // A recipient session is no developer credential.
    const recipient = await session(ctx(), `someone-${unique()}@partner.test`);
    expect((await dev(ctx(), recipient, 'GET', PROGRAMS)).statusCode).toBe(401);
  });

  it('answers 404 on every partner route of a workspace whose partner features are off', async () => {
    const ws = await seedWorkspace(ctx(), { partnerProgramsEnabled: false });
    expect((await dev(ctx(), ws.owner, 'GET', PROGRAMS)).statusCode).toBe(404);
    expect((await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, `off-${unique()}@partner.test`))).statusCode).toBe(404);
  });
});

describe('invitations (recipient side)', () => {
  it('shows the invitation and its terms without a session, privately; refuses another signed-in person', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `inv-${unique()}@partner.test`;
    const created = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email));
    const token = tokenOf(created.json().invitation.invitation_link);
    const shown = await ctx().app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${token}` });
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(shown.headers['referrer-policy']).toBe('no-referrer');
    expect(shown.json()).toMatchObject({
      invitation: { status: 'pending', email, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1', policy_version: POLICY },
      agreement: { id: created.json().agreement.id, kind: 'affiliate', name: 'Spring affiliates' },
      terms: { terms_version: 1, rate_bps: 1500 },
    });
    for (const bad of ['A'.repeat(43), 'short', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`]) {
      expect((await ctx().app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${bad}` })).statusCode).toBe(404);
    }
    const stranger = await session(ctx(), `stranger-${unique()}@partner.test`);
    const accept = { token, accept_preview_terms: true, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1' };
    const refused = await portal(ctx(), stranger, 'POST', '/api/partner-portal/programs/invitations/accept', accept);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('RECIPIENT_MISMATCH');
    expect((await portal(ctx(), stranger, 'POST', '/api/partner-portal/programs/invitations/accept', { ...accept, accept_preview_terms: false })).statusCode).toBe(400);
    const policy = await portal(ctx(), await session(ctx(), email), 'POST', '/api/partner-portal/programs/invitations/accept', { ...accept, payout_policy_version: 'old' });
    expect(policy.json()).toMatchObject({ code: 'TERMS_VERSION_MISMATCH', payout_policy_version: 'patchbay-payouts-v1' });
    // Expired invitations answer like unknown ones.
    await ctx().database.db.updateTable('partner_invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('agreement_id', '=', created.json().agreement.id).execute();
    expect((await ctx().app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${token}` })).statusCode).toBe(404);
    expect((await portal(ctx(), await session(ctx(), email), 'POST', '/api/partner-portal/programs/invitations/accept', accept)).statusCode).toBe(404);
  });
});

describe('live consent', () => {
  it('needs the workspace owner and the recipient, for the accepted terms under the current policy; records are append-only', async () => {
    const ws = await seedWorkspace(ctx(), { members: MEMBERS });
    const { id, recipient } = await proposeAndAccept(ctx(), ws);
    const url = `${PROGRAMS}/${id}/live-consent`;
    const consent = { accept: true, terms_version: 1, policy_version: POLICY };
    for (const teammate of [ws.tokens.manager!, ws.tokens.star!]) {
      const refused = await dev(ctx(), teammate, 'POST', url, consent);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().code).toBe('OWNER_CONSENT_REQUIRED');
    }
    const wrongPolicy = await dev(ctx(), ws.owner, 'POST', url, { ...consent, policy_version: 'managed-live-v0' });
    expect(wrongPolicy.statusCode).toBe(409);
    expect(wrongPolicy.json()).toMatchObject({ code: 'POLICY_VERSION_MISMATCH', policy_version: POLICY });
    const wrongTerms = await dev(ctx(), ws.owner, 'POST', url, { ...consent, terms_version: 2 });
    expect(wrongTerms.json()).toMatchObject({ code: 'TERMS_VERSION_MISMATCH', terms_version: 1 });

    const developer = await dev(ctx(), ws.owner, 'POST', url, consent);
    expect(developer.statusCode, developer.body).toBe(200);
    expect(developer.json()).toMatchObject({ accepted_party: 'developer', terms_version: 1, policy_version: POLICY, live_terms_consented: false });
    const mine = await portal(ctx(), recipient, 'POST', `/api/partner-portal/programs/${id}/live-consent`, consent);
    expect(mine.json()).toMatchObject({ accepted_party: 'recipient', live_terms_consented: true });
    const [row] = (await dev(ctx(), ws.owner, 'GET', PROGRAMS)).json().programs;
    expect(row.consent).toMatchObject({ live_terms_consented: true, developer: { terms_version: 1 }, recipient: { terms_version: 1 } });

    // A newly accepted revision needs new consents.
    const revised = await dev(ctx(), ws.owner, 'PATCH', `${PROGRAMS}/${id}`, { rate_bps: 900, send_email: false });
    await portal(ctx(), recipient, 'POST', '/api/partner-portal/programs/invitations/accept', {
      token: tokenOf(revised.json().invitation.invitation_link),
      accept_preview_terms: true,
      preview_terms_version: 2,
      payout_policy_version: 'patchbay-payouts-v1',
    });
    const [after] = (await dev(ctx(), ws.owner, 'GET', PROGRAMS)).json().programs;
    expect(after.consent).toMatchObject({ live_terms_consented: false, developer: null, recipient: null });

    await expect(ctx().database.db.deleteFrom('partner_consents').where('agreement_id', '=', id).execute()).rejects.toThrow(/append-only/);
  });
});

describe.runIf(onPostgres)('concurrent collaborator proposals (PostgreSQL)', () => {
  it('lets only one of two racing proposals take the last room on a product', async () => {
    const ws = await seedWorkspace(ctx());
    const propose = () =>
      dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, `race-co-${unique()}@partner.test`, { kind: 'collaborator', product_rates: [{ product_id: ws.ids.products.p1, rate_bps: 6000 }] }));
    const answers = await Promise.all([propose(), propose(), propose()]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409]);
    expect(answers.filter((a) => a.statusCode === 409).every((a) => a.json().code === 'COLLABORATOR_CAPACITY_EXCEEDED')).toBe(true);
  });
});

describe.runIf(onPostgres)('concurrent acceptance (PostgreSQL)', () => {
  it('makes one acceptance of ten racing accepts', async () => {
    const ws = await seedWorkspace(ctx());
    const email = `race-${unique()}@partner.test`;
    const created = await dev(ctx(), ws.owner, 'POST', PROGRAMS, affiliate(ws, email));
    const token = tokenOf(created.json().invitation.invitation_link);
    const recipient = await session(ctx(), email);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        portal(ctx(), recipient, 'POST', '/api/partner-portal/programs/invitations/accept', { token, accept_preview_terms: true, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1' }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    expect(answers.filter((a) => a.json().already_accepted === false)).toHaveLength(1);
    const events = await ctx().database.db.selectFrom('partner_agreement_events').where('agreement_id', '=', created.json().agreement.id).where('action', '=', 'accepted').select('id').execute();
    expect(events).toHaveLength(1);
  });
});
