import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Page } from 'playwright-core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequestLog, signInConsole } from './console-session.js';
import { expectAccessible, openPage, screenshot, seed, type Stack, startStack } from './harness.js';

/**
 * The developer console's product pages in a browser, as a developer uses them: the catalogue,
 * a new product, a delivery file uploaded with a progress bar and downloaded through its private
 * link, a version, the dashboard, and plugin packages (download, a busy build slot waited out,
 * regenerate after its warning). Then the dashboard as two teammates who each miss one optional
 * permission: the section is absent and its data was never asked for.
 */
const suffix = randomUUID().slice(0, 8);
const owner = `owner-${suffix}@acme.test`;
const noAnalytics = `support-${suffix}@acme.test`;
const noCredentials = `analyst-${suffix}@acme.test`;

let stack: Stack;
let page: Page;
let problems: string[];
let productId: number;

const consoleUrl = (path = '') => `${stack.base}/console${path}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
const section = (name: string | RegExp) => page.getByRole('heading', { level: 2, name });
/** A dialog that has finished fading in (axe would measure the contrast of a half-transparent title). */
const opened = (dialog: ReturnType<Page['getByRole']>) => expect.poll(() => dialog.evaluate((el) => getComputedStyle(el).opacity)).toBe('1');
const sectionLink = (name: string, on: Page = page) => on.getByRole('navigation', { name: 'Product sections' }).getByRole('link', { name, exact: true });

beforeAll(async () => {
  stack = await startStack({ STORAGE_DRIVER: 'local' });
  const fixtures = await seed(stack, {
    workspaces: [{ key: 'w', name: `Acme Audio ${suffix}`, storefrontUrl: 'https://shop.acme.test' }],
    accounts: [
      { key: 'owner', email: owner, emailVerified: true },
      { key: 'support', email: noAnalytics, emailVerified: true },
      { key: 'analyst', email: noCredentials, emailVerified: true },
    ],
    memberships: [
      { account: 'owner', workspace: 'w', owner: true, permissions: ['*'] },
      { account: 'support', workspace: 'w', permissions: ['products.view', 'reviews.view', 'product_files.view', 'credentials.view'], products: 'all' },
      { account: 'analyst', workspace: 'w', permissions: ['products.view', 'analytics.view', 'reviews.view', 'product_files.view'], products: 'all' },
    ],
    products: [{ key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900, currentVersion: '2.1.0' }],
    reviews: [{ product: 'synth', rating: 5, title: 'Lush pads', status: 'published', customerName: 'Ann' }],
    // Sales 2, 20, 60 and 200 days ago (one partly refunded), so each performance range has its own figures.
    customers: [{ key: 'ann', workspace: 'w', email: `ann-${suffix}@buyer.test`, firstName: 'Ann', lastName: 'Lee', products: ['synth'] }],
    orders: [2, 20, 60, 200].map((days, i) => ({
      key: `o${i}`,
      workspace: 'w',
      customer: 'ann',
      reference: `ORD-${suffix}-${i}`,
      purchasedAt: new Date(Date.now() - days * 86_400_000).toISOString(),
      items: [{ product: 'synth', priceCents: 14900, salePriceCents: 14900 - i * 2000, ...(i === 1 ? { refundedCents: 5000 } : {}) }],
    })),
  });
  productId = fixtures.ids.products.synth!;
  ({ page, problems } = await openPage(stack));
  await signInConsole(stack, owner);
});

afterAll(async () => {
  await page?.close();
});

describe('the console’s product pages', () => {
  let newProductId = 0;

  it('lists the catalogue and creates a product from the form', async () => {
    await page.goto(consoleUrl('/products'));
    await expect.poll(() => heading('Products').isVisible()).toBe(true);
    const table = page.getByRole('table', { name: /products/ });
    await expect.poll(() => table.getByRole('link', { name: 'Nebula Synth' }).isVisible()).toBe(true);
    await expectAccessible(page, 'products');
    await screenshot(page, 'console-products');

    await page.getByRole('button', { name: 'New product' }).click();
    const dialog = page.getByRole('dialog', { name: 'New product' });
    await dialog.getByLabel('Name').fill('Aurora Reverb');
    await dialog.getByLabel('Price').fill('49.5');
    await opened(dialog);
    await expectAccessible(page, 'new product');
    await dialog.getByRole('button', { name: 'Create the product' }).click();
    await expect.poll(() => heading('Aurora Reverb').isVisible()).toBe(true);
    newProductId = Number(/\/products\/(\d+)$/.exec(page.url())?.[1]);
    expect(newProductId).toBeGreaterThan(0);

    // Prices travel as integer minor units: 49.5 typed, 4950 stored.
    await sectionLink('Settings').click();
    await expect.poll(() => page.getByLabel('Price').inputValue()).toBe('49.50');
    await page.getByLabel('Activation limit').fill('5');
    await page.getByRole('button', { name: 'Save the product' }).click();
    await expect.poll(() => page.getByText('Aurora Reverb is saved.').isVisible()).toBe(true);
    await expectAccessible(page, 'product settings');
  });

  it('uploads a delivery file with a progress bar and downloads it through its private link', async () => {
    await page.goto(consoleUrl(`/products/${productId}/files`));
    await expect.poll(() => page.getByRole('heading', { name: 'No delivery files yet' }).isVisible()).toBe(true);
    const bytes = randomBytes(3 * 1024 * 1024);
    await page.locator('input[type=file]').setInputFiles({ name: 'NebulaSynth-2.1.0-mac.pkg', mimeType: 'application/octet-stream', buffer: bytes });
    await page.getByRole('region', { name: 'Upload a file' }).getByLabel('Version (optional)').fill('2.1.0');
    // A slow uplink, so the bar is seen moving (the browser's own network emulation).
    const cdp = await stack.context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 1024 * 1024 });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const bar = page.getByRole('progressbar', { name: 'Upload progress' });
    await expect.poll(() => bar.isVisible()).toBe(true);
    await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThan(0);
    await expectAccessible(page, 'files, uploading');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const table = page.getByRole('table', { name: 'Delivery files of Nebula Synth' });
    await expect.poll(() => table.getByText('NebulaSynth-2.1.0-mac.pkg').isVisible(), { timeout: 60_000 }).toBe(true);
    await expect.poll(() => bar.isVisible()).toBe(false);
    await expectAccessible(page, 'files');
    await screenshot(page, 'console-product-files');

    const [download] = await Promise.all([page.waitForEvent('download'), table.getByRole('button', { name: 'Download NebulaSynth-2.1.0-mac.pkg' }).click()]);
    expect(download.suggestedFilename()).toBe('NebulaSynth-2.1.0-mac.pkg');
    const saved = await download.path();
    expect((await fs.readFile(saved)).equals(bytes)).toBe(true);
  });

  it('adds a version with its changelog, current at once', async () => {
    await sectionLink('Versions').click();
    await page.getByRole('button', { name: 'Add a version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a version' });
    await dialog.getByLabel('Version').fill('2.2.0');
    await dialog.getByLabel('Changelog').fill('New wavetables.\nFixed a crash on load.');
    await opened(dialog);
    await expectAccessible(page, 'add a version');
    await dialog.getByRole('button', { name: 'Add the version' }).click();
    const table = page.getByRole('table', { name: /Versions of Nebula Synth/ });
    await expect.poll(() => table.getByRole('row', { name: /2\.2\.0\s*Current/ }).isVisible()).toBe(true);
    await expect.poll(() => dialog.count()).toBe(0);
    await expectAccessible(page, 'versions');
  });

  it('moderates a review: the filter lives in the URL', async () => {
    await sectionLink('Reviews').click();
    const table = page.getByRole('table', { name: /reviews/ });
    await expect.poll(() => table.getByText('Lush pads').isVisible()).toBe(true);
    await expectAccessible(page, 'reviews');
    await table.getByRole('button', { name: 'Hide the review “Lush pads”' }).click();
    await expect.poll(() => table.getByText('hidden', { exact: true }).isVisible()).toBe(true);
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Published' }).click();
    await expect.poll(() => page.url()).toBe(consoleUrl(`/products/${productId}/reviews?status=published`));
    await expect.poll(() => page.getByRole('heading', { name: 'No review has this status' }).isVisible()).toBe(true);
  });

  it('shows the whole dashboard to the owner: KPIs, the performance chart, readiness and activity', async () => {
    await sectionLink('Overview').click();
    await expect.poll(() => section('Performance').isVisible()).toBe(true);
    const ranges = page.getByRole('table', { name: 'Sales per period in USD' });
    // 7 days: the sale of 2 days ago; 30 days: also the one of 20 days ago (129.00, 50.00 refunded).
    await expect.poll(() => ranges.getByRole('row', { name: /Last 7 days\s+1\s+1\s+\$149\.00\s+\$0\.00\s+\$149\.00/ }).isVisible()).toBe(true);
    await expect.poll(() => ranges.getByRole('row', { name: /Last 30 days\s+2\s+2\s+\$278\.00\s+\$50\.00\s+\$228\.00/ }).isVisible()).toBe(true);
    await expect.poll(() => page.locator('dt:text-is("Orders") + dd').textContent()).toBe('4');
    await expect.poll(() => page.locator('.recharts-surface').first().isVisible()).toBe(true);
    await expect.poll(() => section('Recent activity').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('Version 2.2.0 added').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('At least one delivery file: Done').isVisible()).toBe(true);
    await expect.poll(() => section('Credentials and plugin').isVisible()).toBe(true);
    await expectAccessible(page, 'dashboard, owner');
    await screenshot(page, 'console-product-dashboard');
  });

  it('downloads a plugin package, waits out busy build slots on its own, and regenerates only after the warning', async () => {
    await sectionLink('Plugin packages').click();
    await expect.poll(() => section('Variant and settings').isVisible()).toBe(true);
    const download = page.getByRole('button', { name: 'Download the package' });
    await expect.poll(() => download.isDisabled()).toBe(true);
    // The status above loads into place first (the form below would move under the pointer).
    await expect.poll(() => page.getByText('Last plugin connection').isVisible()).toBe(true);
    await page.getByRole('radio', { name: 'Plugin script' }).check();
    await expectAccessible(page, 'packages');
    const [first] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(first.suggestedFilename()).toMatch(/^nebula-synth-pluginscript-live-[0-9a-f]{12}\.zip$/);

    // Every build slot taken for a few seconds (as other builds would): the page says it is busy and retries by itself.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(`INSERT INTO package_build_slots (slot, holder, lease_until) SELECT s, 'e2e', now() + interval '4 seconds' FROM generate_series(1, 2) s
                      ON CONFLICT (slot) DO UPDATE SET holder = 'e2e', lease_until = now() + interval '4 seconds'`);
    } finally {
      await db.end();
    }
    await page.getByLabel('UI width (px)').fill('800');
    const generated = page.waitForEvent('download', { timeout: 60_000 });
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    const busy = page.getByRole('status').filter({ hasText: 'The package builder is busy: retrying' });
    await expect.poll(() => busy.isVisible()).toBe(true);
    await expectAccessible(page, 'packages, busy');
    await screenshot(page, 'console-package-busy');
    expect((await generated).suggestedFilename()).toMatch(/pluginscript-live/);
    await expect.poll(() => busy.isVisible()).toBe(false);

    await page.getByRole('button', { name: 'Regenerate (rotates the key)' }).click();
    const warning = page.getByRole('dialog', { name: 'Regenerate and rotate the product key?' });
    await expect.poll(() => warning.getByText('It stays accepted for 7 days').isVisible()).toBe(true);
    const confirm = warning.getByRole('button', { name: 'Rotate the key and regenerate' });
    expect(await confirm.isDisabled()).toBe(true);
    await opened(warning);
    await expectAccessible(page, 'regenerate warning');
    await screenshot(page, 'console-package-regenerate');
    await warning.getByRole('checkbox', { name: /I understand that the live key rotates, with 7 days/ }).check();
    const [rotated] = await Promise.all([page.waitForEvent('download'), confirm.click()]);
    expect(rotated.suggestedFilename()).toMatch(/pluginscript-live/);
    await expect.poll(() => page.getByText(/The product key is rotated/).isVisible()).toBe(true);
  });

  it('hides the analytics sections from a member without analytics.view, and never asks for them', async () => {
    await signInConsole(stack, noAnalytics);
    const { page: member } = await openPage(stack);
    const log = apiRequestLog(member, stack.base);
    await member.goto(consoleUrl(`/products/${productId}`));
    await expect.poll(() => member.getByRole('heading', { level: 2, name: 'Launch readiness' }).isVisible()).toBe(true);
    await expect.poll(() => member.getByRole('heading', { level: 2, name: 'Credentials and plugin' }).isVisible()).toBe(true);
    expect(await member.getByRole('heading', { level: 2, name: 'Performance' }).count()).toBe(0);
    expect(await member.getByRole('heading', { level: 2, name: 'Recent activity' }).count()).toBe(0);
    // Counts it may not see are a dash, never 0.
    expect(await member.locator('dt:text-is("Customers") + dd').textContent()).toBe('—');
    expect(await member.locator('dt:text-is("Orders") + dd').textContent()).toBe('—');
    await expectAccessible(member, 'dashboard without analytics');
    // One dashboard request, no other product data asked for (no currency switch, no activity, no second look).
    const productCalls = log.filter((line) => line.includes(`/products/${productId}`));
    expect(productCalls.filter((line) => line.includes('/dashboard'))).toHaveLength(1);
    expect(productCalls.filter((line) => !/\/dashboard\?|\/products\/\d+$/.test(line))).toEqual([]);
    await member.close();
  });

  it('hides the credential sections from a member without credentials.view, and never asks for them', async () => {
    await signInConsole(stack, noCredentials);
    const { page: member } = await openPage(stack);
    const log = apiRequestLog(member, stack.base);
    await member.goto(consoleUrl(`/products/${productId}`));
    await expect.poll(() => member.getByRole('heading', { level: 2, name: 'Performance' }).isVisible()).toBe(true);
    expect(await member.getByRole('heading', { level: 2, name: 'Credentials and plugin' }).count()).toBe(0);
    expect(await sectionLink('Credentials', member).count()).toBe(0);
    expect(await member.getByLabel('Environment').count()).toBe(0);
    await expectAccessible(member, 'dashboard without credentials');
    // The plugin packages page asks for the package status, whose credential part the API leaves out for this member.
    await sectionLink('Plugin packages', member).click();
    await expect.poll(() => member.getByRole('heading', { level: 2, name: 'Package status' }).isVisible()).toBe(true);
    expect(log.filter((line) => line.includes('/rest-config'))).toEqual([]);
    expect(log.filter((line) => /\/products\/\d+$/.test(line.split('?')[0]!)).length).toBeGreaterThan(0);
    await member.close();
  });

  it('broke no content policy on any page', () => {
    expect(problems).toEqual([]);
  });
});
