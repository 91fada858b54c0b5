import { randomBytes } from 'node:crypto';
import { createRecipientScope, type RecipientScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { hashLinkToken, type LinkTokens } from '../../platform/mail/link-tokens.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { PARTNER_SIGN_IN_EMAIL, SIGN_IN_LINK_TTL_MINUTES, SIGN_IN_TOKEN } from './recipients.emails.js';
import * as repo from './recipients.repo.js';

export { SIGN_IN_LINK_TTL_MINUTES } from './recipients.emails.js';
/** A partner portal session lasts this long (sign in again after). */
export const RECIPIENT_SESSION_TTL_HOURS = 12;

const hashToken = hashLinkToken;
const newToken = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export interface RecipientSession {
  token: string;
  expiresAt: Date;
  recipient: { id: number; email: string; emailVerified: boolean };
}

/**
 * Recipients: partners outside the developer's team, signed in without passwords. A sign-in link
 * (e-mailed, single use, short-lived; its row keeps the token's hash and the nonce it is derived
 * from, the queued e-mail only the row's id) proves the address and opens a session;
 * sessions are opaque tokens (`pps_…`, hashed at rest), separate from developer JWTs, product keys
 * and invitation tokens.
 */
export class Recipients {
  constructor(
    private readonly db: Db,
    /** Sign-in link tokens; without them (operator tooling) no link can be requested. */
    private readonly tokens?: LinkTokens,
  ) {}

  /** Always the same answer: whether the address is known is never revealed. */
  async requestSignInLink(rawEmail: string): Promise<void> {
    const email = normaliseEmail(rawEmail);
    if (!(await repo.addressIsKnown(this.db, email))) return;
    if (!this.tokens) throw new Error('Sign-in links need the service’s link tokens');
    // The token itself is not kept anywhere: the e-mail derives it again from the row when it is sent.
    const minted = this.tokens.mint(SIGN_IN_TOKEN);
    await inTransaction(this.db, async (tx) => {
      const expiresAt = new Date(Date.now() + SIGN_IN_LINK_TTL_MINUTES * 60_000);
      const signInLinkId = await repo.insertSignInLink(tx, { email, tokenHash: minted.hash, tokenNonce: minted.nonce, expiresAt });
      await enqueueEmail(tx, null, PARTNER_SIGN_IN_EMAIL, { signInLinkId });
    });
  }

  /** Exchanges a sign-in link's token for a session; the address counts as verified from now on. */
  async signIn(token: string): Promise<RecipientSession> {
    return inTransaction(this.db, async (tx) => {
      const email = /^psl_[A-Za-z0-9_-]{43}$/.test(token) ? await repo.consumeSignInLink(tx, hashToken(token)) : undefined;
      if (!email) throw new AppError(CommonErrors.UNAUTHENTICATED, 'This sign-in link is unknown, used or expired; ask for a new one');
      const recipient = await repo.upsertRecipient(tx, email, true);
      if (!recipient.active) throw new AppError(CommonErrors.UNAUTHENTICATED, 'This sign-in link is unknown, used or expired; ask for a new one');
      return this.open(tx, recipient, true);
    });
  }

  /** For operators and tests (`patchbay token create --recipient`): the operator vouches for the address. */
  async operatorSession(rawEmail: string): Promise<RecipientSession> {
    return inTransaction(this.db, async (tx) => this.open(tx, await repo.upsertRecipient(tx, normaliseEmail(rawEmail), true), true));
  }

  async signOut(scope: RecipientScope): Promise<void> {
    await repo.endSession(this.db, scope.sessionId);
  }

  /** For the policy hook: the scope of a live session, or null. */
  async verify(token: string): Promise<RecipientScope | null> {
    const row = await repo.sessionByHash(this.db, hashToken(token));
    return row ? createRecipientScope({ recipientId: row.recipientId, email: row.email, verified: row.verified, sessionId: row.sessionId }) : null;
  }

  private async open(tx: Parameters<typeof repo.insertSession>[0], recipient: repo.RecipientRecord, verified: boolean): Promise<RecipientSession> {
    const token = newToken('pps_');
    const expiresAt = new Date(Date.now() + RECIPIENT_SESSION_TTL_HOURS * 3_600_000);
    await repo.insertSession(tx, recipient.id, hashToken(token), verified, expiresAt);
    return { token, expiresAt, recipient: { id: recipient.id, email: recipient.email, emailVerified: verified || recipient.email_verified_at !== null } };
  }
}
