import type { MemoryTransport } from '../../src/platform/mail/transport.js';
import type { TestContext } from '../helpers/app.js';

export const SESSION_COOKIE = 'patchbay_developer_session';

export const askLink = (c: TestContext, email: string, headers: Record<string, string> = {}) =>
  c.app.inject({ method: 'POST', url: '/api/developer/session/link', payload: { email }, headers });

export const exchange = (c: TestContext, token: string, headers: Record<string, string> = {}) =>
  c.app.inject({ method: 'POST', url: '/api/developer/session', payload: { token }, headers });

/** A client address of its own (the test apps trust X-Forwarded-For), so tests do not share the per-client limits. */
export const someClient = () => ({ 'x-forwarded-for': `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 250)).join('.')}` });

/** The token of the newest console link e-mailed to an address, once the e-mail jobs have run. */
export async function linkTokenFor(c: TestContext, transport: MemoryTransport, email: string): Promise<string | undefined> {
  await c.app.jobs.idle();
  const mails = transport.sent.filter((m) => m.to.toLowerCase() === email.toLowerCase());
  return /\/console\/sign-in#token=(dsl_[A-Za-z0-9_-]{43})/.exec(mails.at(-1)?.text ?? '')?.[1];
}

/** Signs an address in through an e-mailed link: the session token (`pds_…`). */
export async function signInAs(c: TestContext, transport: MemoryTransport, email: string, headers: Record<string, string> = someClient()): Promise<string> {
  const asked = await askLink(c, email, headers);
  if (asked.statusCode !== 202) throw new Error(`link: ${asked.statusCode} ${asked.body}`);
  const token = await linkTokenFor(c, transport, email);
  if (!token) throw new Error(`no sign-in e-mail for ${email}`);
  const res = await exchange(c, token, headers);
  if (res.statusCode !== 201) throw new Error(`sign-in: ${res.statusCode} ${res.body}`);
  return res.json().token as string;
}

export const cookie = (session: string) => ({ cookie: `${SESSION_COOKIE}=${session}` });
