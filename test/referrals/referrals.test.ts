import { describe, expect, it } from 'vitest';
import { ReferralContextSigner, withinAttributionWindow, type ReferralContext } from '../../src/modules/referrals/referral-context.js';
import { ReferralVisitBuffer, userAgentClass } from '../../src/modules/referrals/referral-visits.js';
import { bearer, buildTestApp, seedWorkspace, type SeededWorkspace, type TestContext, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';

const ctx = useTestApp({ partners: { referralsPerMinute: 100_000, inviteResendCooldownSeconds: 0 } });
const signer = new ReferralContextSigner([TEST_LICENSE_KEY]);
const PROGRAMS = '/api/developer/partners/programs';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const STORE = 'https://shop.example/store?src=news&lang=en';

type Status = 'pending' | 'accepted' | 'active' | 'paused' | 'ended';
const affiliate = (key: string, status: Status) => ({ key, kind: 'affiliate' as const, name: `Aff ${key}`, recipientEmail: `${key}-${unique()}@partner.test`, rateBps: 1000, status });

/** A workspace with an agreement in every status, a collaborator, a storefront, and p2 with a page of its own. */
async function programWorkspace(c: TestContext, options: { storefront?: string | null } = {}) {
  const ws = await seedWorkspace(c, {
    programs: [
      affiliate('active', 'active'),
      affiliate('pending', 'pending'),
      affiliate('accepted', 'accepted'),
      affiliate('paused', 'paused'),
      affiliate('ended', 'ended'),
      { key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `co-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 1000 }], status: 'active' },
    ],
  });
  const storefront = options.storefront === undefined ? STORE : options.storefront;
  await c.database.db.updateTable('workspaces').set({ storefront_url: storefront }).where('id', '=', ws.workspaceId).execute();
  await c.database.db.updateTable('products').set({ storefront_url: 'https://shop.example/p/two?ref=x' }).where('id', '=', ws.ids.products.p2!).execute();
  return ws;
}

async function codeOf(c: TestContext, agreementId: number): Promise<string | null> {
  const row = await c.database.db.selectFrom('partner_agreements').where('id', '=', agreementId).select('referral_code').executeTakeFirstOrThrow();
  return row.referral_code;
}

const visitsOf = (c: TestContext, agreementId: number) =>
  c.database.db.selectFrom('partner_referral_visits').where('agreement_id', '=', agreementId).selectAll().orderBy('id').execute();

async function waitForVisits(c: TestContext, agreementId: number, count: number, withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const rows = await visitsOf(c, agreementId);
    if (rows.length >= count || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const follow = (c: TestContext, code: string, query = '', headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
  c.app.inject({ method, url: `/api/partner-referrals/${code}${query}`, headers });

describe('referral links', () => {
  it('redirects an active agreement’s link with 303 to the storefront, keeping its query and adding a signed pb_ref', async () => {
    const ws = await programWorkspace(ctx());
    const code = (await codeOf(ctx(), ws.ids.programs.active!))!;
    const before = Date.now();
    const res = await follow(ctx(), code);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.example/store');
    expect(location.searchParams.get('src')).toBe('news');
    expect(location.searchParams.get('lang')).toBe('en');
    const ref = signer.verify(location.searchParams.get('pb_ref')!);
    expect(ref).toMatchObject({ agreementId: ws.ids.programs.active, workspaceId: ws.workspaceId });
    expect(ref!.visitedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(ref!.visitedAt.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('leads to the product’s own page, else the workspace storefront, and ignores a product of another workspace', async () => {
    const ws = await programWorkspace(ctx());
    const other = await seedWorkspace(ctx());
    const code = (await codeOf(ctx(), ws.ids.programs.active!))!;
    const target = async (query: string) => {
      const res = await follow(ctx(), code, query);
      expect(res.statusCode, res.body).toBe(303);
      const url = new URL(String(res.headers.location));
      expect(signer.verify(url.searchParams.get('pb_ref')!)?.agreementId).toBe(ws.ids.programs.active);
      url.searchParams.delete('pb_ref');
      return url.toString();
    };
    expect(await target(`?product=${ws.ids.products.p2}`)).toBe('https://shop.example/p/two?ref=x');
    expect(await target(`?product=${ws.ids.products.p1}`)).toBe(STORE);
    expect(await target(`?product=${other.ids.products.p2}`)).toBe(STORE);
    expect(await target('?product=2147483647')).toBe(STORE);
    expect((await follow(ctx(), code, '?product=abc')).statusCode).toBe(400);
    const visits = await waitForVisits(ctx(), ws.ids.programs.active!, 4, 2000);
    expect(visits.map((v) => v.product_id)).toEqual([ws.ids.products.p2, ws.ids.products.p1, null, null]);
  });

  it('falls back to the service’s home page when neither the product nor the workspace has a storefront', async () => {
    const ws = await programWorkspace(ctx(), { storefront: null });
    const res = await follow(ctx(), (await codeOf(ctx(), ws.ids.programs.active!))!);
    expect(res.statusCode).toBe(303);
    const url = new URL(String(res.headers.location));
    expect(`${url.origin}${url.pathname}`).toBe('http://patchbay.test/');
    expect(signer.verify(url.searchParams.get('pb_ref')!)).not.toBeNull();
  });

  it('records a visit durably within a second, with a hashed address and a user agent class', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const started = Date.now();
    const res = await follow(ctx(), (await codeOf(ctx(), id))!, `?product=${ws.ids.products.p2}`, { 'user-agent': IPHONE });
    expect(res.statusCode).toBe(303);
    const rows = await waitForVisits(ctx(), id, 1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(rows).toHaveLength(1);
    const [visit] = rows;
    expect(visit).toMatchObject({ workspace_id: ws.workspaceId, agreement_id: id, product_id: ws.ids.products.p2, user_agent_class: 'mobile' });
    expect(visit!.address_hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(visit!.address_hash).not.toContain('127.0.0.1');
    const pbRef = signer.verify(new URL(String(res.headers.location)).searchParams.get('pb_ref')!);
    expect(new Date(visit!.visited_at).getTime()).toBe(pbRef!.visitedAt.getTime());
    // The same address hashes the same (visits can be counted per address without keeping it).
    await follow(ctx(), (await codeOf(ctx(), id))!, '', { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    const two = await waitForVisits(ctx(), id, 2, 1000);
    expect(two[1]).toMatchObject({ address_hash: visit!.address_hash, user_agent_class: 'bot', product_id: null });
  });

  it('answers HEAD with the same redirect and records no visit', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const res = await follow(ctx(), (await codeOf(ctx(), id))!, '', {}, 'HEAD');
    expect(res.statusCode).toBe(303);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const url = new URL(String(res.headers.location));
    expect(signer.verify(url.searchParams.get('pb_ref')!)?.agreementId).toBe(id);
    await new Promise((r) => setTimeout(r, 600));
    expect(await visitsOf(ctx(), id)).toHaveLength(0);
  });

  it('redirects links of agreements that are not active without pb_ref and records nothing', async () => {
    const ws = await programWorkspace(ctx());
    for (const key of ['pending', 'accepted', 'paused', 'ended']) {
      const id = ws.ids.programs[key]!;
      const res = await follow(ctx(), (await codeOf(ctx(), id))!, `?product=${ws.ids.products.p2}`);
      expect(res.statusCode, key).toBe(303);
      expect(res.headers.location, key).toBe('https://shop.example/p/two?ref=x');
      expect(res.headers['cache-control']).toBe('no-store');
    }
    await new Promise((r) => setTimeout(r, 600));
    for (const key of ['pending', 'accepted', 'paused', 'ended']) expect(await visitsOf(ctx(), ws.ids.programs[key]!), key).toHaveLength(0);
  });

  it('stops attributing as soon as an agreement is paused', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const code = (await codeOf(ctx(), id))!;
    expect(new URL(String((await follow(ctx(), code)).headers.location)).searchParams.has('pb_ref')).toBe(true);
    const paused = await ctx().app.inject({ method: 'POST', url: `${PROGRAMS}/${id}/status`, headers: bearer(ws.owner), payload: { status: 'paused' } });
    expect(paused.statusCode).toBe(200);
    expect(new URL(String((await follow(ctx(), code)).headers.location)).searchParams.has('pb_ref')).toBe(false);
  });

  it('answers 404 REFERRAL_NOT_FOUND to an unknown or malformed code, and to every code of a workspace whose partner programs are off', async () => {
    const ws = await programWorkspace(ctx());
    const off = await seedWorkspace(ctx(), { partnerProgramsEnabled: false, programs: [affiliate('a', 'active')] });
    for (const code of ['A'.repeat(32), 'short', 'x'.repeat(100), (await codeOf(ctx(), off.ids.programs.a!))!]) {
      const res = await follow(ctx(), code);
      expect(res.statusCode, code).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json().code).toBe('REFERRAL_NOT_FOUND');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
    // The invitation token is not a referral code.
    const created = await ctx().app.inject({
      method: 'POST',
      url: PROGRAMS,
      headers: bearer(ws.owner),
      payload: { kind: 'affiliate', recipient_email: `t-${unique()}@partner.test`, name: 'T', rate_bps: 100, send_email: false },
    });
    const token = /#token=([A-Za-z0-9_-]{43})$/.exec(created.json().invitation.invitation_link)![1]!;
    expect((await follow(ctx(), token)).statusCode).toBe(404);
    await new Promise((r) => setTimeout(r, 400));
    expect(await visitsOf(ctx(), off.ids.programs.a!)).toHaveLength(0);
  });

  it('gives every affiliate agreement its own unguessable code, never its invitation token; collaborators have none', async () => {
    const ws = await seedWorkspace(ctx());
    const made = [];
    for (let i = 0; i < 3; i++) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: PROGRAMS,
        headers: bearer(ws.owner),
        payload: { kind: 'affiliate', recipient_email: `u${i}-${unique()}@partner.test`, name: `U${i}`, rate_bps: 100, send_email: false },
      });
      expect(res.statusCode, res.body).toBe(201);
      made.push(res.json());
    }
    const codes = made.map((m) => m.agreement.referral_code as string);
    for (const [i, m] of made.entries()) {
      expect(codes[i]).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(m.agreement.referral_url).toBe(`http://patchbay.test/api/partner-referrals/${codes[i]}`);
      expect(m.invitation.invitation_link).not.toContain(codes[i]);
    }
    expect(new Set(codes).size).toBe(3);
    const co = await ctx().app.inject({
      method: 'POST',
      url: PROGRAMS,
      headers: bearer(ws.owner),
      payload: { kind: 'collaborator', recipient_email: `c-${unique()}@partner.test`, name: 'C', rate_bps: 0, product_rates: [{ product_id: ws.ids.products.p3, rate_bps: 500 }], send_email: false },
    });
    expect(co.statusCode, co.body).toBe(201);
    expect(co.json().agreement).toMatchObject({ referral_code: null, referral_url: null });
  });

  it('shows referral_code and referral_url in the developer’s and the recipient’s program lists (null for collaborators)', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const code = (await codeOf(ctx(), id))!;
    const list = (await ctx().app.inject({ method: 'GET', url: PROGRAMS, headers: bearer(ws.owner) })).json().programs as Array<Record<string, unknown>>;
    expect(list.find((p) => p.id === id)).toMatchObject({ referral_code: code, referral_url: `http://patchbay.test/api/partner-referrals/${code}` });
    expect(list.find((p) => p.id === ws.ids.programs.co)).toMatchObject({ referral_code: null, referral_url: null });

    const { Recipients } = await import('../../src/modules/recipients/recipients.service.js');
    const email = (await ctx().database.db.selectFrom('partner_agreements').where('id', '=', id).select('recipient_email').executeTakeFirstOrThrow()).recipient_email;
    const session = (await new Recipients(ctx().database.db).operatorSession(email)).token;
    const portal = await ctx().app.inject({ method: 'GET', url: '/api/partner-portal/programs', headers: bearer(session) });
    expect(portal.statusCode).toBe(200);
    expect(portal.json().programs).toEqual([expect.objectContaining({ id, referral_code: code, referral_url: `http://patchbay.test/api/partner-referrals/${code}` })]);
  });

  it('is rate-limited per address with 429 and Retry-After', async () => {
    const c = await buildTestApp({ partners: { referralsPerMinute: 2 }, rateLimitNamespace: `ref-${unique()}:` });
    try {
      const ws = await programWorkspace(c);
      const code = (await codeOf(c, ws.ids.programs.active!))!;
      expect((await follow(c, code)).statusCode).toBe(303);
      expect((await follow(c, code, '', {}, 'HEAD')).statusCode).toBe(303);
      const limited = await follow(c, code);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe('RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.headers['cache-control']).toBe('no-store');
      // Another address has its own allowance.
      const elsewhere = await c.app.inject({ method: 'GET', url: `/api/partner-referrals/${code}`, remoteAddress: '203.0.113.9' });
      expect(elsewhere.statusCode).toBe(303);
    } finally {
      await c.app.close();
      await c.database.close();
    }
  });

  it('writes the visits still waiting when the app closes', async () => {
    const c = await buildTestApp({ partners: { referralsPerMinute: 1000 } });
    let ws: SeededWorkspace | undefined;
    try {
      ws = await programWorkspace(c);
      const code = (await codeOf(c, ws.ids.programs.active!))!;
      for (let i = 0; i < 5; i++) expect((await follow(c, code)).statusCode).toBe(303);
      await c.app.close();
      expect(await visitsOf(c, ws.ids.programs.active!)).toHaveLength(5);
    } finally {
      await c.database.close();
    }
  });
});

describe('referral visit buffer', () => {
  it('writes large bursts in batches, every visit once', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const buffer = new ReferralVisitBuffer(ctx().database.db, { warn: () => {} }, { flushMs: 50, maxBatch: 500 });
    const at = new Date();
    for (let i = 0; i < 1_234; i++) {
      buffer.record({ workspaceId: ws.workspaceId, agreementId: id, productId: i % 2 ? ws.ids.products.p1! : null, visitedAt: at, addressHash: `h${i}`, userAgentClass: 'other' });
    }
    await buffer.stop();
    expect(buffer.size).toBe(0);
    const rows = await visitsOf(ctx(), id);
    expect(rows).toHaveLength(1_234);
    expect(new Set(rows.map((r) => r.address_hash)).size).toBe(1_234);
  });

  it('keeps a batch the database refused and writes it on the next attempt', async () => {
    const ws = await programWorkspace(ctx());
    const id = ws.ids.programs.active!;
    const warnings: string[] = [];
    const buffer = new ReferralVisitBuffer(ctx().database.db, { warn: (_o, msg) => warnings.push(msg) }, { flushMs: 10_000 });
    const visit = { workspaceId: ws.workspaceId, agreementId: id, productId: null, visitedAt: new Date(), addressHash: 'h', userAgentClass: 'other' as const };
    // A visit naming an agreement of another workspace breaks the composite foreign key: the whole batch fails.
    buffer.record({ ...visit, workspaceId: ws.workspaceId + 1_000_000 });
    buffer.record(visit);
    await buffer.flush();
    expect(warnings).toHaveLength(1);
    expect(buffer.size).toBe(2);
    expect(await visitsOf(ctx(), id)).toHaveLength(0);
    await buffer.stop();
    expect(warnings).toHaveLength(2);
  });

  it('classes user agents', () => {
    const cases: Array<[string, string | undefined, string]> = [
      ['no header', undefined, 'other'],
      ['iPhone Safari', IPHONE, 'mobile'],
      ['Android Chrome', 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36', 'mobile'],
      ['Windows Chrome', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', 'desktop'],
      ['macOS Safari', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15', 'desktop'],
      ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'bot'],
      ['Slack preview', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'bot'],
      ['curl', 'curl/8.4.0', 'bot'],
      ['unknown', 'SomethingElse/1.0', 'other'],
    ];
    for (const [label, ua, expected] of cases) expect(userAgentClass(ua), label).toBe(expected);
  });
});

describe('referral context (pb_ref)', () => {
  const ctxOf = (visitedAt = new Date('2026-03-01T12:00:00.123Z')): ReferralContext => ({ agreementId: 42, workspaceId: 7, visitedAt });

  it('round-trips the agreement, the workspace and the visit time to the millisecond', () => {
    const value = signer.sign(ctxOf());
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(signer.verify(value)).toEqual(ctxOf());
    expect(signer.verify(signer.sign({ agreementId: 2 ** 31 - 1, workspaceId: 1, visitedAt: new Date(0) }))).toEqual({ agreementId: 2 ** 31 - 1, workspaceId: 1, visitedAt: new Date(0) });
  });

  it('refuses tampered, truncated, malformed and foreign values', () => {
    const value = signer.sign(ctxOf());
    const flip = (i: number) => value.slice(0, i) + (value[i] === 'A' ? 'B' : 'A') + value.slice(i + 1);
    for (let i = 0; i < value.length; i++) expect(signer.verify(flip(i)), `character ${i}`).toBeNull();
    for (const bad of ['', value.slice(0, -1), `${value}A`, `${value}=`, value.replace(/./, '+'), 'not a value', 'A'.repeat(value.length)]) expect(signer.verify(bad), bad).toBeNull();
    const other = new ReferralContextSigner([Buffer.alloc(32, 9)]);
    expect(other.verify(value)).toBeNull();
    expect(signer.verify(other.sign(ctxOf()))).toBeNull();
  });

  it('verifies values of every key it holds and signs with the first (rotation)', () => {
    const oldKey = Buffer.alloc(32, 1);
    const newKey = Buffer.alloc(32, 2);
    const before = new ReferralContextSigner([oldKey]);
    const during = new ReferralContextSigner([newKey, oldKey]);
    const after = new ReferralContextSigner([newKey]);
    expect(during.verify(before.sign(ctxOf()))).toEqual(ctxOf());
    expect(after.verify(during.sign(ctxOf()))).toEqual(ctxOf());
    expect(before.verify(during.sign(ctxOf()))).toBeNull();
    expect(after.verify(before.sign(ctxOf()))).toBeNull();
  });

  it('is derived from the key: another service secret signs differently', () => {
    expect(new ReferralContextSigner([Buffer.alloc(32, 3)]).sign(ctxOf())).not.toBe(signer.sign(ctxOf()));
    expect(() => new ReferralContextSigner([])).toThrow();
    expect(() => signer.sign({ agreementId: 0, workspaceId: 1, visitedAt: new Date() })).toThrow(RangeError);
  });

  it('counts a sale only from the clock-skew tolerance before the visit to the end of the attribution window, in whole seconds', () => {
    const visit = ctxOf(new Date('2026-03-01T00:00:00Z'));
    const cases: Array<[string, string, number, boolean]> = [
      ['at the visit', '2026-03-01T00:00:00Z', 30, true],
      ['inside the window', '2026-03-15T10:00:00Z', 30, true],
      ['on the last second', '2026-03-31T00:00:00.999Z', 30, true],
      ['a second after the window', '2026-03-31T00:00:01Z', 30, false],
      ['long after', '2026-09-01T00:00:00Z', 30, false],
      ['five minutes before the visit (clock skew)', '2026-02-28T23:55:00Z', 30, true],
      ['more than five minutes before the visit', '2026-02-28T23:54:59.999Z', 30, false],
      ['one-day window, next day', '2026-03-01T23:00:00Z', 1, true],
      ['one-day window, two days later', '2026-03-03T00:00:00Z', 1, false],
    ];
    for (const [label, sale, days, expected] of cases) expect(withinAttributionWindow(visit, new Date(sale), days), label).toBe(expected);
  });
});
