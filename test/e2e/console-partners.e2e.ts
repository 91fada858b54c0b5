import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { createApiClient } from '../client/api-client.js';
import { signInConsole } from './console-session.js';
import { cli, expectAccessible, linkFromOutbox, openPage, screenshot, seed, type Stack, startStack, WEBHOOK_SECRET } from './harness.js';

/**
 * A developer runs an affiliate program from the console: creates it, sees the resend cooldown,
 * lets the partner accept (the partner's side goes through the portal's API), activates it and
 * gives the owner's live consent (a teammate is told why they cannot), previews a split, then a
 * referred sale arrives through the signed checkout webhook, the accounting shows its
 * allocation, and a sandbox payout run started from the console pays the partner.
 */
const POLICY = 'patchbay-managed-live-v1';
const suffix = randomUUID().slice(0, 8);
const owner = `owner-${suffix}@acme.test`;
const teammate = `manager-${suffix}@acme.test`;
const partner = `partner-${suffix}@partner.test`;

let stack: Stack;
let page: Page;
let problems: string[];
let productId: number;
let workspaceId: number;
let agreementId = 0;

const consoleUrl = (path = '') => `${stack.base}/console${path}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

beforeAll(async () => {
  stack = await startStack();
  const fixtures = await seed(stack, {
    workspaces: [{ key: 'w', name: `Acme Audio ${suffix}`, storefrontUrl: 'https://shop.acme.test' }],
    accounts: [
      { key: 'owner', email: owner, emailVerified: true },
      { key: 'manager', email: teammate, emailVerified: true },
    ],
    memberships: [
      { account: 'owner', workspace: 'w', owner: true, permissions: ['*'] },
      { account: 'manager', workspace: 'w', permissions: ['products.view', 'partners.view', 'partners.manage'], products: 'all' },
    ],
    products: [{ key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900, status: 'active' }],
  });
  productId = fixtures.ids.products.synth!;
  workspaceId = fixtures.ids.workspaces.w!;
  ({ page, problems } = await openPage(stack));
  await signInConsole(stack, owner);
});

afterAll(async () => {
  await page?.close();
});

describe('partner programs and money in the console', () => {
  it('creates an affiliate program: rates typed in percent, sent in basis points', async () => {
    await page.goto(consoleUrl('/partners/programs'));
    await expect.poll(() => page.getByRole('heading', { name: 'No partner programs yet' }).isVisible()).toBe(true);
    await expectAccessible(page, 'programs, none');
    await page.getByRole('link', { name: 'New program' }).first().click();
    await expect.poll(() => heading('New partner program').isVisible()).toBe(true);
    await page.getByLabel('Program name').fill('Launch affiliates');
    await page.getByLabel('Partner’s e-mail').fill(partner);
    await page.getByLabel('Default rate (%)').fill('150');
    await page.getByRole('button', { name: 'Create and invite' }).click();
    await expect.poll(() => page.getByText('A percentage from 0 to 100').isVisible()).toBe(true);
    await page.getByLabel('Default rate (%)').fill('20');
    await page.getByLabel('Attribution window (days)').fill('30');
    await expectAccessible(page, 'new program');
    await page.getByRole('button', { name: 'Create and invite' }).click();
    await expect.poll(() => heading('Launch affiliates').isVisible()).toBe(true);
    agreementId = Number(/\/partners\/programs\/(\d+)$/.exec(page.url())?.[1]);
    const terms = page.getByRole('region', { name: /Proposed terms \(version 1/ });
    await expect.poll(() => terms.getByText('20 %').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('Waiting for the partner to accept the invitation.').isVisible()).toBe(true);
    // The API stored basis points.
    const developer = await stack.context.request.get(`${stack.base}/api/developer/partners/programs`);
    const programs = ((await developer.json()) as { programs: Array<{ id: number; proposed_terms: { rate_bps: number } }> }).programs;
    expect(programs.find((p) => p.id === agreementId)?.proposed_terms.rate_bps).toBe(2000);
    await expectAccessible(page, 'program, pending');
  });

  it('shows the resend cooldown when an invitation went out moments ago', async () => {
    await page.getByRole('button', { name: 'Resend the invitation' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: /Wait \d+ s: an invitation for this program went out moments ago/ }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Resend the invitation' }).isDisabled()).toBe(true);
  });

  it('activates the accepted agreement; a teammate sees why only the owner consents; the owner consents', async () => {
    // The partner accepts from the e-mailed invitation and gives their consent, through the portal's API.
    const invitation = await linkFromOutbox(stack, partner, /http\S+\/partner-portal\/invitations#token=\S+/);
    const { token: session } = (await cli(stack, ['token', 'create', '--recipient', partner])) as { token: string };
    const portal = createApiClient(stack.base, session);
    const accepted = await portal.POST('/api/partner-portal/programs/invitations/accept', {
      body: { token: new URL(invitation).hash.slice('#token='.length), accept_preview_terms: true, preview_terms_version: 1, payout_policy_version: 'patchbay-payouts-v1' },
    });
    expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(200);
    const consent = await portal.POST('/api/partner-portal/programs/{id}/live-consent', { params: { path: { id: agreementId } }, body: { accept: true, terms_version: 1, policy_version: POLICY } });
    expect(consent.response.status).toBe(200);
    const wallet = await portal.POST('/api/partner-portal/programs/payouts/wallet-provider', { body: { livemode: false, confirm_verified_email: true } });
    expect(wallet.data?.ready).toBe(true);

    await page.reload();
    await expect.poll(() => page.getByText('Waiting for the owner’s consent').isVisible()).toBe(true);
    // Section 3.3: from accepted, activate or end; no pause, no resume.
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Activate' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Pause' }).isVisible()).toBe(true);

    await signInConsole(stack, teammate);
    const { page: other } = await openPage(stack);
    await other.goto(consoleUrl(`/partners/programs/${agreementId}`));
    await expect.poll(() => other.getByText('Only the workspace owner can give this consent').isVisible()).toBe(true);
    expect(await other.getByRole('button', { name: 'Give live consent' }).count()).toBe(0);
    await expectAccessible(other, 'program, teammate');
    await other.close();

    await signInConsole(stack, owner, 1);
    await page.reload();
    await page.getByRole('checkbox', { name: /As the workspace owner, I consent/ }).check();
    await page.getByRole('button', { name: 'Give live consent' }).click();
    await expect.poll(() => page.getByText('Live: both consented').isVisible()).toBe(true);
    await expectAccessible(page, 'program, live');
    await screenshot(page, 'console-partner-program');
  });

  it('previews a split as a calculator and says plainly that nothing is payable', async () => {
    await page.getByRole('link', { name: 'Split preview' }).click();
    await expect.poll(() => heading('Split preview').isVisible()).toBe(true);
    await page.getByLabel('Subtotal (USD)').fill('100');
    await page.getByRole('combobox', { name: 'Affiliate (optional)' }).click();
    await page.getByRole('option', { name: /Launch affiliates/ }).click();
    await page.getByRole('button', { name: 'Calculate the split' }).click();
    await expect.poll(() => page.getByText('A projection only: payable: false').isVisible()).toBe(true);
    const parts = page.getByRole('table', { name: 'Projected allocation' });
    await expect.poll(() => parts.getByRole('row', { name: /Affiliate: Launch affiliates\s+20 %\s+\$18\.00/ }).isVisible()).toBe(true);
    await expect.poll(() => parts.getByRole('row', { name: /You \(the developer\).*\$72\.00/ }).isVisible()).toBe(true);
    await expectAccessible(page, 'split preview');
    await screenshot(page, 'console-split-preview');
  });

  it('shows a referred sale’s allocation in the accounting, and pays it out with a sandbox run from the console', async () => {
    const referral = await stack.context.request.get(`${stack.base}/api/developer/partners/programs`);
    const referralUrl = ((await referral.json()) as { programs: Array<{ id: number; referral_url: string }> }).programs.find((p) => p.id === agreementId)!.referral_url;
    const follow = await fetch(referralUrl, { redirect: 'manual' });
    const pbRef = new URL(String(follow.headers.get('location'))).searchParams.get('pb_ref');
    expect(pbRef).toBeTruthy();
    const body = JSON.stringify({
      id: `evt_${suffix}`,
      type: 'sale.captured',
      created: Math.floor(Date.now() / 1000),
      data: {
        workspace_id: workspaceId,
        order_id: `ord_${suffix}`,
        currency: 'usd',
        customer: { email: `buyer-${suffix}@customer.test`, name: 'Ada Buyer' },
        items: [{ product_id: productId, subtotal_cents: 14900, discount_cents: 0 }],
        referral: pbRef,
      },
    });
    const booked = await fetch(`${stack.base}/api/checkout/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, body, Math.floor(Date.now() / 1000)) },
      body,
    });
    expect(booked.status, await booked.clone().text()).toBe(200);

    await page.getByRole('link', { name: 'Partner accounting' }).click();
    await expect.poll(() => heading('Partner accounting').isVisible()).toBe(true);
    const allocations = page.getByRole('table', { name: 'How each sale was split, newest first' });
    // 149.00 less the 10 % platform share leaves 134.10; the affiliate's 20 % is 26.82.
    await expect.poll(() => allocations.getByText('Launch affiliates: $26.82').isVisible()).toBe(true);
    const balances = page.getByRole('table', { name: 'Balances per agreement and currency' });
    await expect.poll(() => balances.getByRole('row', { name: /Launch affiliates.*\$26\.82/ }).first().isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('table', { name: /Destinations \(masked/ }).getByText('p•••@partner.test').isVisible()).toBe(true);
    await expectAccessible(page, 'accounting, payable');
    await screenshot(page, 'console-partner-accounting');

    await page.getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('button', { name: 'Start a sandbox payout run' }).click();
    await expect.poll(() => heading(/^Payout run \d+$/).isVisible()).toBe(true);
    const transfers = page.getByRole('table', { name: 'Transfers: reserved → submitted → paid or failed' });
    await expect.poll(() => transfers.getByText('paid', { exact: true }).isVisible(), { timeout: 60_000 }).toBe(true);
    await expect.poll(() => page.getByText('Every transfer of this run is settled.').isVisible()).toBe(true);
    await expect.poll(() => transfers.getByText('$26.82').isVisible()).toBe(true);
    await expectAccessible(page, 'payout run, paid');
    await screenshot(page, 'console-payout-run');
  });

  it('broke no content policy on any page', () => {
    expect(problems).toEqual([]);
  });
});
