import { randomBytes } from 'node:crypto';
import { createCustomerScope, type CustomerScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { customerPortalUrl } from '../../platform/links/customer-portal-url.js';
import { hashLinkToken, type LinkTokens } from '../../platform/mail/link-tokens.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { CUSTOMER_PORTAL_SIGN_IN_EMAIL, PORTAL_SIGN_IN_TOKEN, PORTAL_SIGN_IN_TTL_MINUTES } from './customer-portal.emails.js';
import { SIGN_IN_REQUEST_JOB } from './customer-portal.jobs.js';
import * as repo from './sessions.repo.js';

/** A buyer's session lasts this long (sign in again after). */
export const CUSTOMER_SESSION_TTL_HOURS = 12;

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
const SIGN_IN_TOKEN = /^pcl_[A-Za-z0-9_-]{43}$/;
const linkRefused = () => new AppError(CommonErrors.UNAUTHENTICATED, 'This sign-in link is unknown, used or expired; ask for a new one');

export interface CustomerSession {
  token: string;
  expiresAt: string;
  customer: { email: string; firstName: string | null; lastName: string | null };
  workspace: { id: number; name: string; slug: string | null; portalUrl: string };
}

/**
 * Buyers' identity, per workspace: an e-mailed sign-in link (single use, 15 minutes; its row keeps
 * the token's hash and the nonce it is derived from, the queued e-mail only the row's id) opens a
 * session (`pcs_…`, hashed at rest, 12 hours). The same address at another workspace is another
 * customer relationship, with its own links and sessions.
 */
export class CustomerSessions {
  constructor(
    private readonly db: Db,
    private readonly publicBaseUrl: string,
    /** Sign-in link tokens; without them (operator tooling) no link can be sent. */
    private readonly tokens?: LinkTokens,
  ) {}

  /**
   * Queues the request and nothing else: the answer, and the work done before it, are the same
   * whether or not the workspace, its portal or the address exist. The job decides.
   */
  async requestLink(workspace: string, email: string): Promise<void> {
    await inTransaction(this.db, (tx) => SIGN_IN_REQUEST_JOB.enqueue(tx, { workspace, email: normaliseEmail(email) }, { workspaceId: null }));
  }

  /** The job: e-mails a link when the workspace's portal is on and the address is an active customer of it. */
  async sendLink({ workspace, email }: { workspace: string; email: string }): Promise<'sent' | 'no-match'> {
    const target = await repo.findWorkspace(this.db, workspace);
    if (!target?.customer_portal_enabled) return 'no-match';
    const customer = await repo.activeCustomerByEmail(this.db, target.id, email);
    if (!customer) return 'no-match';
    if (!this.tokens) throw new Error('Sign-in links need the service’s link tokens');
    // The token is kept nowhere: the e-mail derives it again from the row when it is sent.
    const minted = this.tokens.mint(PORTAL_SIGN_IN_TOKEN);
    await inTransaction(this.db, async (tx) => {
      const expiresAt = new Date(Date.now() + PORTAL_SIGN_IN_TTL_MINUTES * 60_000);
      const signInLinkId = await repo.insertSignInLink(tx, { workspaceId: target.id, customerId: customer.id, tokenHash: minted.hash, tokenNonce: minted.nonce, expiresAt });
      await enqueueEmail(tx, { workspaceId: target.id }, CUSTOMER_PORTAL_SIGN_IN_EMAIL, { signInLinkId });
    });
    return 'sent';
  }

  /** Exchanges a sign-in link's token for a session (the link is used up). */
  async signIn(token: string): Promise<CustomerSession> {
    return inTransaction(this.db, async (tx) => {
      const link = SIGN_IN_TOKEN.test(token) ? await repo.consumeSignInLink(tx, hashLinkToken(token)) : undefined;
      if (!link) throw linkRefused();
      return this.open(tx, link.workspace_id, link.customer_id);
    });
  }

  /** For operators and tests (`patchbay token create --customer`): a session for an active customer of the workspace. */
  async operatorSession(workspace: string, email: string): Promise<CustomerSession | null> {
    const target = await repo.findWorkspace(this.db, workspace);
    if (!target) return null;
    const customer = await repo.activeCustomerByEmail(this.db, target.id, normaliseEmail(email));
    if (!customer) return null;
    return inTransaction(this.db, (tx) => this.open(tx, target.id, customer.id));
  }

  async signOut(customer: CustomerScope): Promise<void> {
    await repo.endSession(this.db, customer.workspaceId, customer.sessionId);
  }

  /** The signed-in buyer, as the session answer shows them (without the token). */
  async current(customer: CustomerScope): Promise<Omit<CustomerSession, 'token'>> {
    const profile = await repo.customerProfile(this.db, customer.workspaceId, customer.customerId);
    if (!profile) throw notFound('Customer');
    return this.describe(customer.workspaceId, profile, customer.expiresAt);
  }

  /** For the policy hook, on every portal request: the buyer's scope, `portal-off`, or null. */
  async verify(token: string): Promise<CustomerScope | 'portal-off' | null> {
    const row = await repo.sessionByHash(this.db, hashLinkToken(token));
    if (!row) return null;
    if (!row.customer_portal_enabled) return 'portal-off';
    return createCustomerScope({
      workspaceId: row.workspace_id,
      customerId: row.customer_id,
      accountId: row.account_id,
      email: row.email,
      sessionId: row.id,
      expiresAt: row.expires_at,
    });
  }

  /** Housekeeping for the job runner. */
  deleteExpired(): Promise<number> {
    return repo.deleteExpired(this.db);
  }

  private async open(tx: Tx, workspaceId: number, customerId: number): Promise<CustomerSession> {
    const profile = await repo.customerProfile(tx, workspaceId, customerId);
    if (!profile || profile.status !== 'active') throw linkRefused();
    if (!profile.customer_portal_enabled) throw new AppError(CommonErrors.NOT_FOUND, 'This workspace has no customer portal');
    const token = `pcs_${randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + CUSTOMER_SESSION_TTL_HOURS * 3_600_000);
    await repo.insertSession(tx, { workspaceId, customerId, tokenHash: hashLinkToken(token), expiresAt });
    return { token, ...this.describe(workspaceId, profile, expiresAt) };
  }

  private describe(workspaceId: number, profile: NonNullable<Awaited<ReturnType<typeof repo.customerProfile>>>, expiresAt: Date): Omit<CustomerSession, 'token'> {
    return {
      expiresAt: expiresAt.toISOString(),
      customer: { email: profile.email, firstName: profile.first_name, lastName: profile.last_name },
      workspace: { id: workspaceId, name: profile.workspace_name, slug: profile.slug, portalUrl: customerPortalUrl(this.publicBaseUrl, { id: workspaceId, slug: profile.slug }) },
    };
  }
}
