import { expect } from 'vitest';
import { linkFromOutbox, type Stack } from './harness.js';

/**
 * Opens a console session in the stack's browser for `email` the way the sign-in page does,
 * without the page: the sign-in link is asked for through the API, taken from the outbox, and
 * exchanged for the session cookie through the browser context (whose cookie jar the pages use).
 * Each call replaces the context's session, so tests switch members in turn. `skip` is how many
 * sign-in e-mails this address received before.
 */
export async function signInConsole(stack: Stack, email: string, skip = 0): Promise<void> {
  const request = stack.context.request;
  const asked = await request.post(`${stack.base}/api/developer/session/link`, { data: { email } });
  expect(asked.status(), await asked.text()).toBe(202);
  const link = await linkFromOutbox(stack, email, /http\S+\/console\/sign-in#token=\S+/, skip);
  const token = new URL(link).hash.slice('#token='.length);
  const opened = await request.post(`${stack.base}/api/developer/session`, { data: { token } });
  expect(opened.status(), await opened.text()).toBe(201);
}

/** The API requests a page made (method and path with query), in order: what a test asserts was, or was not, asked for. */
export function apiRequestLog(page: import('playwright-core').Page, base: string): string[] {
  const log: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (request.url().startsWith(base) && url.pathname.startsWith('/api/')) log.push(`${request.method()} ${url.pathname}${url.search}`);
  });
  return log;
}
