import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { createApiClient } from '../client/api-client.js';
import { cli, expectAccessible, linkFromOutbox, openPage, screenshot, seed, type Stack, startStack, WEBHOOK_SECRET } from './harness.js';

/**
 * A partner's whole journey in the browser, as a person does it: sign in from the e-mailed link,
 * open the invitation, accept, give live consent (after the developer's, through the API), onboard
 * a sandbox card, and read the accounting once a referred sale was paid out. Then the refusals:
 * a cross-site form post, and tokens in URLs, logs or Referers. Steps run in order on one browser.
 */
const POLICY = 'patchbay-managed-live-v1';
const suffix = randomUUID().slice(0, 8);
// Fixed names (the database is this run's own) keep the README's screenshots the same from run to run.
const partner = 'ada@indie-partner.test';

let stack: Stack;
let page: Page;
let problems: string[];
let requests: Array<{ url: string; referer: string | undefined }>;
let answers: string[];
let developer: ReturnType<typeof createApiClient>;
let agreementId: number;
let productId: number;
let workspaceId: number;
const secrets: string[] = [];
let referralUrl = '';

const portal = (path = '') => `${stack.base}/partner-portal${path}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

beforeAll(async () => {
  stack = await startStack();
  const fixtures = await seed(stack, {
    workspaces: [{ key: 'w', name: 'Acme Audio', billingEligible: true }],
    accounts: [{ key: 'owner', email: `owner-${suffix}@acme.test`, emailVerified: true }],
    memberships: [{ account: 'owner', workspace: 'w', owner: true }],
    products: [{ key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900 }],
    tokens: [{ key: 'owner', account: 'owner', workspace: 'w' }],
  }, { allowDuplicateWorkspaces: true });
  developer = createApiClient(stack.base, fixtures.tokens.owner);
  productId = fixtures.ids.products.synth!;
  workspaceId = fixtures.ids.workspaces.w!;
  const created = await developer.POST('/api/developer/partners/programs', {
    body: { kind: 'affiliate', recipient_email: partner, name: 'Launch affiliates', rate_bps: 2000, attribution_window_days: 30 },
  });
  expect(created.response.status).toBe(201);
  agreementId = created.data!.agreement.id;
  ({ page, problems, requests, answers } = await openPage(stack));
});

afterAll(async () => {
  await page?.close();
});

describe('the partner portal in a browser', () => {
  it('sends a sign-in link from a form used with the keyboard alone', async () => {
    await page.goto(portal('/sign-in'));
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in');
    await screenshot(page, 'partner-portal-sign-in');
    // The skip link comes first and jumps over the header to the page, whose first field is the address.
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('main');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.getByLabel('E-mail address').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type(partner);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Check your inbox' }).isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in, link sent');
  });

  it('signs in from the e-mailed link and takes the token out of the address bar', async () => {
    const link = await linkFromOutbox(stack, partner, /http\S+\/partner-portal\/sign-in#token=\S+/);
    secrets.push(new URL(link).hash.slice('#token='.length));
    await page.goto(link);
    await expect.poll(() => page.url()).toBe(portal('/programs'));
    await expect.poll(() => page.getByRole('heading', { name: 'No programs yet' }).isVisible()).toBe(true);
    await expectAccessible(page, 'programs, empty');
  });

  it('shows the invitation with its terms and versions, and accepts it', async () => {
    const link = await linkFromOutbox(stack, partner, /http\S+\/partner-portal\/invitations#token=\S+/);
    secrets.push(new URL(link).hash.slice('#token='.length));
    await page.goto(link);
    await expect.poll(() => heading('Invitation: Launch affiliates').isVisible()).toBe(true);
    expect(page.url()).toBe(portal('/invitations'));
    await expect.poll(() => page.getByText('20 %').first().isVisible()).toBe(true);
    await expect.poll(() => page.getByText('30 days after a referral visit').isVisible()).toBe(true);
    const accept = page.getByRole('button', { name: 'Accept the invitation' });
    await expect.poll(() => accept.isDisabled()).toBe(true);
    await expectAccessible(page, 'invitation');
    await screenshot(page, 'partner-portal-invitation');
    await page.getByRole('checkbox', { name: /I accept terms version 1/ }).check();
    await accept.click();
    await expect.poll(() => page.url()).toBe(portal(`/programs/${agreementId}`));
    await expect.poll(() => heading('Launch affiliates').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('Waiting for both consents').isVisible()).toBe(true);
  });

  it('gives live consent once the developer has given theirs', async () => {
    const consent = await developer.POST('/api/developer/partners/programs/{id}/live-consent', {
      params: { path: { id: agreementId } },
      body: { accept: true, terms_version: 1, policy_version: POLICY },
    });
    expect(consent.response.status).toBe(200);
    const active = await developer.POST('/api/developer/partners/programs/{id}/status', { params: { path: { id: agreementId } }, body: { status: 'active' } });
    expect(active.response.status).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByText('Waiting for your consent').isVisible()).toBe(true);
    await expectAccessible(page, 'program, consent pending');
    await page.getByRole('checkbox', { name: /I consent to be paid under terms version 1/ }).check();
    await page.getByRole('button', { name: 'Give live consent' }).click();
    await expect.poll(() => page.getByText('Live: both consented').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('You consented to terms version 1.').isVisible()).toBe(true);
  });

  it('copies the referral link to the clipboard', async () => {
    const field = page.getByLabel('Your referral link');
    const url = await field.inputValue();
    referralUrl = url;
    expect(url).toMatch(new RegExp(`^${stack.base}/api/partner-referrals/\\S+$`));
    await page.getByRole('button', { name: 'Copy the referral link' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await expect.poll(() => page.getByRole('button', { name: 'Referral link copied' }).isVisible()).toBe(true);
    await expectAccessible(page, 'program, live');
    await screenshot(page, 'partner-portal-program');
  });

  it('walks the sandbox card onboarding end to end', async () => {
    await page.getByRole('link', { name: 'Payout destinations' }).click();
    await expect.poll(() => heading('Payout destinations').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('heading', { name: 'No payout destination yet' }).isVisible()).toBe(true);
    await expectAccessible(page, 'payouts, none yet');
    await page.getByRole('button', { name: 'Set up card payouts' }).click();
    const go = page.getByRole('link', { name: 'Continue onboarding' });
    await expect.poll(() => go.isVisible()).toBe(true);
    await go.click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sandbox card onboarding' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Complete onboarding' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Onboarding complete' }).isVisible()).toBe(true);
    await page.goto(portal('/payouts'));
    const table = page.getByRole('table', { name: 'Sandbox payout destinations' });
    await expect.poll(() => table.getByText('ready').isVisible()).toBe(true);
    await expect.poll(() => page.getByText(/is ready for payouts/).first().isVisible()).toBe(true);
    await expectAccessible(page, 'payouts, card ready');
    await screenshot(page, 'partner-portal-payouts');
  });

  it('shows a referred sale in the accounting as payable, then the paid transfer', async () => {
    // A buyer follows the referral link, then buys through the managed checkout.
    const follow = await fetch(referralUrl, { redirect: 'manual' });
    expect(follow.status).toBe(303);
    const pbRef = new URL(String(follow.headers.get('location'))).searchParams.get('pb_ref');
    expect(pbRef).toBeTruthy();
    await new Promise((resolve) => setTimeout(resolve, 1500)); // visits are written within a second
    // The program's page counts the visit next to the link (counts only, nothing of the visitor).
    await page.goto(portal(`/programs/${agreementId}`));
    await expect.poll(() => page.getByText(/^1 in the last 30 days · 1 in total · last visit/).isVisible()).toBe(true);
    const days = page.getByRole('table', { name: 'Days with visits in the last 30 days, newest first' });
    await expect.poll(() => days.getByRole('row').count()).toBe(2);
    await expectAccessible(page, 'program, a referral visit');
    await page.goto(portal('/payouts'));
    const event = {
      id: `evt_${suffix}`,
      type: 'sale.captured',
      created: Math.floor(Date.now() / 1000) + 1,
      data: {
        workspace_id: workspaceId,
        order_id: `ord_${suffix}`,
        currency: 'usd',
        customer: { email: `buyer-${suffix}@customer.test`, name: 'Ada Buyer' },
        items: [{ product_id: productId, subtotal_cents: 14900, discount_cents: 0 }],
        referral: pbRef,
      },
    };
    const body = JSON.stringify(event);
    const booked = await fetch(`${stack.base}/api/checkout/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, body, Math.floor(Date.now() / 1000)) },
      body,
    });
    expect(booked.status, await booked.clone().text()).toBe(200);
    expect((await booked.json()).outcome).toBe('recorded');
    // The partner's own answer has the allocation before the page is asked to show it.
    await expect
      .poll(async () => {
        const answer = await page.request.get(`${stack.base}/api/partner-portal/programs/accounting`);
        return JSON.stringify((await answer.json()).balance_details);
      })
      .toMatch(/"payable_cents":[1-9]/);

    await page.getByRole('link', { name: 'Accounting' }).click();
    await expect.poll(() => heading('Accounting').isVisible()).toBe(true);
    const balances = page.getByRole('table', { name: /Balances per program/ });
    await expect.poll(() => balances.getByText('Launch affiliates (Acme Audio').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('heading', { name: 'No transfers yet' }).isVisible()).toBe(true);
    // The sale's allocation row: the partner's share, paged by the server; reversals only is a URL filter.
    const entries = page.getByRole('table', { name: 'Your share of each sale, newest first' });
    await expect.poll(() => entries.getByText('Launch affiliates (Acme Audio').isVisible()).toBe(true);
    await expect.poll(() => entries.getByRole('row').count()).toBe(2);
    expect(await entries.textContent()).not.toContain('Ada Buyer');
    await expectAccessible(page, 'accounting, payable');
    await page.getByText('Reversals only').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('rows')).toBe('reversals');
    await expect.poll(() => page.getByRole('heading', { name: 'No reversals' }).isVisible()).toBe(true);
    await expectAccessible(page, 'accounting, no reversals');
    await page.goBack();
    await expect.poll(() => entries.getByRole('row').count()).toBe(2);

    // The developer's payout run transfers the payable balance; the sandbox confirms it through a job of the server
    // (within a second of the run, measured on PostgreSQL). Each look reloads the page and waits until the reloaded
    // page shows the transfer before reading its status: read at once, a slow render read the old page, and the test
    // reloaded over and over until one render happened to be quick (up to two minutes on a loaded machine).
    await cli(stack, ['payouts', 'run']);
    const transfers = page.getByRole('table', { name: 'Payout transfers, newest first' });
    await expect
      .poll(
        async () => {
          await page.reload();
          await transfers.getByRole('row').nth(1).waitFor({ state: 'visible', timeout: 15_000 });
          return transfers.getByText('paid', { exact: true }).isVisible();
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBe(true);
    await expect.poll(() => page.getByText('Paid (USD)').isVisible()).toBe(true);
    await expectAccessible(page, 'accounting, paid');
    await screenshot(page, 'partner-portal-accounting');
  });

  it('keeps filters in the URL: a deep link opens the filtered view and the back button returns to it', async () => {
    await page.goto(portal(`/accounting?agreement=${agreementId}&currency=usd`));
    await expect.poll(() => heading('Accounting').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('combobox', { name: 'Program' }).inputValue()).toMatch(/^Launch affiliates/);
    await expect.poll(() => page.getByRole('combobox', { name: 'Currency' }).inputValue()).toBe('USD');
    // The server filters the allocation rows by the same program and currency.
    await expect.poll(() => page.getByRole('table', { name: 'Your share of each sale, newest first' }).getByRole('row').count()).toBe(2);
    await page.goto(portal(`/accounting?agreement=${agreementId}&currency=eur`));
    await expect.poll(() => page.getByRole('heading', { name: 'No allocations yet' }).isVisible()).toBe(true);
    await page.goto(portal(`/accounting?agreement=${agreementId}&currency=usd`));
    await expect.poll(() => page.getByRole('combobox', { name: 'Currency' }).inputValue()).toBe('USD');
    await page.getByRole('link', { name: 'Programs' }).click();
    await expect.poll(() => page.url()).toBe(portal('/programs'));
    await page.goBack();
    await expect.poll(() => page.url()).toBe(portal(`/accounting?agreement=${agreementId}&currency=usd`));
    await expect.poll(() => page.getByRole('combobox', { name: 'Program' }).inputValue()).toMatch(/^Launch affiliates/);
    await page.goForward();
    await expect.poll(() => heading('Programs').isVisible()).toBe(true);
    await expectAccessible(page, 'programs, one accepted');
  });

  it('works on a phone: navigation behind the menu button', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(portal('/programs'));
    const menu = page.getByRole('button', { name: 'Open navigation' });
    await expect.poll(() => menu.isVisible()).toBe(true);
    await menu.click();
    await page.getByRole('link', { name: 'Accounting' }).click();
    await expect.poll(() => heading('Accounting').isVisible()).toBe(true);
    await expectAccessible(page, 'accounting on a phone');
    await screenshot(page, 'partner-portal-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('refuses a cross-origin form post that carries the session cookie, while the portal’s own requests work', async () => {
    // Another origin of the same site (another port on 127.0.0.1): the SameSite=Lax cookie rides along.
    const form = `<!doctype html><html lang="en"><title>elsewhere</title><body><form method="post" enctype="multipart/form-data"
      action="${stack.base}/api/partner-portal/programs/payouts/wallet-provider"><input name="livemode" value="false">
      <input name="confirm_verified_email" value="true"><button>Send</button></form></body></html>`;
    const attacker = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(form));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = attacker.address() as import('node:net').AddressInfo;
      await page.goto(`http://127.0.0.1:${port}/`);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/wallet-provider')), page.getByRole('button', { name: 'Send' }).click()]);
      expect(answer.status()).toBe(403);
      expect((await answer.json()).code).toBe('CROSS_SITE_REQUEST_REFUSED');
    } finally {
      attacker.close();
    }
    // The same change from the portal's own page goes through.
    await page.goto(portal('/payouts'));
    await page.getByRole('checkbox', { name: 'Pay to the verified e-mail address of this account' }).check();
    await page.getByRole('button', { name: 'Use my wallet' }).click();
    const table = page.getByRole('table', { name: 'Sandbox payout destinations' });
    await expect.poll(() => table.getByText('Wallet').isVisible()).toBe(true);
  });

  it('signs out, and the portal asks to sign in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(portal('/sign-in'));
    await page.goto(portal('/accounting'));
    await expect.poll(() => page.url(), { message: answers.slice(-8).join('\n') }).toBe(portal('/sign-in'));
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
  });

  it('leads a deep link through sign-in and back to it, even when the e-mailed link opens afresh', async () => {
    const deep = portal(`/accounting?agreement=${agreementId}`);
    await page.goto(deep);
    await expect.poll(() => page.url()).toBe(portal('/sign-in'));
    await page.getByLabel('E-mail address').fill(partner);
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await expect.poll(() => page.getByText('Check your inbox').isVisible()).toBe(true);
    const link = await linkFromOutbox(stack, partner, /http\S+\/partner-portal\/sign-in#token=\S+/, 1);
    secrets.push(new URL(link).hash.slice('#token='.length));
    await page.goto('about:blank');
    await page.goto(link);
    await expect.poll(() => page.url()).toBe(deep);
    await expect.poll(() => page.getByRole('combobox', { name: 'Program' }).inputValue()).toMatch(/^Launch affiliates/);
  });

  it('never let a token reach a page URL, a Referer, or a log line; no page broke its content policy', async () => {
    expect(secrets).toHaveLength(3);
    for (const secret of secrets) {
      const carriers = requests.filter((r) => r.url.includes(secret) || (r.referer ?? '').includes(secret));
      // The one allowed carrier: the invitation page sends its token to the contract's own invitation route.
      expect(carriers.map((r) => new URL(r.url).pathname.replace(secret, '{token}'))).toEqual(
        carriers.length ? carriers.map(() => '/api/partner-portal/programs/invitations/{token}') : [],
      );
      expect(stack.serverOutput()).not.toContain(secret);
    }
    // Our pages send no Referer at all (the other origin's form above is not ours).
    expect(requests.filter((r) => r.referer?.startsWith(stack.base))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
