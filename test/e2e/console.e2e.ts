import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequestLog, signInConsole } from './console-session.js';
import { expectAccessible, linkFromOutbox, openPage, screenshot, seed, type Stack, startStack } from './harness.js';

/**
 * The developer console's own pages in a browser, as a developer uses them: sign-in from the e-mailed
 * link and the workspace picker; customers imported with a row to fix, a large import's progress,
 * search and export; serials generated (a reseller refused), a serial's seat released and the serial
 * revoked; a manual grant clicked twice that grants once; a product-scoped member and an invited
 * teammate who see only their product's rows; API tokens; settings; a cross-origin form refused;
 * sign-out. Steps run in order on one browser and one server.
 */
const suffix = randomUUID().slice(0, 8);
const owner = `owner-${suffix}@acme.test`;
const support = `support-${suffix}@acme.test`;
const teammate = `teammate-${suffix}@acme.test`;
const ann = `ann-${suffix}@buyers.test`;
const bob = `bob-${suffix}@buyers.test`;
const workspaceName = `Acme Audio ${suffix}`;

let stack: Stack;
let page: Page;
let problems: string[];
let requests: Array<{ url: string; referer: string | undefined }>;
let answers: string[];
let ids: { workspace: number; synth: number; reverb: number; serial: number };
let serialCode = '';
let appId = '';
const signInTokens: string[] = [];

const consoleUrl = (path = '') => `${stack.base}/console${path}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
const nav = () => page.getByRole('navigation', { name: 'Main' });
const openSection = async (label: string, title: string | RegExp = label) => {
  await nav().getByRole('link', { name: label, exact: true }).click();
  await expect.poll(() => heading(title).isVisible(), { message: answers.slice(-6).join('\n') }).toBe(true);
};
/** A request the owner's session makes outside the page (its cookie, the workspace it acts in). */
const asOwner = (path: string) => stack.context.request.get(`${stack.base}${path}`, { headers: { 'x-workspace-id': String(ids.workspace) } });

beforeAll(async () => {
  stack = await startStack();
  const fixtures = await seed(stack, {
    workspaces: [
      { key: 'w', name: workspaceName, billingEligible: true, storefrontUrl: 'https://shop.acme.test' },
      { key: 'side', name: `Side Project ${suffix}` },
    ],
    accounts: [
      { key: 'owner', email: owner, emailVerified: true },
      { key: 'support', email: support, emailVerified: true },
    ],
    memberships: [
      { account: 'owner', workspace: 'w', owner: true, permissions: ['*'] },
      { account: 'owner', workspace: 'side', owner: true, permissions: ['*'] },
      { account: 'support', workspace: 'w', permissions: ['customers.view', 'serials.view', 'purchases.view'], products: ['synth'] },
    ],
    products: [
      { key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900, maxActivations: 2 },
      { key: 'reverb', workspace: 'w', name: 'Cathedral Reverb', priceCents: 7900 },
    ],
    resellers: [{ key: 'boutique', workspace: 'w', name: 'Plugin Boutique', kind: 'store' }],
    customers: [
      { key: 'ann', workspace: 'w', email: ann, firstName: 'Ann', lastName: 'Lee', products: ['synth'] },
      { key: 'bob', workspace: 'w', email: bob, firstName: 'Bob', lastName: 'Marsh', products: ['reverb'] },
    ],
    orders: [
      { key: 'o1', workspace: 'w', customer: 'ann', channel: 'managed_checkout', provider: 'card-provider', items: [{ product: 'synth', priceCents: 14900, salePriceCents: 14900, serial: 's1' }] },
      { key: 'o2', workspace: 'w', customer: 'bob', channel: 'external_store', provider: 'gumroad', items: [{ product: 'reverb', priceCents: 7900, salePriceCents: 7900 }] },
    ],
    serials: [{ key: 's1', workspace: 'w', product: 'synth', customer: 'ann', order: 'o1' }],
  });
  ids = {
    workspace: fixtures.ids.workspaces.w!,
    synth: fixtures.ids.products.synth!,
    reverb: fixtures.ids.products.reverb!,
    serial: fixtures.ids.serials.s1!,
  };
  serialCode = fixtures.serialCodes.s1!;
  appId = fixtures.appIds.synth!;
  // Two machines hold seats of Ann's serial, as the plugin activates them.
  for (const machine of ['studio-mac', 'laptop']) {
    const answer = await stack.context.request.post(`${stack.base}/api/licensing/v1/activate`, {
      data: { productAppId: appId, serial: serialCode, machineId: machine, machineName: machine === 'laptop' ? 'Tour laptop' : 'Studio Mac' },
    });
    expect(answer.status(), await answer.text()).toBe(201);
  }
  ({ page, problems, requests, answers } = await openPage(stack));
});

afterAll(async () => {
  await page?.close();
});

describe('the developer console', () => {
  it('signs in from the e-mailed link, without the token in any URL, and asks which workspace to open', async () => {
    await page.goto(consoleUrl('/customers'));
    await expect.poll(() => page.url()).toBe(consoleUrl('/sign-in'));
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in');
    await screenshot(page, 'console-sign-in');
    // The keyboard alone: the address, then Enter.
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type(owner);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByText('Check your inbox').isVisible()).toBe(true);

    const link = await linkFromOutbox(stack, owner, /http\S+\/console\/sign-in#token=\S+/);
    signInTokens.push(new URL(link).hash.slice('#token='.length));
    await page.goto(link);
    // A member of two workspaces picks one; then the page asked for before signing in opens.
    await expect.poll(() => heading('Choose a workspace').isVisible(), { message: answers.slice(-6).join('\n') }).toBe(true);
    expect(page.url()).not.toContain('token');
    await expectAccessible(page, 'workspace picker');
    await page.getByRole('button', { name: `Open ${workspaceName}` }).click();
    await expect.poll(() => heading('Customers').isVisible()).toBe(true);
    expect(page.url()).toBe(consoleUrl('/customers'));
    // The owner sees every section, the outbox of this development server included.
    for (const label of ['Customers', 'Serials', 'Purchases', 'Products', 'Team', 'API tokens', 'Settings', 'Outbox']) {
      await expect.poll(() => nav().getByRole('link', { name: label, exact: true }).isVisible(), { message: label }).toBe(true);
    }
  });

  it('imports customers: the saved rows, and the row to fix as a table', async () => {
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Import customers' });
    const csv = ['email,firstName,lastName,productId,productName,marketingConsent', `cleo-${suffix}@buyers.test,Cleo,Park,${ids.synth},,true`, 'not-an-address,Dan,Ray,,Nebula Synth,', `eve-${suffix}@buyers.test,Eve,Stone,,Cathedral Reverb,false`].join('\n');
    await dialog.locator('input[type=file]').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('button', { name: 'Import the file' }).click();
    await expect.poll(() => dialog.getByText('1 row needs fixing').isVisible(), { message: answers.slice(-4).join('\n') }).toBe(true);
    const errors = dialog.getByRole('table', { name: 'Rows to fix (1)' });
    await expect.poll(() => errors.getByRole('cell', { name: 'INVALID_EMAIL' }).isVisible()).toBe(true);
    await expect.poll(() => errors.getByRole('cell', { name: '2', exact: true }).isVisible()).toBe(true);
    await expectAccessible(page, 'customer import with a row to fix');
    await screenshot(page, 'console-customers-import');
    await dialog.getByRole('button', { name: 'Close' }).click();
    const table = page.getByRole('table', { name: /^Customers/ });
    await expect.poll(() => table.getByText(`cleo-${suffix}@buyers.test`).isVisible()).toBe(true);
    await expect.poll(() => table.getByText(`eve-${suffix}@buyers.test`).isVisible()).toBe(true);
  });

  it('shows a large import’s progress while it runs as a job', async () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => `bulk-${i}-${suffix}@bulk.test,Bulk,Buyer ${i},${ids.reverb},,`);
    const csv = ['email,firstName,lastName,productId,productName,marketingConsent', ...rows].join('\n');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Import customers' });
    await dialog.locator('input[type=file]').setInputFiles({ name: 'bulk.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('button', { name: 'Import the file' }).click();
    await expect.poll(() => dialog.getByRole('progressbar', { name: 'Import progress' }).isVisible()).toBe(true);
    await expect.poll(() => dialog.getByText('Import finished').isVisible(), { timeout: 120_000 }).toBe(true);
    await expect.poll(() => dialog.getByText('12,000 customers imported (12,000 new).').isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('searches and filters customers with the filters in the URL, and exports what matches', async () => {
    await page.getByLabel('Search', { exact: true }).fill(`ann-${suffix}`);
    await expect.poll(() => page.url()).toContain(`search=ann-${suffix}`);
    const table = page.getByRole('table', { name: 'Customers (1)' });
    await expect.poll(() => table.getByText(ann).isVisible()).toBe(true);
    await page.getByLabel('Search', { exact: true }).fill('');
    await expect.poll(() => page.url()).toBe(consoleUrl('/customers'));
    // Typed into the searchable field (which opens its list), as a person picking from many products would.
    await page.getByRole('combobox', { name: 'Product' }).fill('Nebula');
    await page.getByRole('option', { name: 'Nebula Synth' }).click();
    await expect.poll(() => page.url()).toContain(`productId=${ids.synth}`);
    await expect.poll(() => page.getByRole('table', { name: /^Customers/ }).getByText(bob).count()).toBe(0);
    // Ann from the fixtures and Cleo from the import bought Nebula Synth.
    await expect.poll(() => page.getByRole('table', { name: /^Customers/ }).locator('caption').textContent(), { message: page.url() }).toBe('Customers (2)');
    // Each filter is a history entry: back shows every product again, forward the filter.
    const productFilter = page.getByRole('combobox', { name: 'Product' });
    await page.goBack();
    await expect.poll(() => page.url()).toBe(consoleUrl('/customers'));
    await expect.poll(() => productFilter.inputValue()).toBe('All products');
    await page.goForward();
    await expect.poll(() => page.url()).toBe(consoleUrl(`/customers?productId=${ids.synth}`));
    await expect.poll(() => productFilter.inputValue()).toBe('Nebula Synth');
    await expect.poll(() => page.getByRole('table', { name: /^Customers/ }).locator('caption').textContent()).toBe('Customers (2)');
    await expectAccessible(page, 'customers');
    await screenshot(page, 'console-customers');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const text = await fs.readFile(await download.path(), 'utf8');
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    expect(text.split('\n')[0]).toContain('email');
    expect(text).toContain(ann);
    expect(text).not.toContain(bob);
  });

  it('removes a customer only after the confirmation the contract asks for', async () => {
    const cleo = `cleo-${suffix}@buyers.test`;
    const table = page.getByRole('table', { name: /^Customers/ });
    await table.getByRole('button', { name: `Remove ${cleo}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${cleo}` });
    // What goes and what stays is said before anything is sent.
    await expect.poll(() => dialog.getByText(/kept: their account, their purchases and licenses/).isVisible()).toBe(true);
    const confirm = dialog.getByRole('button', { name: 'Remove the customer' });
    await dialog.getByLabel('Type yes to confirm').fill('no');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type yes to confirm').fill('yes');
    await dialog.getByLabel('Reason (optional)').fill('Asked to be forgotten');
    await expectAccessible(page, 'remove a customer');
    await confirm.click();
    await expect.poll(() => table.getByText(cleo).count()).toBe(0);
    await expect.poll(() => table.locator('caption').textContent()).toBe('Customers (1)');
    const listed = await (await asOwner(`/api/developer/customers?search=${encodeURIComponent(cleo)}`)).json();
    expect(listed.total).toBe(0);
  });

  it('generates serials, and refuses a reseller assignment with the contract’s message', async () => {
    await openSection('Serials');
    await page.getByRole('button', { name: 'Generate serials' }).click();
    const dialog = page.getByRole('dialog', { name: 'Generate serials' });
    await dialog.getByRole('combobox', { name: 'Product' }).click();
    await page.getByRole('option', { name: 'Nebula Synth' }).click();
    await dialog.getByLabel('How many').fill('5');
    await dialog.getByLabel('Batch tag').fill(`launch-${suffix}`);
    await dialog.getByRole('combobox', { name: 'Reseller' }).click();
    await page.getByRole('option', { name: 'Plugin Boutique (store)' }).click();
    await expectAccessible(page, 'generate serials');
    await dialog.getByRole('button', { name: 'Generate', exact: true }).click();
    await expect.poll(() => dialog.getByText('Reseller serials are managed in Partners > Licenses', { exact: false }).isVisible()).toBe(true);
    await dialog.getByRole('combobox', { name: 'Reseller' }).click();
    await page.getByRole('option', { name: 'None (your own inventory)' }).click();
    await dialog.getByRole('button', { name: 'Generate', exact: true }).click();
    await expect.poll(() => dialog.getByText('5 new serials of Nebula Synth are available', { exact: false }).isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Available (unassigned)' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Serials (5)' }).isVisible()).toBe(true);
    await expectAccessible(page, 'serials');
    await screenshot(page, 'console-serials');
  });

  it('releases one seat of a serial, then revokes it with the count of deactivated activations, and hides its order', async () => {
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Redeemed (in use)' }).click();
    await page.getByRole('link', { name: `Serial ${serialCode}` }).click();
    await expect.poll(() => heading(serialCode).isVisible()).toBe(true);
    const devices = page.getByRole('table', { name: `Devices of ${serialCode}` });
    await expect.poll(() => devices.getByText('Tour laptop').isVisible()).toBe(true);
    await devices.getByRole('button', { name: 'Release the seat of Tour laptop' }).click();
    const release = page.getByRole('dialog', { name: 'Release the seat of Tour laptop' });
    await release.getByLabel('Reason').fill('Laptop stolen');
    await release.getByRole('button', { name: 'Release the seat' }).click();
    await expect.poll(() => devices.getByText('Tour laptop').count()).toBe(0);

    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    const revoke = page.getByRole('dialog', { name: `Revoke ${serialCode}` });
    await revoke.getByLabel('Reason').fill('Chargeback');
    await revoke.getByLabel('Note (optional)').fill('Bank dispute 4471');
    await expectAccessible(page, 'revoke a serial');
    await revoke.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.getByText('The serial is revoked. 1 activation was deactivated.').isVisible()).toBe(true);
    // Revoked is final: no action brings it back.
    await expect.poll(() => page.getByRole('button', { name: 'Reactivate' }).count()).toBe(0);
    const audit = page.getByRole('table', { name: 'Audit trail, oldest first' });
    await expect.poll(() => audit.getByText('Chargeback').isVisible()).toBe(true);
    await expect.poll(() => audit.getByText('Laptop stolen').isVisible()).toBe(true);

    await page.getByRole('button', { name: 'Hide the order' }).click();
    await page.getByRole('dialog', { name: /Hide the order of/ }).getByRole('button', { name: 'Hide the order' }).click();
    await expect.poll(() => page.getByText('The order is hidden in the customer portal.').isVisible()).toBe(true);
    await expectAccessible(page, 'serial');
    await screenshot(page, 'console-serial');
  });

  it('filters purchases, grants access once for a double click, and exports', async () => {
    await openSection('Purchases');
    const table = page.getByRole('table', { name: /^Purchases/ });
    await expect.poll(() => table.getByText(ann).isVisible()).toBe(true);
    await page.getByRole('combobox', { name: 'Channel' }).click();
    await page.getByRole('option', { name: 'External store' }).click();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.url()).toContain('channel=external_store');
    await expect.poll(() => page.getByRole('table', { name: 'Purchases (1)' }).getByText(bob).isVisible()).toBe(true);
    await expectAccessible(page, 'purchases, filtered');

    const grantee = `gift-${suffix}@buyers.test`;
    await page.getByRole('button', { name: 'Grant access' }).click();
    const dialog = page.getByRole('dialog', { name: 'Grant access' });
    await dialog.getByRole('combobox', { name: 'Products' }).click();
    await page.getByRole('option', { name: 'Cathedral Reverb' }).click();
    await page.keyboard.press('Escape');
    await dialog.getByLabel('Customer e-mail').fill(grantee);
    await dialog.getByLabel('Reason').fill('Giveaway winner');
    await expectAccessible(page, 'grant access');
    await dialog.getByRole('button', { name: 'Grant access' }).dblclick();
    await expect.poll(() => dialog.getByText(`Access granted to ${grantee}`).isVisible(), { message: answers.slice(-4).join('\n') }).toBe(true);
    const granted = await (await asOwner(`/api/developer/purchases?search=${encodeURIComponent(grantee)}`)).json();
    expect(granted.total).toBe(1);
    await dialog.getByRole('button', { name: 'Done' }).click();

    // With a value chosen, the field's pills cover the input: click through them as a pointer would.
    await page.getByRole('combobox', { name: 'Channel' }).click({ force: true });
    await page.getByRole('option', { name: 'Manual grant' }).click();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('table', { name: 'Purchases (2)' }).getByText(grantee).isVisible()).toBe(true);
    await screenshot(page, 'console-purchases');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const text = await fs.readFile(await download.path(), 'utf8');
    expect(text).toContain(grantee);
    expect(text).toContain(bob);
    expect(text).not.toContain(ann);
  });

  it('shows a product-scoped member only their product’s rows and the sections they may open', async () => {
    await signInConsole(stack, support);
    const log = apiRequestLog(page, stack.base);
    await page.goto(consoleUrl('/customers'));
    await expect.poll(() => heading('Customers').isVisible()).toBe(true);
    const table = page.getByRole('table', { name: /^Customers/ });
    await expect.poll(() => table.getByText(ann).isVisible()).toBe(true);
    await expect.poll(() => table.getByText(bob).count()).toBe(0);
    await page.goto(consoleUrl('/purchases'));
    await expect.poll(() => page.getByRole('table', { name: /^Purchases/ }).getByText(ann).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('table', { name: /^Purchases/ }).getByText(bob).count()).toBe(0);
    for (const label of ['Team', 'Products', 'Outbox']) expect(await nav().getByRole('link', { name: label, exact: true }).count(), label).toBe(0);
    await page.goto(consoleUrl('/team'));
    await expect.poll(() => page.getByText('This page is not part of your access').isVisible()).toBe(true);
    expect(log.filter((line) => line.includes('/api/developer/members') || line.includes('/api/developer/outbox'))).toEqual([]);
    await expectAccessible(page, 'a page outside the member’s access');
  });

  it('invites a teammate with one product, who then sees only that product', async () => {
    await signInConsole(stack, owner, 1);
    await page.goto(consoleUrl('/team'));
    await expect.poll(() => heading('Team').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Invite a teammate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite a teammate' });
    await dialog.getByLabel('E-mail address').fill(teammate);
    await dialog.getByRole('checkbox', { name: 'See and export customers' }).check();
    await dialog.getByRole('checkbox', { name: 'See and export purchases' }).check();
    await dialog.getByRole('radio', { name: 'Only these products' }).check();
    await dialog.getByRole('combobox', { name: 'Products' }).click();
    await page.getByRole('option', { name: 'Cathedral Reverb' }).click();
    await page.keyboard.press('Escape');
    await expectAccessible(page, 'invite a teammate');
    await dialog.getByRole('button', { name: 'Send the invitation' }).click();
    const members = page.getByRole('table', { name: /^Members/ });
    await expect.poll(() => members.getByText(teammate).isVisible()).toBe(true);
    await expectAccessible(page, 'team');
    await screenshot(page, 'console-team');

    // The invitation is in the development outbox, with its link.
    await openSection('Outbox');
    await page.getByRole('button', { name: new RegExp(`to ${teammate}`) }).click();
    const invitation = page.getByRole('link', { name: /\/console\/sign-in#token=/ }).first();
    await expect.poll(() => invitation.isVisible()).toBe(true);
    await expectAccessible(page, 'outbox');
    // The same link the e-mail carries: followed from the outbox, it signs this browser in as the teammate.
    const link = await linkFromOutbox(stack, teammate, /http\S+\/console\/sign-in#token=\S+/);
    expect(await invitation.getAttribute('href')).toBe(link);
    signInTokens.push(new URL(link).hash.slice('#token='.length));
    await invitation.click();
    await expect.poll(() => heading(workspaceName).isVisible(), { message: answers.slice(-6).join('\n') }).toBe(true);
    expect(await nav().getByRole('link', { name: 'Serials', exact: true }).count()).toBe(0);
    await openSection('Customers');
    // Bob bought Cathedral Reverb; Ann only Nebula Synth.
    await page.getByLabel('Search', { exact: true }).fill(`-${suffix}@buyers.test`);
    const table = page.getByRole('table', { name: /^Customers/ });
    await expect.poll(() => table.getByText(bob).isVisible()).toBe(true);
    await expect.poll(() => table.getByText(ann).count()).toBe(0);
  });

  it('changes and removes the teammate; the owner stays protected', async () => {
    await signInConsole(stack, owner, 2);
    await page.goto(consoleUrl('/team'));
    const members = page.getByRole('table', { name: /^Members/ });
    await expect.poll(() => members.getByText('Protected').isVisible()).toBe(true);
    await members.getByRole('button', { name: `Change ${teammate}’s access` }).click();
    const change = page.getByRole('dialog', { name: `Change ${teammate}’s access` });
    await change.getByRole('checkbox', { name: 'See and export serials, their devices and audit trail' }).check();
    await change.getByRole('button', { name: 'Save the access' }).click();
    await expect.poll(() => members.getByText(/See and export serials/).isVisible()).toBe(true);
    await members.getByRole('button', { name: `Remove ${teammate}` }).click();
    await page.getByRole('dialog', { name: `Remove ${teammate}` }).getByRole('button', { name: 'Remove the teammate' }).click();
    await expect.poll(() => members.getByText(teammate).count()).toBe(0);
  });

  it('creates an API token shown once, which works until it is revoked', async () => {
    await openSection('API tokens');
    await page.getByRole('button', { name: 'Create a token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API token' });
    await dialog.getByLabel('Name').fill('CI release script');
    await dialog.getByRole('button', { name: 'Create the token' }).click();
    const shown = dialog.getByLabel('API token CI release script');
    await expect.poll(() => shown.isVisible()).toBe(true);
    const token = (await shown.textContent())!.trim();
    expect(token).toMatch(/^pat_/);
    await dialog.getByRole('button', { name: 'Copy the token' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await expectAccessible(page, 'API token shown once');
    await dialog.getByRole('button', { name: 'Done' }).click();

    const withToken = () => stack.context.request.get(`${stack.base}/api/developer/customers?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    // Bearer requests carry no cookie of the browser context: the request API adds cookies, so a fresh context is not needed for a token check.
    expect((await withToken()).status()).toBe(200);
    const tokens = page.getByRole('table', { name: /API tokens/ });
    await expect.poll(() => tokens.getByText('CI release script').isVisible()).toBe(true);
    await screenshot(page, 'console-api-tokens');
    await tokens.getByRole('button', { name: 'Revoke CI release script' }).click();
    await page.getByRole('dialog', { name: 'Revoke CI release script' }).getByRole('button', { name: 'Revoke the token' }).click();
    await expect.poll(() => tokens.getByText('CI release script').count()).toBe(0);
    expect((await withToken()).status()).toBe(401);
  });

  it('changes the workspace settings and shows the buyers’ portal address', async () => {
    await openSection('Settings', 'Workspace settings');
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe(workspaceName);
    await page.getByLabel('Storefront URL').fill('https://plugins.acme.test');
    await page.getByRole('button', { name: 'Save the settings' }).click();
    await expect.poll(() => page.getByText('The workspace settings are saved.').isVisible()).toBe(true);
    const portal = page.getByRole('switch', { name: /Buyers’ portal/ });
    const before = await portal.isChecked();
    await portal.click({ force: true });
    await expect.poll(() => portal.isChecked()).toBe(!before);
    await expect.poll(() => page.getByRole('link', { name: /\/portal\// }).isVisible()).toBe(true);
    await expectAccessible(page, 'settings');
    await screenshot(page, 'console-settings');
  });

  it('refuses a cross-origin form post that carries the console cookie', async () => {
    const form = `<!doctype html><html lang="en"><title>elsewhere</title><body><form method="post" enctype="text/plain"
      action="${stack.base}/api/developer/api-tokens"><input name='{"name":"stolen","x":"' value='"}'><button>Send</button></form></body></html>`;
    const attacker = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(form));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = attacker.address() as import('node:net').AddressInfo;
      await page.goto(`http://127.0.0.1:${port}/`);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/developer/api-tokens')), page.getByRole('button', { name: 'Send' }).click()]);
      expect(answer.status()).toBe(403);
      expect((await answer.json()).code).toBe('CROSS_SITE_REQUEST_REFUSED');
    } finally {
      attacker.close();
    }
    const tokens = await (await asOwner('/api/developer/api-tokens')).json();
    expect(tokens.rows.map((t: { name: string }) => t.name)).not.toContain('stolen');
  });

  it('signs out from the account menu, and the console asks to sign in again', async () => {
    await page.goto(consoleUrl('/'));
    await expect.poll(() => heading(workspaceName).isVisible()).toBe(true);
    await page.getByRole('button', { name: `Account menu of ${owner}` }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(consoleUrl('/sign-in'));
    await page.goto(consoleUrl('/purchases'));
    await expect.poll(() => page.url()).toBe(consoleUrl('/sign-in'));
  });

  it('never put a sign-in token in a request URL, a Referer or the server’s log, and broke no page rule', () => {
    expect(signInTokens.length).toBeGreaterThan(0);
    for (const token of signInTokens) {
      expect(requests.filter((r) => r.url.includes(token) || r.referer?.includes(token))).toEqual([]);
      expect(stack.serverOutput()).not.toContain(token);
    }
    expect(problems).toEqual([]);
  });
});
