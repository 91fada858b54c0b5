import { randomBytes } from 'node:crypto';
import { PERMISSIONS, type Permission } from '../../platform/auth/permissions.js';
import { AuthErrors, scopeOfMember } from '../../platform/auth/policy.js';
import { createDeveloperScope, type DeveloperScope, hasPermission } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { hashLinkToken, type LinkTokens } from '../../platform/mail/link-tokens.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { CONSOLE_SIGN_IN_TOKEN, DEVELOPER_SIGN_IN_EMAIL, SIGN_IN_LINK_TTL_MINUTES } from './accounts.emails.js';
import * as repo from './sessions.repo.js';

/** A console session lasts this long; then the developer signs in again. */
export const DEVELOPER_SESSION_TTL_HOURS = 12;

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
const SIGN_IN_TOKEN = /^dsl_[A-Za-z0-9_-]{43}$/;

export interface OpenedSession {
  token: string;
  expiresAt: Date;
  account: { id: number; email: string };
  workspaces: Array<{ id: number; name: string; owner: boolean }>;
}

/** What the console may show in the selected workspace. */
export interface SelectedWorkspace {
  id: number;
  name: string;
  owner: boolean;
  /** Every catalogue permission the member holds (an owner or `*` holds them all). */
  permissions: Permission[];
  products: 'all' | number[];
}

const refused = () => new AppError(CommonErrors.UNAUTHENTICATED, 'This sign-in link is unknown, used or expired; ask for a new one');

/**
 * The console's passwordless sign-in: an e-mailed link (single use, short-lived; its row keeps
 * the token's hash and the nonce it is derived from, the queued e-mail only the row's id) opens a
 * session (`pds_…`, hashed at rest), separate from JWTs, API tokens and partner sessions.
 */
export class ConsoleSessions {
  constructor(
    private readonly db: Db,
    private readonly tokens: LinkTokens,
  ) {}

  /** Always the same answer: whether the address belongs to a member is never revealed. */
  async requestSignInLink(rawEmail: string): Promise<void> {
    const account = await repo.consoleAccount(this.db, normaliseEmail(rawEmail));
    if (!account) return;
    await inTransaction(this.db, async (tx) => {
      const signInLinkId = await this.mintLink(tx, account.id, 'sign_in', null, SIGN_IN_LINK_TTL_MINUTES * 60_000);
      await enqueueEmail(tx, null, DEVELOPER_SIGN_IN_EMAIL, { signInLinkId });
    });
  }

  /**
   * Stores a new link (its token's hash and nonce) and returns its id; the token itself is derived
   * again when the e-mail is sent. `banner` links are handed out once by the caller instead.
   */
  async mintLink(tx: Executor, accountId: number, purpose: 'sign_in' | 'invitation', workspaceId: number | null, ttlMs: number): Promise<number> {
    const minted = this.tokens.mint(CONSOLE_SIGN_IN_TOKEN);
    return repo.insertSignInLink(tx, { accountId, purpose, workspaceId, tokenHash: minted.hash, tokenNonce: minted.nonce, expiresAt: new Date(Date.now() + ttlMs) });
  }

  /** A link for the start-up banner of the embedded demo: the token is returned once, to be printed. */
  async bannerLink(accountId: number, ttlMs: number): Promise<string> {
    const minted = this.tokens.mint(CONSOLE_SIGN_IN_TOKEN);
    await repo.insertSignInLink(this.db, { accountId, purpose: 'banner', workspaceId: null, tokenHash: minted.hash, tokenNonce: minted.nonce, expiresAt: new Date(Date.now() + ttlMs) });
    return minted.token;
  }

  /** Exchanges a link's token for a session (once: of racing exchanges one wins); signing in verifies the address and joins pending invitations. */
  async signIn(token: string): Promise<OpenedSession> {
    return inTransaction(this.db, async (tx) => {
      const accountId = SIGN_IN_TOKEN.test(token) ? await repo.consumeSignInLink(tx, hashLinkToken(token)) : undefined;
      if (accountId === undefined) throw refused();
      const account = await repo.markSignedIn(tx, accountId);
      const session = `pds_${randomBytes(32).toString('base64url')}`;
      const expiresAt = new Date(Date.now() + DEVELOPER_SESSION_TTL_HOURS * 3_600_000);
      await repo.insertSession(tx, account.id, hashLinkToken(session), expiresAt);
      return { token: session, expiresAt, account, workspaces: await repo.workspacesOf(tx, account.id) };
    });
  }

  async signOut(scope: DeveloperScope): Promise<void> {
    await repo.endSession(this.db, scope.sessionId);
  }

  /** For the policy hook: the scope of a live session, or null. */
  async verify(token: string): Promise<DeveloperScope | null> {
    const row = await repo.sessionByHash(this.db, hashLinkToken(token));
    return row ? createDeveloperScope({ accountId: row.account_id, email: row.email, sessionId: row.id, expiresAt: row.expires_at }) : null;
  }

  /**
   * Who is signed in, their workspaces, and what they hold in the selected one (X-Workspace-Id, or
   * the only workspace of a member of one; none when a member of several picks none).
   */
  async describe(scope: DeveloperScope, picked: number | undefined) {
    const workspaces = await repo.workspacesOf(this.db, scope.accountId);
    const chosen = picked ?? (workspaces.length === 1 ? workspaces[0]!.id : undefined);
    let workspace: SelectedWorkspace | null = null;
    if (chosen !== undefined) {
      const member = await scopeOfMember(this.db, scope.accountId, chosen);
      if (!member) throw new AppError(AuthErrors.WORKSPACE_ACCESS_DENIED, 'The account is not a member of the selected workspace');
      workspace = {
        id: chosen,
        name: workspaces.find((w) => w.id === chosen)!.name,
        owner: member.owner,
        permissions: (Object.keys(PERMISSIONS) as Permission[]).filter((p) => hasPermission(member, p)),
        products: member.products === 'all' ? 'all' : [...member.products].sort((a, b) => a - b),
      };
    }
    return { expiresAt: scope.expiresAt.toISOString(), account: { id: scope.accountId, email: scope.email }, workspaces, workspace };
  }
}
