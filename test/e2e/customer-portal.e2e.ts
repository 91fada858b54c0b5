import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../client/api-client.js';
import { expectAccessible, linkFromOutbox, openPage, screenshot, seed, type Stack, startStack } from './harness.js';

/**
 * A buyer's visit to a store's portal in the browser, as a person makes it: sign in from the
 * e-mailed link, see the orders (one hidden by the developer and shown again), release a computer
 * and activate the plugin on another through the licensing runtime, activate a studio computer
 * offline with a machine request file, download an installer through its private link, have the
 * keys e-mailed, and meet the release limit. Steps run in order on one browser and one server.
 */
const buyer = 'ann@buyer.test';
const workspace = 'acme-audio';
const installer = randomBytes(64 * 1024);

let stack: Stack;
let page: Page;
let problems: string[];
let requests: Array<{ url: string; referer: string | undefined }>;
let developer: ReturnType<typeof createApiClient>;
let fixtures: Awaited<ReturnType<typeof seed>>;
const secrets: string[] = [];
let workDir: string;

const portal = (p = '') => `${stack.base}/portal/${workspace}${p}`;
const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
const licenseSection = (product: string) => page.getByRole('region', { name: product, exact: true });

/** A dialog once its opening transition is over (axe would read the colours of a half-faded dialog). */
async function openDialog(name: string) {
  const dialog = page.getByRole('dialog', { name });
  await expect.poll(() => dialog.evaluate((el) => getComputedStyle(el).opacity)).toBe('1');
  return dialog;
}

/** The licensing runtime, as a plugin calls it. */
async function runtime(action: 'activate' | 'validate', body: Record<string, unknown>) {
  const answer = await fetch(`${stack.base}/api/licensing/v1/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

const synth = () => ({ productAppId: fixtures.appIds.synth!, serial: fixtures.serialCodes.synthKey! });

async function activateSynth(machineId: string, machineName: string) {
  const answer = await runtime('activate', { ...synth(), machineId, machineName });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
}

beforeAll(async () => {
  stack = await startStack({ STORAGE_DRIVER: 'local' });
  workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'patchbay-portal-e2e-'));
  // Fixed names (the database is this run's own) keep the README's screenshots the same from run to run.
  fixtures = await seed(
    stack,
    {
      workspaces: [{ key: 'w', name: 'Acme Audio', slug: workspace }],
      accounts: [{ key: 'owner', email: `owner-${randomUUID().slice(0, 8)}@acme.test`, emailVerified: true }],
      memberships: [{ account: 'owner', workspace: 'w', owner: true }],
      products: [
        { key: 'synth', workspace: 'w', name: 'Nebula Synth', priceCents: 14900, maxActivations: 2, currentVersion: '2.1.0' },
        { key: 'reverb', workspace: 'w', name: 'Aurora Reverb', priceCents: 4900, maxActivations: 2 },
      ],
      customers: [{ key: 'ann', workspace: 'w', email: buyer, firstName: 'Ann', lastName: 'Lee' }],
      orders: [
        { key: 'first', workspace: 'w', customer: 'ann', purchasedAt: '2026-10-01T12:00:00Z', items: [{ product: 'synth', priceCents: 14900, serial: 'synthKey' }] },
        { key: 'second', workspace: 'w', customer: 'ann', purchasedAt: '2026-11-02T09:30:00Z', items: [{ product: 'reverb', priceCents: 4900, serial: 'reverbKey' }] },
      ],
      serials: [
        { key: 'synthKey', workspace: 'w', product: 'synth', customer: 'ann', order: 'first' },
        { key: 'reverbKey', workspace: 'w', product: 'reverb', customer: 'ann', order: 'second' },
      ],
      tokens: [{ key: 'owner', account: 'owner', workspace: 'w' }],
    },
    { allowDuplicateWorkspaces: true },
  );
  developer = createApiClient(stack.base, fixtures.tokens.owner);

  // The developer's release with its changelog and its installer in private storage.
  const productId = fixtures.ids.products.synth!;
  const version = await developer.POST('/api/developer/products/{productId}/versions', { params: { path: { productId } }, body: { version: '2.1.0', changelog: 'New filter section and 40 presets' } });
  expect(version.response.status).toBe(201);
  const form = new FormData();
  form.append('platform', 'macos');
  form.append('version', '2.1.0');
  form.append('file', new Blob([installer]), 'Nebula-Synth-2.1.0.pkg');
  const uploaded = await fetch(`${stack.base}/api/developer/products/${productId}/files`, { method: 'POST', headers: { authorization: `Bearer ${fixtures.tokens.owner}` }, body: form });
  expect(uploaded.status, await uploaded.clone().text()).toBe(201);

  // Two computers hold the synth's two seats.
  await activateSynth('mac-studio', 'Studio Mac');
  await activateSynth('old-laptop', 'Old laptop');
  ({ page, problems, requests } = await openPage(stack));
});

afterAll(async () => {
  await page?.close();
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
});

describe('the buyers’ portal in a browser', () => {
  it('e-mails a sign-in link from a form used with the keyboard alone', async () => {
    await page.goto(portal('/sign-in'));
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in');
    await screenshot(page, 'portal-sign-in');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.getByLabel('E-mail address').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type(buyer);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Check your inbox' }).isVisible()).toBe(true);
  });

  it('signs in from the e-mailed link, takes the token out of the address bar and shows the store’s name', async () => {
    const link = await linkFromOutbox(stack, buyer, new RegExp(`http\\S+/portal/${workspace}/sign-in#token=\\S+`));
    secrets.push(new URL(link).hash.slice('#token='.length));
    await page.goto(link);
    await expect.poll(() => page.url()).toBe(portal('/licenses'));
    await expect.poll(() => heading('Licenses and devices').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('banner').getByRole('link', { name: 'Acme Audio' }).isVisible()).toBe(true);
    await expect.poll(() => page.title()).toBe('Licenses and devices · Acme Audio');
    const synthLicense = licenseSection('Nebula Synth');
    await expect.poll(() => synthLicense.getByLabel('License key', { exact: true }).inputValue()).toBe(fixtures.serialCodes.synthKey);
    await expect.poll(() => synthLicense.getByRole('cell', { name: 'Old laptop', exact: true }).isVisible()).toBe(true);
    await expectAccessible(page, 'licenses');
    await screenshot(page, 'portal-licenses');
  });

  it('leaves out an order the developer hid, and shows it again after `show`', async () => {
    await nav('Orders').click();
    await expect.poll(() => heading('Orders').isVisible()).toBe(true);
    const orders = page.getByRole('table', { name: /Your orders/ });
    await expect.poll(() => orders.getByText('Aurora Reverb').isVisible()).toBe(true);
    await expect.poll(() => orders.getByText('Nebula Synth').isVisible()).toBe(true);
    await expectAccessible(page, 'orders');
    await screenshot(page, 'portal-orders');
    const reverbOrder = await orders.getByRole('row').filter({ hasText: 'Aurora Reverb' }).getByRole('link').getAttribute('href');
    expect(reverbOrder).toMatch(/\/orders\/\d+$/);

    const serialId = fixtures.ids.serials.reverbKey!;
    const hidden = await developer.POST('/api/developer/serials/{serialId}/customer-portal-order/hide', { params: { path: { serialId } }, body: { reason: 'Duplicate order' } });
    expect(hidden.response.status).toBe(200);
    await page.reload();
    await expect.poll(() => orders.getByText('Nebula Synth').isVisible()).toBe(true);
    expect(await orders.getByText('Aurora Reverb').count()).toBe(0);
    await page.goto(`${stack.base}${reverbOrder}`);
    await expect.poll(() => heading('Order not found').isVisible()).toBe(true);
    await expectAccessible(page, 'hidden order');

    const shown = await developer.POST('/api/developer/serials/{serialId}/customer-portal-order/show', { params: { path: { serialId } }, body: {} });
    expect(shown.response.status).toBe(200);
    await page.reload();
    await expect.poll(() => heading(/^Order \d+$/).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('table', { name: 'Items' }).getByText('Aurora Reverb').isVisible()).toBe(true);
    await expectAccessible(page, 'order');
    await page.getByRole('link', { name: 'All orders' }).click();
    await expect.poll(() => orders.getByText('Aurora Reverb').isVisible()).toBe(true);
  });

  it('releases a computer, and the plugin activates on another through the licensing runtime', async () => {
    // Both seats are taken: a new computer is refused until one is released.
    expect((await runtime('activate', { ...synth(), machineId: 'new-laptop', machineName: 'New laptop' })).body.code).toBe('MACHINE_LIMIT_EXCEEDED');
    await nav('Licenses and devices').click();
    const synthLicense = licenseSection('Nebula Synth');
    await synthLicense.getByRole('button', { name: 'Release Old laptop' }).click();
    const dialog = await openDialog('Release Old laptop?');
    await expectAccessible(page, 'release dialog');
    await dialog.getByRole('button', { name: 'Release the device' }).click();
    await expect.poll(() => synthLicense.getByRole('status').filter({ hasText: 'Old laptop is released' }).isVisible()).toBe(true);
    expect(await synthLicense.getByRole('cell', { name: 'Old laptop', exact: true }).count()).toBe(0);

    expect((await runtime('validate', { ...synth(), machineId: 'old-laptop' })).body).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });
    await activateSynth('new-laptop', 'New laptop');
    await page.reload();
    await expect.poll(() => synthLicense.getByRole('cell', { name: 'New laptop', exact: true }).isVisible()).toBe(true);
    await expect.poll(() => synthLicense.getByText('2 of 2').isVisible()).toBe(true);
  });

  it('refuses the 4th release in 30 days and says when the next one is possible', async () => {
    const synthLicense = licenseSection('Nebula Synth');
    // The 2nd release through the page, the 3rd through the portal's API with the same session.
    await synthLicense.getByRole('button', { name: 'Release New laptop' }).click();
    await (await openDialog('Release New laptop?')).getByRole('button', { name: 'Release the device' }).click();
    await expect.poll(() => synthLicense.getByRole('status').filter({ hasText: 'New laptop is released' }).isVisible()).toBe(true);
    await activateSynth('spare-1', 'Spare 1');
    const seats = (await (await page.request.get(`${stack.base}/api/customer-portal/licenses`)).json()) as { rows: Array<{ serial_id: number; activations: Array<{ id: number; machine_name: string }> }> };
    const serialId = fixtures.ids.serials.synthKey!;
    const spare = seats.rows.find((l) => l.serial_id === serialId)!.activations.find((a) => a.machine_name === 'Spare 1')!;
    expect((await page.request.delete(`${stack.base}/api/customer-portal/licenses/${serialId}/activations/${spare.id}`)).status()).toBe(200);

    await activateSynth('spare-2', 'Spare 2');
    await page.reload();
    await synthLicense.getByRole('button', { name: 'Release Spare 2' }).click();
    const dialog = await openDialog('Release Spare 2?');
    const [refusal] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/activations/')),
      dialog.getByRole('button', { name: 'Release the device' }).click(),
    ]);
    expect(refusal.status()).toBe(429);
    const { code, nextReleaseAt } = (await refusal.json()) as { code: string; nextReleaseAt: string };
    expect(code).toBe('DEVICE_RELEASE_LIMIT');
    const when = await page.evaluate((iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)), nextReleaseAt);
    const alert = dialog.getByRole('alert').filter({ hasText: 'No more releases for now' });
    await expect.poll(() => alert.getByText(`The next release is possible on ${when}.`).isVisible()).toBe(true);
    await expect.poll(() => alert.getByText('A license can release 3 devices in any 30 days, and this one has used them.').isVisible()).toBe(true);
    await expectAccessible(page, 'release refused');
    await screenshot(page, 'portal-release-limit');
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    await expect.poll(() => synthLicense.getByRole('cell', { name: 'Spare 2', exact: true }).isVisible()).toBe(true);
  });

  it('activates a studio computer offline: the machine request in, a license file out that verifies with the product’s key', async () => {
    // The machine request as the plugin package writes it (patchbay-machine-request/1, docs/api/customer-portal.md).
    const request = {
      format: 'patchbay-machine-request/1',
      productAppId: fixtures.appIds.reverb!,
      serial: fixtures.serialCodes.reverbKey!,
      machineId: `studio-b-${randomUUID()}`,
      machineName: 'Studio B',
      nonce: randomBytes(16).toString('base64url'),
    };
    // Named as the packages name it: the file input's filter must offer it.
    const requestFile = path.join(workDir, `machine-request-${request.productAppId}.patchbay-request`);
    await fs.writeFile(requestFile, JSON.stringify(request, null, 2));

    await nav('Offline activation').click();
    await expect.poll(() => heading('Offline activation').isVisible()).toBe(true);
    await expectAccessible(page, 'offline activation');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByLabel('Machine request file').click()]);
    await chooser.setFiles(requestFile);
    await expect.poll(() => page.getByText(`A request from Studio B for the key ${request.serial}.`).isVisible()).toBe(true);
    // The page picked the license the request names.
    await expect.poll(() => page.getByRole('combobox', { name: 'License' }).inputValue()).toBe(`Aurora Reverb · ${request.serial}`);
    await screenshot(page, 'portal-offline-activation');
    await page.getByRole('button', { name: 'Create the license file' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'The license file is ready' }).isVisible()).toBe(true);
    await expectAccessible(page, 'license file ready');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the license file' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.patchbay-license$/);
    const licenseFile = JSON.parse(await fs.readFile((await download.path())!, 'utf8')) as Record<string, string>;
    expect(licenseFile).toMatchObject({ format: 'patchbay-license/1', productAppId: request.productAppId, machineId: request.machineId, nonce: request.nonce });
    // What the plugin does offline: verify the token with the product's published key.
    const keys = await (await fetch(`${stack.base}/api/licensing/v1/keys?productAppId=${request.productAppId}`)).json();
    const { payload } = await jwtVerify(licenseFile.token!, createLocalJWKSet(keys), { issuer: 'patchbay', audience: request.productAppId });
    expect(payload).toMatchObject({ mid: request.machineId, nonce: request.nonce, ser: request.serial });

    expect((await runtime('validate', { productAppId: request.productAppId, serial: request.serial, machineId: request.machineId })).body.valid).toBe(true);
    await nav('Licenses and devices').click();
    await expect.poll(() => licenseSection('Aurora Reverb').getByRole('cell', { name: 'Studio B', exact: true }).isVisible()).toBe(true);
  });

  it('downloads an installer through a private link fetched at once and never shown', async () => {
    await nav('Downloads').click();
    await expect.poll(() => heading('Downloads').isVisible()).toBe(true);
    const files = page.getByRole('table', { name: /Files you can download/ });
    await expect.poll(() => files.getByText('Nebula-Synth-2.1.0.pkg').isVisible()).toBe(true);
    await expect.poll(() => files.getByText('New filter section and 40 presets').isVisible()).toBe(true);
    await expectAccessible(page, 'downloads');
    await screenshot(page, 'portal-downloads');
    const [download] = await Promise.all([page.waitForEvent('download'), files.getByRole('button', { name: 'Download Nebula-Synth-2.1.0.pkg' }).click()]);
    expect(download.suggestedFilename()).toBe('Nebula-Synth-2.1.0.pkg');
    expect(Buffer.compare(await fs.readFile((await download.path())!), installer)).toBe(0);
    // The link was fetched, never put on the page.
    const link = new URL(download.url());
    expect(requests.some((r) => r.url === download.url())).toBe(true);
    expect(await page.content()).not.toContain(link.pathname + link.search);
  });

  it('e-mails the buyer their keys', async () => {
    await nav('Licenses and devices').click();
    await page.getByRole('button', { name: 'E-mail me my license keys' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'on their way' }).isVisible()).toBe(true);
    expect(await linkFromOutbox(stack, buyer, new RegExp(fixtures.serialCodes.reverbKey!))).toBe(fixtures.serialCodes.reverbKey);
  });

  it('works on a phone: navigation behind the menu button, nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(portal('/licenses'));
    await expect.poll(() => heading('Licenses and devices').isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'licenses on a phone');
    await screenshot(page, 'portal-phone');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await nav('Downloads').click();
    await expect.poll(() => heading('Downloads').isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'downloads on a phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs out, and leads a deep link through sign-in back to it when the e-mailed link opens afresh', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(portal('/sign-in'));
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'You are signed out.' }).isVisible()).toBe(true);
    const deep = portal('/downloads?platform=macos');
    await page.goto(deep);
    await expect.poll(() => page.url()).toBe(portal('/sign-in'));
    await page.getByLabel('E-mail address').fill(buyer);
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await expect.poll(() => page.getByText('Check your inbox').isVisible()).toBe(true);
    const link = await linkFromOutbox(stack, buyer, new RegExp(`http\\S+/portal/${workspace}/sign-in#token=\\S+`), 1);
    secrets.push(new URL(link).hash.slice('#token='.length));
    await page.goto('about:blank');
    await page.goto(link);
    await expect.poll(() => page.url()).toBe(deep);
    await expect.poll(() => page.getByRole('combobox', { name: 'Platform' }).inputValue()).toBe('macOS');
  });

  it('never let a sign-in token reach a page URL, a Referer, or a log line; no page broke its content policy', async () => {
    expect(secrets).toHaveLength(2);
    for (const secret of secrets) {
      expect(requests.filter((r) => r.url.includes(secret) || (r.referer ?? '').includes(secret))).toEqual([]);
      expect(stack.serverOutput()).not.toContain(secret);
    }
    expect(requests.filter((r) => r.referer?.startsWith(stack.base))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
