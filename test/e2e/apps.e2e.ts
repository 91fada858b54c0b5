import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, openPage, type Stack, startStack } from './harness.js';

/**
 * The pages around the partner's journey: the console's and the buyers' portal's shells, the
 * partner portal's own answers to a link that does not work, and a URL no page has. Each renders,
 * passes axe, and breaks no content policy.
 */
let stack: Stack;
let page: Page;
let problems: string[];

beforeAll(async () => {
  stack = await startStack();
  ({ page, problems } = await openPage(stack));
});

afterAll(async () => {
  await page?.close();
});

const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

describe('the apps’ shells and their answers to dead ends', () => {
  it('serves the console at /console/, which asks a visitor to sign in', async () => {
    await page.goto(`${stack.base}/console/`);
    await expect.poll(() => page.url()).toBe(`${stack.base}/console/sign-in`);
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
    await expect.poll(() => page.title()).toBe('Sign in · Patchbay console');
    await expectAccessible(page, 'console sign-in');
  });

  it('serves a workspace’s buyers’ portal at /portal/<workspace>/, which asks a visitor to sign in', async () => {
    await page.goto(`${stack.base}/portal/acme-audio/`);
    await expect.poll(() => page.url()).toBe(`${stack.base}/portal/acme-audio/sign-in`);
    await expect.poll(() => heading('Sign in').isVisible()).toBe(true);
    await expectAccessible(page, 'portal sign-in');
    await page.goto(`${stack.base}/portal/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Open your store’s portal link' }).isVisible()).toBe(true);
    await expectAccessible(page, 'portal without a store');
  });

  it('answers a URL no page has with the app’s own not-found page and a way home', async () => {
    await page.goto(`${stack.base}/partner-portal/no/such/page`);
    await expect.poll(() => heading('Page not found').isVisible()).toBe(true);
    await expectAccessible(page, 'partner portal, not found');
    await page.getByRole('link', { name: 'Go to the home page' }).click();
    await expect.poll(() => page.url()).toBe(`${stack.base}/partner-portal/sign-in`);
  });

  it('says what to do with an invitation link that cannot be opened', async () => {
    await page.goto(`${stack.base}/partner-portal/invitations#token=${'x'.repeat(43)}`);
    await expect.poll(() => page.getByRole('heading', { name: 'This invitation cannot be opened' }).isVisible()).toBe(true);
    expect(page.url()).toBe(`${stack.base}/partner-portal/invitations`);
    await expectAccessible(page, 'invitation, unknown');
    await page.goto(`${stack.base}/partner-portal/invitations`);
    await expect.poll(() => page.getByRole('heading', { name: /No invitation opened|This invitation cannot be opened/ }).isVisible()).toBe(true);
  });

  it('shows a used or unknown sign-in link as the API’s problem, next to a way to get a new one', async () => {
    await page.goto(`${stack.base}/partner-portal/sign-in#token=psl_${'x'.repeat(43)}`);
    const alert = page.getByRole('alert').filter({ hasText: 'This sign-in link cannot be used' });
    await expect.poll(() => alert.isVisible()).toBe(true);
    await expect.poll(() => alert.getByText('UNAUTHENTICATED').isVisible()).toBe(true);
    await expect.poll(() => alert.getByText(/Request id/).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'E-mail me a sign-in link' }).isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in, bad link');
  });

  it('shows the field the API refused next to the field', async () => {
    await page.getByLabel('E-mail address').fill('not an address');
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    const field = page.getByLabel('E-mail address');
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    // The API's own words for the field (body/email), under the field it names.
    await expect.poll(() => page.getByText('must match format "email"').isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in, refused address');
  });

  it('broke no content policy and threw no error on any page', () => {
    expect(problems).toEqual([]);
  });
});
