import { createHmac, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../webhooks/receiver.js';
import { signInConsole } from './console-session.js';
import { expectAccessible, openPage, screenshot, seed, type Stack, startStack } from './harness.js';

/**
 * The console's integration pages in a browser, as a developer uses them: a webhook endpoint added
 * (its secret shown once), a test event delivered to a receiver this test runs and verified with the
 * Standard Webhooks library, a failed delivery sent again; a Stripe store connected and a sale it
 * signs booked; a Lemon Squeezy store connected without its product, the sale failing, the mapping
 * fixed and the event re-processed; the refund switch in the settings. axe on every page.
 */
const suffix = randomUUID().slice(0, 8);
const owner = `owner-${suffix}@acme.test`;
const STRIPE_SECRET = 'whsec_e2e_stripe_0123456789abcdef';
const LEMON_SECRET = 'ls-e2e-secret-0123456789';
const LEMON_PRODUCT = '424242';

let stack: Stack;
let page: Page;
let problems: string[];
let answers: string[];
let receiver: Receiver;
let ids: { workspace: number; synth: number };
let webhookSecret = '';

const consoleUrl = (path = '') => `${stack.base}/console${path}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
const nav = () => page.getByRole('navigation', { name: 'Main' });
const last = () => answers.slice(-6).join('\n');
const openSection = async (label: string, title: string | RegExp = label) => {
  await nav().getByRole('link', { name: label, exact: true }).click();
  await expect.poll(() => heading(title).isVisible(), { message: last() }).toBe(true);
};
const asOwner = (path: string) => stack.context.request.get(`${stack.base}${path}`, { headers: { 'x-workspace-id': String(ids.workspace) } });
const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

beforeAll(async () => {
  receiver = await new Receiver().start();
  // The receiver listens on loopback, which only an operator's allow-list opens; a failed attempt waits ten minutes,
  // so the page's "Send again" is what delivers it.
  stack = await startStack({ WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE_SECONDS: '600' });
  const fixtures = await seed(stack, {
    workspaces: [{ key: 'w', name: `Acme Audio ${suffix}` }],
    accounts: [{ key: 'owner', email: owner, emailVerified: true }],
    memberships: [{ account: 'owner', workspace: 'w', owner: true, permissions: ['*'] }],
    products: [{ key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900 }],
  });
  ids = { workspace: fixtures.ids.workspaces.w!, synth: fixtures.ids.products.synth! };
  await signInConsole(stack, owner);
  ({ page, problems, answers } = await openPage(stack));
});

afterAll(async () => {
  await page?.close();
  await receiver?.stop();
});

describe('the console’s webhooks page', () => {
  it('adds an endpoint and shows its secret once', async () => {
    await page.goto(consoleUrl('/'));
    await expect.poll(() => nav().isVisible(), { message: last() }).toBe(true);
    await openSection('Webhooks');
    await expect.poll(() => page.getByText('No webhook endpoints').isVisible()).toBe(true);
    await expectAccessible(page, 'webhooks, none yet');
    await page.getByRole('button', { name: 'Add an endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('URL', { exact: false }).first().fill(receiver.url('/hooks'));
    await dialog.getByLabel('Description').fill('CRM');
    // Neither every event nor one picked: the form says so before asking the API.
    await dialog.getByRole('button', { name: 'Add the endpoint' }).click();
    await expect.poll(() => dialog.getByText('Pick at least one event, or every event').isVisible()).toBe(true);
    await dialog.getByLabel('Every event, including types added later').check();
    await expectAccessible(page, 'add a webhook endpoint');
    await dialog.getByRole('button', { name: 'Add the endpoint' }).click();
    const secret = dialog.getByLabel('Signing secret', { exact: true });
    await expect.poll(() => secret.isVisible(), { message: last() }).toBe(true);
    webhookSecret = (await secret.textContent())!.trim();
    expect(webhookSecret).toMatch(/^whsec_/);
    await dialog.getByRole('button', { name: 'Copy the secret' }).click();
    await expect.poll(clipboard).toBe(webhookSecret);
    await expectAccessible(page, 'webhook secret shown once');
    await screenshot(page, 'console-webhook-secret');
    await dialog.getByRole('button', { name: 'Done' }).click();
    // The list has it; the API never answers the secret again.
    const table = page.getByRole('table', { name: 'Webhook endpoints' });
    await expect.poll(() => table.getByRole('link', { name: receiver.url('/hooks') }).isVisible()).toBe(true);
    const listed = await asOwner('/api/developer/webhooks/endpoints');
    expect(await listed.text()).not.toContain(webhookSecret);
    receiver.secrets = [webhookSecret];
  });

  it('sends a test event that the receiver verifies, and the delivery shows it succeeded', async () => {
    await page.getByRole('link', { name: receiver.url('/hooks') }).click();
    await expect.poll(() => heading('CRM').isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => page.getByText('No deliveries yet').isVisible()).toBe(true);
    await expectAccessible(page, 'webhook endpoint, no deliveries');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await receiver.until((r) => r.some((x) => x.event?.type === 'webhook.test'));
    const first = receiver.events('webhook.test')[0]!;
    expect(receiver.received[0]!.verifiedWith).toEqual([0]);
    const table = page.getByRole('table', { name: /^Deliveries to/ });
    const row = table.getByRole('row').filter({ hasText: first.id });
    // The page follows a delivery in flight until it settles.
    await expect.poll(() => row.getByText('succeeded').isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => row.getByText(/HTTP 200 in \d+ ms/).isVisible()).toBe(true);
    await expectAccessible(page, 'webhook deliveries');
    await screenshot(page, 'console-webhook-deliveries');
  });

  it('sends a failed delivery again from its row, with the same event id', async () => {
    // The receiver refuses the next request once.
    const before = receiver.received.length;
    receiver.behaviour = (n) => (n === before + 1 ? { status: 503, body: 'down for maintenance' } : 200);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await receiver.until((r) => r.length === before + 1);
    const failedId = receiver.received[before]!.event!.id;
    const row = page.getByRole('table', { name: /^Deliveries to/ }).getByRole('row').filter({ hasText: failedId });
    await expect.poll(() => row.getByText('retrying').isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => row.getByText('HTTP 503', { exact: false }).isVisible()).toBe(true);
    await expect.poll(() => row.getByText('down for maintenance').isVisible()).toBe(true);
    // The status filter lives in the URL.
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Retrying' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('retrying');
    await expect.poll(() => page.getByRole('table', { name: /^Deliveries to/ }).getByRole('row').count()).toBe(2);
    await page.getByRole('button', { name: `Send webhook.test ${failedId} again` }).click();
    await receiver.until((r) => r.length === before + 2);
    expect(receiver.received[before + 1]!.event!.id).toBe(failedId);
    expect(receiver.received[before + 1]!.verifiedWith).toEqual([0]);
    await page.goBack();
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe(null);
    const again = page.getByRole('table', { name: /^Deliveries to/ }).getByRole('row').filter({ hasText: failedId });
    await expect.poll(() => again.getByText('succeeded').first().isVisible(), { message: last() }).toBe(true);
  });
});

describe('the console’s checkout connections page', () => {
  it('connects a Stripe store and books a sale Stripe signs', async () => {
    await openSection('Checkout connections');
    await expectAccessible(page, 'checkout connections, none yet');
    await page.getByRole('button', { name: 'Connect a store' }).click();
    const dialog = page.getByRole('dialog', { name: 'Connect a store' });
    await dialog.getByLabel('Signing secret', { exact: false }).fill(STRIPE_SECRET);
    await expectAccessible(page, 'connect a store');
    await dialog.getByRole('button', { name: 'Connect the store' }).click();
    const url = dialog.getByLabel('Webhook URL', { exact: true });
    await expect.poll(() => url.isVisible(), { message: last() }).toBe(true);
    await dialog.getByRole('button', { name: 'Copy the webhook URL' }).click();
    const webhookUrl = await clipboard();
    expect(webhookUrl).toMatch(/\/api\/checkout\/stripe\/\d+\/events$/);
    await dialog.getByRole('link', { name: 'Open the connection' }).click();
    await expect.poll(() => heading(/^Stripe connection \d+$/).isVisible(), { message: last() }).toBe(true);

    // A Checkout Session naming the product in its metadata, signed by Stripe's own library.
    const created = Math.floor(Date.now() / 1000);
    const payload = JSON.stringify({
      id: `evt_e2e_${suffix}`,
      object: 'event',
      api_version: '2025-09-30.clover',
      created,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'checkout.session.completed',
      data: {
        object: {
          id: `cs_test_e2e_${suffix}`,
          object: 'checkout.session',
          amount_subtotal: 14900,
          amount_total: 14900,
          client_reference_id: null,
          created,
          currency: 'usd',
          customer: null,
          customer_details: { email: `jenny-${suffix}@buyers.test`, name: 'Jenny Rosen', tax_exempt: 'none', tax_ids: [] },
          customer_email: null,
          livemode: false,
          metadata: { patchbay_product_id: String(ids.synth) },
          mode: 'payment',
          payment_intent: `pi_e2e_${suffix}`,
          payment_status: 'paid',
          status: 'complete',
          total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
        },
      },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
    const answer = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(((await answer.json()) as { outcome: string }).outcome).toBe('recorded');
    await page.reload();
    const row = page.getByRole('table', { name: /^Events received/ }).getByRole('row').filter({ hasText: `evt_e2e_${suffix}` });
    await expect.poll(() => row.getByText('recorded').first().isVisible(), { message: last() }).toBe(true);
    await expectAccessible(page, 'a Stripe connection with its event log');
  });

  it('connects Lemon Squeezy without the product: the sale fails, the mapping is fixed, the event re-processed', async () => {
    await openSection('Checkout connections');
    await page.getByRole('button', { name: 'Connect a store' }).click();
    const dialog = page.getByRole('dialog', { name: 'Connect a store' });
    await dialog.getByRole('combobox', { name: 'Provider' }).click();
    await page.getByRole('option', { name: 'Lemon Squeezy' }).click();
    await dialog.getByLabel('Signing secret', { exact: false }).fill(LEMON_SECRET);
    await dialog.getByRole('button', { name: 'Connect the store' }).click();
    await expect.poll(() => dialog.getByLabel('Webhook URL', { exact: true }).isVisible(), { message: last() }).toBe(true);
    const webhookUrl = (await dialog.getByLabel('Webhook URL', { exact: true }).textContent())!.trim();
    expect(webhookUrl).toMatch(/\/api\/checkout\/lemonsqueezy\/\d+\/events$/);
    await dialog.getByRole('link', { name: 'Open the connection' }).click();
    await expect.poll(() => heading(/^Lemon Squeezy connection \d+$/).isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => page.getByText('No product is mapped').isVisible()).toBe(true);

    // An order of Lemon Squeezy product 424242, signed as its documentation specifies.
    const at = new Date().toISOString();
    const body = JSON.stringify({
      meta: { event_name: 'order_created', custom_data: null, test_mode: true, webhook_id: randomUUID() },
      data: {
        type: 'orders',
        id: `77${suffix.replace(/\D/g, '').slice(0, 6) || '1'}`,
        attributes: {
          store_id: 1,
          customer_id: 1,
          identifier: randomUUID(),
          order_number: 1,
          user_name: 'Darlene Daugherty',
          user_email: `darlene-${suffix}@buyers.test`,
          currency: 'USD',
          currency_rate: '1.0000',
          subtotal: 999,
          setup_fee: 0,
          discount_total: 0,
          tax: 0,
          total: 999,
          status: 'paid',
          refunded: false,
          refunded_at: null,
          refunded_amount: 0,
          first_order_item: { id: 1, order_id: 1, product_id: Number(LEMON_PRODUCT), variant_id: 4242420, product_name: 'Nebula Synth', variant_name: 'Default', price: 999, quantity: 1, created_at: at, updated_at: at, test_mode: true },
          created_at: at,
          updated_at: at,
          test_mode: true,
        },
      },
    });
    const answer = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': createHmac('sha256', LEMON_SECRET).update(body).digest('hex') },
      body,
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(((await answer.json()) as { outcome: string }).outcome).toBe('failed');

    await page.reload();
    const events = () => page.getByRole('table', { name: /^Events received/ });
    await expect.poll(() => events().getByText('failed').first().isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => events().getByText(LEMON_PRODUCT, { exact: false }).first().isVisible()).toBe(true);
    await expectAccessible(page, 'a failed checkout event');
    await screenshot(page, 'console-checkout-failed-event');

    // The mapping, fixed on the page.
    await page.getByRole('button', { name: 'Change the mapping' }).click();
    const mapping = page.getByRole('dialog', { name: 'Change the product mapping' });
    await mapping.getByLabel('Lemon Squeezy product 1').fill(LEMON_PRODUCT);
    await mapping.getByRole('combobox', { name: 'Patchbay product 1' }).click();
    await page.getByRole('option', { name: 'Nebula Synth' }).click();
    await expectAccessible(page, 'product mapping');
    await mapping.getByRole('button', { name: 'Save the mapping' }).click();
    await expect.poll(() => page.getByRole('term').filter({ hasText: LEMON_PRODUCT }).isVisible(), { message: last() }).toBe(true);

    await events().getByRole('button', { name: /^Re-process order_created/ }).click();
    await expect.poll(() => events().getByText('recorded').first().isVisible(), { message: last() }).toBe(true);
    await expect.poll(() => events().getByRole('button', { name: /^Re-process/ }).count()).toBe(0);
    // The sale is booked: an order item of the mapped product.
    const connectionId = /\/lemonsqueezy\/(\d+)\/events$/.exec(webhookUrl)![1];
    const log = (await (await asOwner(`/api/developer/checkout-connections/${connectionId}/events`)).json()) as { rows: Array<{ outcome: string; order_item_ids: number[] }> };
    expect(log.rows.map((r) => [r.outcome, r.order_item_ids.length])).toEqual([['recorded', 1]]);
  });
});

describe('the refund switch in the settings', () => {
  it('keeps serials active after a full refund when switched on', async () => {
    await openSection('Settings', 'Workspace settings');
    const toggle = page.getByRole('switch', { name: 'Keep serials active after a full refund' });
    await expect.poll(() => toggle.isChecked()).toBe(false);
    await toggle.click({ force: true });
    await expect.poll(() => page.getByText('Refunded serials stay active.').isVisible(), { message: last() }).toBe(true);
    const workspace = (await (await asOwner('/api/developer/workspace')).json()) as { keep_serials_on_refund: boolean };
    expect(workspace.keep_serials_on_refund).toBe(true);
    await expectAccessible(page, 'settings with the refund switch');
  });

  it('saw no page error or CSP violation', () => {
    expect(problems).toEqual([]);
  });
});
