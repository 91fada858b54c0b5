import { expect } from 'vitest';
import { CustomerSessions } from '../../src/modules/customer-portal/index.js';
import type { MemoryTransport } from '../../src/platform/mail/transport.js';
import { bearer, type TestContext } from '../helpers/app.js';

// What the customer portal tests share: a buyer's session opened as an operator would, and the
// sign-in link flow through the real e-mail.

export const PORTAL = '/api/customer-portal';

/** A session of an active customer of the workspace (by id or slug), as `token create --customer` opens it. */
export async function buyerToken(c: TestContext, workspace: number | string, email: string): Promise<string> {
  const session = await new CustomerSessions(c.database.db, 'http://patchbay.test').operatorSession(String(workspace), email);
  expect(session, `no active customer ${email} in ${workspace}`).not.toBeNull();
  return session!.token;
}

export const askLink = (c: TestContext, workspace: string | number, email: string, headers: Record<string, string> = {}) =>
  c.app.inject({ method: 'POST', url: `${PORTAL}/session/link`, headers, payload: { workspace: String(workspace), email } });

export const signIn = (c: TestContext, token: string) => c.app.inject({ method: 'POST', url: `${PORTAL}/session`, payload: { token } });

/** The newest sign-in link e-mailed to `email`, once the request job and the e-mail job have run. */
export async function emailedLink(c: TestContext, transport: MemoryTransport, email: string) {
  await c.app.jobs.idle();
  await c.app.jobs.idle();
  const mail = transport.sent.filter((m) => m.to === email).at(-1);
  const match = mail ? /(https?:\/\/\S+\/portal\/([^/\s]+)\/sign-in)#token=(pcl_[A-Za-z0-9_-]{43})/.exec(mail.text) : null;
  return match ? { mail: mail!, url: match[1]!, workspace: match[2]!, token: match[3]! } : undefined;
}

export const get = (c: TestContext, token: string, path: string) => c.app.inject({ method: 'GET', url: `${PORTAL}${path}`, headers: bearer(token) });
