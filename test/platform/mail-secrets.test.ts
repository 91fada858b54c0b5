import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { findJob, listJobs } from '../../src/platform/jobs/jobs.testing.js';
import { JobRunner } from '../../src/platform/jobs/runner.js';
import { LinkTokens } from '../../src/platform/mail/link-tokens.js';
import { registerMailJobs } from '../../src/platform/mail/mail.jobs.js';
import { defineEmail, EmailJob, emailKinds } from '../../src/platform/mail/mail.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log-capture.js';

// Finding 2 of issue 19: sign-in and invitation tokens sat in plaintext in `jobs.payload` for 7
// days. Queued e-mail now carries references; the token is derived again when the e-mail is sent.

const transport = new MemoryTransport();
const log = captureLog();
// Jobs are started by hand, so the queue can be inspected before anything is sent.
const ctx = useTestApp({ mail: { transport }, jobs: { run: false }, loggerInstance: log.logger, partners: { inviteResendCooldownSeconds: 0 } });

const PROGRAMS = '/api/developer/partners/programs';
const allJobs = async () => JSON.stringify(await listJobs(ctx().database.db));
const emailJobs = () => listJobs(ctx().database.db, { job: EmailJob });
const sendQueued = async () => {
  ctx().app.jobs.start();
  await ctx().app.jobs.idle();
  await ctx().app.jobs.stop();
};

async function inviteAndAskSignIn() {
  const ws = await seedWorkspace(ctx());
  const email = `secret-${ws.suffix}@partner.test`;
  const created = await ctx().app.inject({
    method: 'POST',
    url: PROGRAMS,
    headers: bearer(ws.owner),
    payload: { kind: 'affiliate', recipient_email: email, name: 'Quiet affiliates', rate_bps: 1500, send_email: true },
  });
  expect(created.statusCode, created.body).toBe(201);
  const asked = await ctx().app.inject({ method: 'POST', url: '/api/partner-portal/session/link', payload: { email } });
  expect(asked.statusCode).toBe(202);
  return { ws, email, agreementId: created.json().agreement.id as number };
}

describe('e-mailed tokens at rest', () => {
  it('queues a sign-in and an invitation without their tokens; the sent e-mails carry working links and the payloads are gone', async () => {
    const { email } = await inviteAndAskSignIn();
    const queued = await emailJobs();
    expect(queued.map((j) => j.payload)).toEqual([
      { kind: 'partner_invitation', ref: { invitationId: expect.any(Number) } },
      { kind: 'partner_sign_in', ref: { signInLinkId: expect.any(Number) } },
    ]);
    const jobsWhileQueued = await allJobs();
    const logWhileQueued = log.text();

    await sendQueued();
    const mails = transport.sent.filter((m) => m.to === email);
    const invitationToken = /\/invitations#token=([A-Za-z0-9_-]{43})\n/.exec(mails.find((m) => m.subject.startsWith('You are invited'))!.text)?.[1];
    const signInToken = /\/sign-in#token=(psl_[A-Za-z0-9_-]{43})\n/.exec(mails.find((m) => m.subject.includes('sign-in link'))!.text)?.[1];
    expect(invitationToken).toBeDefined();
    expect(signInToken).toBeDefined();

    for (const token of [invitationToken!, signInToken!]) {
      expect(jobsWhileQueued).not.toContain(token);
      expect(logWhileQueued).not.toContain(token);
    }
    // Nor the link tables: they keep the token's hash and the nonce it is derived from.
    const links = JSON.stringify([
      await ctx().database.db.selectFrom('partner_invitations').where('email', '=', email).selectAll().execute(),
      await ctx().database.db.selectFrom('recipient_sign_in_links').where('email', '=', email).selectAll().execute(),
    ]);
    expect(links).not.toContain(invitationToken!);
    expect(links).not.toContain(signInToken!);

    // The links work (and using them writes nothing of them to the log).
    const shown = await ctx().app.inject({ method: 'GET', url: `/api/partner-portal/programs/invitations/${invitationToken}` });
    expect(shown.statusCode, shown.body).toBe(200);
    const session = await ctx().app.inject({ method: 'POST', url: '/api/partner-portal/session', payload: { token: signInToken } });
    expect(session.statusCode, session.body).toBe(201);

    const sent = await emailJobs();
    expect(sent.map((j) => [j.state, j.payload])).toEqual([
      ['succeeded', {}],
      ['succeeded', {}],
    ]);
    expect(sent.map((j) => j.result)).toEqual([
      { kind: 'partner_invitation', transport: 'memory' },
      { kind: 'partner_sign_in', transport: 'memory' },
    ]);
    const everything = (await allJobs()) + log.text();
    expect(everything).not.toContain(invitationToken!);
    expect(everything).not.toContain(signInToken!);
    expect(log.text()).toContain('/api/partner-portal/programs/invitations/[redacted]');
  });

  it('sends nothing for a link that was replaced, used or has expired by the time its e-mail runs', async () => {
    const { ws, email, agreementId } = await inviteAndAskSignIn();
    // Before sending: a new invitation revokes the first, and the sign-in link expires.
    const resent = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/${agreementId}/invite`, headers: bearer(ws.owner), payload: { send_email: false } });
    expect(resent.statusCode, resent.body).toBe(200);
    await ctx().database.db.updateTable('recipient_sign_in_links').set({ expires_at: new Date(Date.now() - 1000) }).where('email', '=', email).execute();
    await sendQueued();
    expect(transport.sent.filter((m) => m.to === email)).toEqual([]);
    const jobs = await emailJobs();
    expect(jobs.slice(-2).map((j) => [j.state, j.payload, j.result])).toEqual([
      ['succeeded', {}, { kind: 'partner_invitation', skipped: 'the invitation is revoked' }],
      ['succeeded', {}, { kind: 'partner_sign_in', skipped: 'the sign-in link was used or has expired' }],
    ]);
  });

  it('fails an e-mail whose token cannot be derived again (the encryption key changed) without sending anything', async () => {
    const { email } = await inviteAndAskSignIn();
    // An instance that runs with another key.
    const other = new JobRunner(ctx().database.db, { pollIntervalMs: 3_600_000 });
    registerMailJobs(other, transport, { from: 'x@patchbay.test', context: { db: ctx().database.db, tokens: new LinkTokens(Buffer.alloc(32, 9)), urls: { publicBaseUrl: '', portalUrl: '' } } });
    other.start();
    await other.idle();
    await other.stop();
    expect(transport.sent.filter((m) => m.to === email)).toEqual([]);
    const jobs = await emailJobs();
    expect(jobs.slice(-2).map((j) => [j.state, j.payload])).toEqual([
      ['failed', {}],
      ['failed', {}],
    ]);
  });

  it('sends an e-mail queued before the upgrade as it was written, then drops its text', async () => {
    const to = `legacy-${unique()}@partner.test`;
    const id = await inTransaction(ctx().database.db, (tx) =>
      EmailJob.enqueue(tx, { kind: 'partner_sign_in', to, subject: 'Old', text: 'Old text', data: {} } as { to: string; subject: string; text: string }, { workspaceId: null }),
    );
    await sendQueued();
    expect(transport.sent.filter((m) => m.to === to)).toEqual([expect.objectContaining({ id, subject: 'Old', text: 'Old text' })]);
    expect(await findJob(ctx().database.db, id)).toMatchObject({ state: 'succeeded', payload: {} });
  });
});

describe('the e-mail catalogue', () => {
  it('declares every e-mail kind the service sends, each carrying references only', () => {
    expect(emailKinds().map((k) => k.name)).toEqual(
      expect.arrayContaining(['partner_sign_in', 'partner_invitation', 'product_purchase', 'product_grant', 'payout_destination_changed']),
    );
  });

  it.each([
    ['a free string', Type.Object({ link: Type.String() }, { additionalProperties: false }), /payload\.link/],
    ['an open object', Type.Object({ id: Type.Integer() }), /close it/],
    ['a string in an array', Type.Object({ ids: Type.Array(Type.String()) }, { additionalProperties: false }), /payload\.ids\[\]/],
  ])('refuses a payload schema with %s', (_label, payload, message) => {
    expect(() => defineEmail({ name: `test_${unique()}`, payload, render: async () => ({ skip: 'never' }) })).toThrow(message);
  });

  it('accepts ids and closed vocabularies, and refuses a second kind of the same name', () => {
    const name = `test_${unique()}`;
    const payload = Type.Object({ id: Type.Integer(), mode: Type.Union([Type.Literal('live'), Type.Literal('test')]), resend: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
    defineEmail({ name, payload, render: async () => ({ skip: 'never' }) });
    expect(() => defineEmail({ name, payload, render: async () => ({ skip: 'never' }) })).toThrow(/defined twice/);
  });

  it('derives the same token from the same key and nonce, and none from another key', () => {
    const kind = { purpose: 'test', prefix: 't_' };
    const minted = new LinkTokens(TEST_LICENSE_KEY).mint(kind);
    expect(minted.token).toMatch(/^t_[A-Za-z0-9_-]{43}$/);
    expect(new LinkTokens(TEST_LICENSE_KEY).rederive(kind, minted)).toBe(minted.token);
    expect(new LinkTokens(Buffer.alloc(32, 9)).rederive(kind, minted)).toBeNull();
    expect(new LinkTokens(TEST_LICENSE_KEY).rederive({ purpose: 'other', prefix: 't_' }, minted)).toBeNull();
  });
});
