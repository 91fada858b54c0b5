import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { currentDestinations } from '../../src/modules/payouts/destinations.repo.js';
import { ProviderConfirmJob } from '../../src/modules/payouts/payouts.jobs.js';
import { listJobs } from '../../src/platform/jobs/jobs.testing.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });

const CARD = '/api/partner-portal/programs/payouts/card-provider';
const REFRESH = '/api/partner-portal/programs/payouts/card-provider/refresh';
const WALLET = '/api/partner-portal/programs/payouts/wallet-provider';
const HOUR = 3_600_000;

/** A recipient with an accepted (active) agreement and a signed-in session. */
async function partner(options: { email?: string; kind?: 'affiliate' | 'collaborator'; status?: 'pending' | 'active' | 'ended' } = {}) {
  const email = options.email ?? `pay-${unique()}@partner.test`;
  await seedWorkspace(ctx(), { programs: [{ key: 'p', kind: options.kind ?? 'affiliate', name: 'P', recipientEmail: email, rateBps: 100, status: options.status ?? 'active' }] });
  return { email, token: await sessionFor(email) };
}

async function sessionFor(email: string): Promise<string> {
  const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
  return (await new Recipients(ctx().database.db).operatorSession(email)).token;
}

const post = (token: string | null, url: string, payload: object) =>
  ctx().app.inject({ method: 'POST', url, headers: token ? bearer(token) : {}, payload });

const pathOf = (url: string) => new URL(url).pathname;
const visit = (url: string) => ctx().app.inject({ method: 'GET', url: pathOf(url) });
const complete = (url: string) =>
  ctx().app.inject({ method: 'POST', url: pathOf(url), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });

async function rowsOf(email: string) {
  return ctx()
    .database.db.selectFrom('payout_destinations as d')
    .innerJoin('recipients as r', 'r.id', 'd.recipient_id')
    .where('r.email', '=', email)
    .select(['d.id', 'd.provider', 'd.status', 'd.account_ref', 'd.hold_until', 'd.available_at', 'd.livemode', 'd.recipient_id'])
    .orderBy('d.id')
    .execute();
}

async function onboardCard(token: string) {
  const started = await post(token, CARD, { livemode: false });
  expect(started.statusCode, started.body).toBe(200);
  expect((await complete(started.json().url)).statusCode).toBe(200);
  const refreshed = await post(token, REFRESH, { livemode: false });
  expect(refreshed.json().ready).toBe(true);
  return refreshed.json();
}

describe('card provider (sandbox)', () => {
  it('walks hosted onboarding: a link, the page completes it, refresh and a second start say ready', async () => {
    const { email, token } = await partner();
    const started = await post(token, CARD, { livemode: false, program: 'affiliate' });
    expect(started.statusCode, started.body).toBe(200);
    expect(started.json()).toEqual({
      provider: 'card',
      livemode: false,
      ready: false,
      url: expect.stringMatching(/^http:\/\/patchbay\.test\/api\/payouts\/sandbox\/onboarding\/sbo_[A-Za-z0-9_-]{43}$/),
      status: 'onboarding',
      display: 'sandbox card •••• 4242',
      hold_until: null,
      available_at: null,
    });
    expect(started.headers['cache-control']).toBe('no-store');
    const url: string = started.json().url;

    // Not ready yet: refresh says so.
    const pending = await post(token, REFRESH, { livemode: false });
    expect(pending.json()).toMatchObject({ ready: false, status: 'onboarding', url: expect.stringContaining('/api/payouts/sandbox/onboarding/') });
    // A refresh issues a new link; the earlier one stops working.
    expect((await visit(url)).statusCode).toBe(404);
    const link: string = pending.json().url;

    const page = await visit(link);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<form method="post">');
    expect(page.headers['content-security-policy']).toContain("form-action 'self'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('sandbox card •••• 4242');

    const done = await complete(link);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('Onboarding complete');
    // Single use.
    const again = await complete(link);
    expect(again.statusCode).toBe(404);
    expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await visit(link)).statusCode).toBe(404);

    const ready = await post(token, REFRESH, { livemode: false });
    expect(ready.json()).toMatchObject({ provider: 'card', ready: true, url: null, status: 'ready', hold_until: null, available_at: expect.any(String) });
    const second = await post(token, CARD, { livemode: false });
    expect(second.json()).toMatchObject({ ready: true, url: null, status: 'ready', display: 'sandbox card •••• 4242' });

    const rows = await rowsOf(email);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ provider: 'card', status: 'ready', livemode: false, hold_until: null });
    // The provider's account id never leaves the service, and onboarding tokens are kept only hashed.
    expect(JSON.stringify([started.json(), pending.json(), ready.json(), second.json()])).not.toContain(rows[0]!.account_ref);
    const stored = await ctx().database.db.selectFrom('payout_sandbox_accounts').where('account_ref', '=', rows[0]!.account_ref).selectAll().executeTakeFirstOrThrow();
    expect(stored.onboarded_at).not.toBeNull();
    expect(stored.onboarding_token_hash).toBeNull();
    const [current] = await currentDestinations(ctx().database.db, [rows[0]!.recipient_id], false);
    expect(current).toMatchObject({ provider: 'card', status: 'ready', program: 'affiliate' });
  });

  it('answers 404 to tampered, unknown and expired onboarding tokens', async () => {
    const { email, token } = await partner();
    const url: string = (await post(token, CARD, { livemode: false })).json().url;
    const path = pathOf(url);
    const tampered = path.slice(0, -1) + (path.endsWith('A') ? 'B' : 'A');
    for (const bad of [tampered, `/api/payouts/sandbox/onboarding/sbo_${'A'.repeat(43)}`, '/api/payouts/sandbox/onboarding/not-a-token']) {
      const page = await ctx().app.inject({ method: 'GET', url: bad });
      expect(page.statusCode, bad).toBe(404);
      expect(page.json().code).toBe('NOT_FOUND');
      expect((await ctx().app.inject({ method: 'POST', url: bad })).statusCode).toBe(404);
    }
    const [row] = await rowsOf(email);
    await ctx().database.db.updateTable('payout_sandbox_accounts').set({ onboarding_expires_at: new Date(Date.now() - 1000) }).where('account_ref', '=', row!.account_ref).execute();
    expect((await visit(url)).statusCode).toBe(404);
    expect((await complete(url)).statusCode).toBe(404);
    expect((await rowsOf(email))[0]!.status).toBe('onboarding');
    // A JSON post (no form) completes a fresh link too.
    const fresh: string = (await post(token, CARD, { livemode: false })).json().url;
    expect((await ctx().app.inject({ method: 'POST', url: pathOf(fresh) })).statusCode).toBe(200);
    expect((await rowsOf(email))[0]!.status).toBe('ready');
  });

  it('refresh without a card destination is a 404', async () => {
    const { token } = await partner();
    const res = await post(token, REFRESH, { livemode: false });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
  });
});

describe('wallet provider (sandbox)', () => {
  it('pays to the verified e-mail, ready with an availability time, and registering it again changes nothing', async () => {
    const { email, token } = await partner({ email: `ann-${unique()}@partner.test` });
    const res = await post(token, WALLET, { livemode: false, confirm_verified_email: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      provider: 'wallet',
      livemode: false,
      ready: true,
      destination: 'a•••@partner.test',
      status: 'ready',
      hold_until: null,
      available_at: expect.any(String),
    });
    expect(Math.abs(Date.parse(res.json().available_at) - Date.now())).toBeLessThan(60_000);
    const again = await post(token, WALLET, { livemode: false, confirm_verified_email: true });
    expect(again.json()).toEqual(res.json());
    expect(await rowsOf(email)).toHaveLength(1);
    await ctx().app.jobs.idle();
    expect(transport.sent.filter((m) => m.to === email)).toHaveLength(0);
  });

  it('refuses an unverified address with 403 EMAIL_NOT_VERIFIED', async () => {
    const { email, token } = await partner();
    await ctx().database.db.updateTable('recipients').set({ email_verified_at: null }).where('email', '=', email).execute();
    const res = await post(token, WALLET, { livemode: false, confirm_verified_email: true });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('EMAIL_NOT_VERIFIED');
    expect(await rowsOf(email)).toHaveLength(0);
  });

  it('accepts no address of its own: an extra `email`, or confirm_verified_email other than true, is a 400', async () => {
    const { email, token } = await partner();
    for (const body of [
      { livemode: false, confirm_verified_email: true, email: 'thief@elsewhere.test' },
      { livemode: false, confirm_verified_email: false },
      { livemode: false },
      { livemode: 'false', confirm_verified_email: true },
    ]) {
      const res = await post(token, WALLET, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    expect(await rowsOf(email)).toHaveLength(0);
  });
});

describe('destination changes', () => {
  it('holds a changed destination for 72 hours, e-mails the recipient, and makes available_at wait for the hold', async () => {
    const { email, token } = await partner();
    const first = (await post(token, WALLET, { livemode: false, confirm_verified_email: true })).json();
    expect(first.hold_until).toBeNull();

    const before = Date.now();
    const card = await post(token, CARD, { livemode: false });
    expect(card.statusCode, card.body).toBe(200);
    const holdUntil = Date.parse(card.json().hold_until);
    expect(holdUntil - before).toBeGreaterThanOrEqual(72 * HOUR - 1000);
    expect(holdUntil - Date.now()).toBeLessThanOrEqual(72 * HOUR + 1000);
    expect(card.json().available_at).toBeNull();

    await ctx().app.jobs.idle();
    const notices = transport.sent.filter((m) => m.to === email);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.subject).toMatch(/payout destination changed/i);
    expect(notices[0]!.text).toContain('sandbox card •••• 4242');
    expect(notices[0]!.text).toContain(card.json().hold_until);

    expect((await complete(card.json().url)).statusCode).toBe(200);
    const ready = (await post(token, REFRESH, { livemode: false })).json();
    expect(ready).toMatchObject({ ready: true, hold_until: card.json().hold_until, available_at: card.json().hold_until });

    const rows = await rowsOf(email);
    expect(rows.map((r) => [r.provider, r.status])).toEqual([
      ['wallet', 'replaced'],
      ['card', 'ready'],
    ]);
    const current = await currentDestinations(ctx().database.db, [rows[0]!.recipient_id], false);
    expect(current.map((d) => d.provider)).toEqual(['card']);
    const events = await ctx().database.db.selectFrom('payout_destination_events').where('recipient_id', '=', rows[0]!.recipient_id).select('action').orderBy('id').execute();
    expect(events.map((e) => e.action)).toEqual(['created', 'replaced', 'created', 'ready']);

    // Back to the wallet: a change again.
    const back = (await post(token, WALLET, { livemode: false, confirm_verified_email: true })).json();
    expect(Date.parse(back.hold_until)).toBeGreaterThan(Date.now() + 71 * HOUR);
    expect(back.available_at).toBe(back.hold_until);
  });

  it('does not hold the first destination, nor a restarted onboarding that never became ready', async () => {
    const { email, token } = await partner();
    const card = (await post(token, CARD, { livemode: false })).json();
    expect(card.hold_until).toBeNull();
    const wallet = (await post(token, WALLET, { livemode: false, confirm_verified_email: true })).json();
    expect(wallet).toMatchObject({ ready: true, hold_until: null });
    await ctx().app.jobs.idle();
    expect(transport.sent.filter((m) => m.to === email)).toHaveLength(0);
    // The replaced card's link onboards its sandbox account but makes nothing current.
    const done = await complete(card.url);
    expect(done.statusCode).toBe(200);
    expect((await rowsOf(email)).map((r) => [r.provider, r.status])).toEqual([
      ['card', 'replaced'],
      ['wallet', 'ready'],
    ]);
  });

  it('keeps one current destination when two first registrations race', async () => {
    const { email, token } = await partner();
    const answers = await Promise.all([0, 1, 2].map(() => post(token, WALLET, { livemode: false, confirm_verified_email: true })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    const rows = await rowsOf(email);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hold_until).toBeNull();
  });
});

describe('access', () => {
  it('answers 401 without a session and to a developer JWT', async () => {
    const ws = await seedWorkspace(ctx());
    for (const [url, body] of [
      [CARD, { livemode: false }],
      [REFRESH, { livemode: false }],
      [WALLET, { livemode: false, confirm_verified_email: true }],
    ] as const) {
      expect((await post(null, url, body)).statusCode).toBe(401);
      const dev = await post(ws.owner, url, body);
      expect(dev.statusCode).toBe(401);
      expect(dev.json().code).toBe('UNAUTHENTICATED');
    }
  });

  it('live mode without a configured provider is 503 PAYOUT_PROVIDER_NOT_CONFIGURED', async () => {
    const { email, token } = await partner();
    for (const [url, body] of [
      [CARD, { livemode: true }],
      [REFRESH, { livemode: true }],
      [WALLET, { livemode: true, confirm_verified_email: true }],
    ] as const) {
      const res = await post(token, url, body);
      expect(res.statusCode, url).toBe(503);
      expect(res.json().code).toBe('PAYOUT_PROVIDER_NOT_CONFIGURED');
    }
    expect(await rowsOf(email)).toHaveLength(0);
    expect(ctx().app.payoutProviders.get('card', true)).toBeNull();
    expect(ctx().app.payoutProviders.get('wallet', false)?.livemode).toBe(false);
  });

  it('needs an accepted agreement (of the named program kind): 403 PAYOUT_AGREEMENT_REQUIRED', async () => {
    const stranger = await sessionFor(`nobody-${unique()}@partner.test`);
    const invited = await partner({ status: 'pending' });
    for (const token of [stranger, invited.token]) {
      const res = await post(token, WALLET, { livemode: false, confirm_verified_email: true });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('PAYOUT_AGREEMENT_REQUIRED');
    }
    const affiliate = await partner();
    const collab = await post(affiliate.token, CARD, { livemode: false, program: 'collaborator' });
    expect(collab.statusCode).toBe(403);
    expect(collab.json().code).toBe('PAYOUT_AGREEMENT_REQUIRED');
    expect((await post(affiliate.token, CARD, { livemode: false, program: 'reseller' })).statusCode).toBe(400);
    // An ended agreement still has earnings to pay out.
    const ended = await partner({ status: 'ended' });
    expect((await post(ended.token, WALLET, { livemode: false, confirm_verified_email: true })).statusCode).toBe(200);
  });

  it('limits onboarding starts to 10 per recipient and hour', async () => {
    const { token } = await partner();
    for (let i = 0; i < 10; i++) expect((await post(token, WALLET, { livemode: false, confirm_verified_email: true })).statusCode).toBe(200);
    const limited = await post(token, CARD, { livemode: false });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // Another recipient is not affected.
    expect((await post((await partner()).token, CARD, { livemode: false })).statusCode).toBe(200);
  });
});

describe('sandbox transfers', () => {
  const jobsOf = (reference: string) =>
    listJobs(ctx().database.db, { job: ProviderConfirmJob }).then((rows) =>
      rows.filter((r) => (r.payload as { providerReference: string }).providerReference === reference).map(({ payload, state }) => ({ payload, state })),
    );

  it('submitTransfer records the payout on the sandbox’s side and queues its confirmation once per idempotency key', async () => {
    const provider = ctx().app.payoutProviders.get('card', false)!;
    const key = `transfer-${unique()}`;
    const input = { transferId: 4242, accountRef: 'sbx_acct_test', amount: 1999n, currency: 'usd', idempotencyKey: key };
    const first = await provider.submitTransfer(input);
    expect(first).toEqual({ providerReference: expect.stringMatching(/^sbx_tr_[A-Za-z0-9_-]{24}$/), status: 'pending' });
    // The same key again: the first answer, nothing paid or queued a second time.
    expect(await provider.submitTransfer(input)).toEqual(first);
    const jobs = await jobsOf(first.providerReference);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.payload).toEqual({ transferId: 4242, providerReference: first.providerReference, outcome: 'paid' });
    const payouts = await ctx().database.db.selectFrom('payout_sandbox_transfers').selectAll().where('idempotency_key', '=', key).execute();
    expect(payouts).toHaveLength(1);
    expect(await provider.findTransfer(key)).toEqual({ providerReference: first.providerReference, status: 'paid' });
    expect(await provider.findTransfer(`transfer-${unique()}`)).toBeNull();
  });

  it('refuses an idempotency key reused with another amount, currency or account, paying nothing more', async () => {
    const provider = ctx().app.payoutProviders.get('wallet', false)!;
    const key = `transfer-${unique()}`;
    const input = { transferId: 9, accountRef: 'sbx_wallet_test', amount: 500n, currency: 'eur', idempotencyKey: key };
    await provider.submitTransfer(input);
    for (const changed of [{ amount: 501n }, { currency: 'usd' }, { accountRef: 'sbx_wallet_other' }]) {
      await expect(provider.submitTransfer({ ...input, ...changed })).rejects.toThrow(/another amount, currency or account/);
    }
    const rows = await ctx().database.db.selectFrom('payout_sandbox_transfers').select([sql<string>`amount::text`.as('amount'), 'currency', 'account_ref']).where('idempotency_key', '=', key).execute();
    expect(rows).toEqual([{ amount: '500', currency: 'eur', account_ref: 'sbx_wallet_test' }]);
  });

  it('answers "+timeout" destinations with an error after paying, and loses "+lost" submissions', async () => {
    const provider = ctx().app.payoutProviders.get('wallet', false)!;
    const timeout = `transfer-${unique()}`;
    await expect(provider.submitTransfer({ transferId: 10, accountRef: 'sbx_wallet_x_timeout', amount: 700n, currency: 'usd', idempotencyKey: timeout })).rejects.toThrow(/no answer in time/);
    expect(await provider.findTransfer(timeout)).toMatchObject({ status: 'paid' });
    const lost = `transfer-${unique()}`;
    await expect(provider.submitTransfer({ transferId: 11, accountRef: 'sbx_wallet_x_lost', amount: 700n, currency: 'usd', idempotencyKey: lost })).rejects.toThrow(/never arrived/);
    expect(await provider.findTransfer(lost)).toBeNull();
  });

  it('fails the transfers of a destination onboarded with a "+fail" address', async () => {
    const { email, token } = await partner({ email: `pat+fail-${unique()}@partner.test`.replace(/\+fail-(\w+)@/, '-$1+fail@') });
    expect(email).toMatch(/\+fail@/);
    const card = (await post(token, CARD, { livemode: false })).json();
    expect(card.display).toBe('sandbox card •••• 0002');
    const [row] = await rowsOf(email);
    expect(row!.account_ref).toMatch(/_fail$/);
    const wallet = ctx().app.payoutProviders.get('wallet', false)!;
    const { providerReference } = await wallet.submitTransfer({ transferId: 7, accountRef: row!.account_ref, amount: 100n, currency: 'eur', idempotencyKey: `t-${unique()}` });
    const [job] = await jobsOf(providerReference);
    expect(job!.payload).toMatchObject({ transferId: 7, outcome: 'failed' });
  });
});
