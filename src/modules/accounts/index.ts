// The accounts module's face: the developer side's identity (console sign-in links and sessions),
// the team (members) and API tokens, and the development outbox. app.ts and server.ts import
// this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { DeveloperCredentials } from '../../platform/auth/policy.js';
import { signInLimits } from '../../platform/auth/sign-in.js';
import type { Db } from '../../platform/db/database.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { LinkTokens } from '../../platform/mail/link-tokens.js';
import { consoleSignInUrl } from './accounts.emails.js';
import { apiTokenRoutes } from './api-tokens.routes.js';
import { ApiTokens } from './api-tokens.service.js';
import { memberRoutes } from './members.routes.js';
import { Members } from './members.service.js';
import { type OutboxRecorder, outboxRoutes } from './outbox.js';
import { deleteExpired } from './sessions.repo.js';
import { sessionRoutes } from './sessions.routes.js';
import { ConsoleSessions, normaliseEmail } from './sessions.service.js';

export { OutboxRecorder } from './outbox.js';

/** Sign-in links one address may ask for per hour, unless configured (DEVELOPER_SIGN_IN_LINKS_PER_HOUR). */
export const DEFAULT_SIGN_IN_LINKS_PER_HOUR = 5;

export interface Accounts {
  sessions: ConsoleSessions;
  tokens: ApiTokens;
  /** What the policy hook resolves console sessions and API tokens with. */
  credentials: DeveloperCredentials;
}

export function createAccounts(db: Db, linkTokens: LinkTokens): Accounts {
  const sessions = new ConsoleSessions(db, linkTokens);
  const tokens = new ApiTokens(db);
  return { sessions, tokens, credentials: { session: (token) => sessions.verify(token), apiToken: (token) => tokens.verify(token) } };
}

export interface AccountsDeps {
  db: Db;
  accounts: Accounts;
  runner: JobRunner;
  linksPerHour?: number | undefined;
  /** The development outbox; without it its route does not exist. */
  outbox?: OutboxRecorder | undefined;
}

export function register(app: FastifyInstance, { db, accounts, runner, linksPerHour = DEFAULT_SIGN_IN_LINKS_PER_HOUR, outbox }: AccountsDeps): void {
  const limits = signInLimits(app, { prefix: 'console', perHour: linksPerHour, address: (req) => normaliseEmail(String((req.body as { email?: unknown } | undefined)?.email ?? '')) });
  registerRoutes(app, sessionRoutes({ sessions: accounts.sessions, linksPerHour, limits }));
  registerRoutes(app, memberRoutes({ members: new Members(db, accounts.sessions) }));
  registerRoutes(app, apiTokenRoutes({ tokens: accounts.tokens }));
  if (outbox) registerRoutes(app, outboxRoutes({ outbox }));
  runner.addMaintenance('console-sign-in', () => deleteExpired(db));
}

/** A one-time console sign-in URL for an account (the embedded demo's start-up banner), valid `ttlMs`. */
export async function bannerSignInUrl(db: Db, encryptionKey: Buffer, input: { accountId: number; publicBaseUrl: string; ttlMs: number }): Promise<string> {
  const sessions = new ConsoleSessions(db, new LinkTokens(encryptionKey));
  return consoleSignInUrl(input.publicBaseUrl, await sessions.bannerLink(input.accountId, input.ttlMs));
}
