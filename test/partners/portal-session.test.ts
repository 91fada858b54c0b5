import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { childEnv, CLI_ENTRY, describeOwnEmbeddedDatabase, migratedDataDir, spawnTracked } from '../helpers/process.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, partners: { signInLinksPerHour: 2 } });

const askLink = (email: string) => ctx().app.inject({ method: 'POST', url: '/api/partner-portal/session/link', payload: { email } });
const signIn = (token: string) => ctx().app.inject({ method: 'POST', url: '/api/partner-portal/session', payload: { token } });
const linkTokenFor = async (email: string) => {
  await ctx().app.jobs.idle();
  const mails = transport.sent.filter((m) => m.to === email);
  const match = /#token=(psl_[A-Za-z0-9_-]{43})/.exec(mails.at(-1)?.text ?? '');
  return match?.[1];
};

describe('partner portal sessions', () => {
  it('e-mails a one-time sign-in link to a known address and answers the same for an unknown one', async () => {
    const email = `known-${unique()}@partner.test`;
    await seedWorkspace(ctx(), { programs: [{ key: 'p', kind: 'affiliate', name: 'P', recipientEmail: email, rateBps: 100 }] });
    const known = await askLink(email.toUpperCase());
    const unknown = await askLink(`nobody-${unique()}@partner.test`);
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.json()).toEqual(known.json());
    const token = await linkTokenFor(email);
    expect(token).toMatch(/^psl_/);
    const stored = await ctx().database.db.selectFrom('recipient_sign_in_links').where('email', '=', email).select('token_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(token!);

    const session = await signIn(token!);
    expect(session.statusCode, session.body).toBe(201);
    expect(session.json()).toMatchObject({ token: expect.stringMatching(/^pps_/), recipient: { email, emailVerified: true } });
    const cookie = String(session.headers['set-cookie']);
    expect(cookie).toMatch(/patchbay_partner_session=pps_/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    // Single use.
    expect((await signIn(token!)).statusCode).toBe(401);

    // The cookie and the bearer token both open the portal; signing out ends the session for both.
    const sessionToken = session.json().token as string;
    const viaCookie = await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs', headers: { cookie: `patchbay_partner_session=${sessionToken}` } });
    expect(viaCookie.statusCode).toBe(200);
    expect(viaCookie.headers['cache-control']).toBe('no-store');
    const out = await ctx().app.inject({ method: 'DELETE', url: '/api/partner-portal/session', headers: bearer(sessionToken) });
    expect(out.statusCode).toBe(200);
    expect((await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs', headers: bearer(sessionToken) })).statusCode).toBe(401);
  });

  it('refuses expired and unknown links, and rate-limits link requests per address', async () => {
    const email = `limit-${unique()}@partner.test`;
    await seedWorkspace(ctx(), { programs: [{ key: 'p', kind: 'affiliate', name: 'P', recipientEmail: email, rateBps: 100 }] });
    await askLink(email);
    const token = await linkTokenFor(email);
    await ctx().database.db.updateTable('recipient_sign_in_links').set({ expires_at: new Date(Date.now() - 1000) }).where('email', '=', email).execute();
    expect((await signIn(token!)).statusCode).toBe(401);
    expect((await signIn(`psl_${'A'.repeat(43)}`)).statusCode).toBe(401);
    expect((await signIn('not-a-token')).statusCode).toBe(401);
    expect((await askLink(email)).statusCode).toBe(202);
    const limited = await askLink(email);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await askLink('not-an-email')).statusCode).toBe(400);
  });

  it('lists the recipient’s agreements across workspaces, and nothing of a workspace whose partner features are off', async () => {
    const email = `multi-${unique()}@partner.test`;
    const a = await seedWorkspace(ctx(), { programs: [{ key: 'p', kind: 'affiliate', name: 'A deal', recipientEmail: email, rateBps: 100, status: 'active' }] });
    const b = await seedWorkspace(ctx(), { programs: [{ key: 'p', kind: 'affiliate', name: 'B deal', recipientEmail: email, rateBps: 200, status: 'paused' }] });
    await seedWorkspace(ctx(), { partnerProgramsEnabled: false, programs: [{ key: 'p', kind: 'affiliate', name: 'Off deal', recipientEmail: email, rateBps: 300, status: 'active' }] });
    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const token = (await new Recipients(ctx().database.db).operatorSession(email)).token;
    const list = (await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs', headers: bearer(token) })).json();
    expect(list.programs.map((p: { id: number }) => p.id).sort()).toEqual([a.ids.programs.p, b.ids.programs.p].sort());
    expect(list.programs.find((p: { id: number }) => p.id === a.ids.programs.p)).toMatchObject({ name: 'A deal', status: 'active', terms_version: 1, accepted_terms: { rate_bps: 100 } });
  });
});

describeOwnEmbeddedDatabase('patchbay token create --recipient', () => {
  it('prints one JSON line with a session token that opens the portal', { timeout: 120_000 }, async () => {
    const dir = await migratedDataDir();
    const { outcome } = spawnTracked([CLI_ENTRY, 'token', 'create', '--recipient', 'Cli.Partner@Example.test'], childEnv(dir, { LOG_LEVEL: 'warn' }));
    const result = await outcome;
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0]!);
    expect(Object.keys(printed)).toEqual(['token']);
    expect(printed.token).toMatch(/^pps_[A-Za-z0-9_-]{43}$/);

    const bad = await spawnTracked([CLI_ENTRY, 'token', 'create', '--recipient', 'nope'], childEnv(dir, { LOG_LEVEL: 'warn' })).outcome;
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
  });
});
