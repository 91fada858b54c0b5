import { createHash, randomBytes } from 'node:crypto';
import { type ColumnType, sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import { enqueueJobs } from '../../platform/jobs/jobs.repo.js';
import { jobQueueName } from '../../platform/jobs/queue.js';
import type { OnboardingStart, PayoutProvider, PayoutProviders, ProviderKind, SubmitTransferInput } from './providers.js';

/** The job a provider's confirmation arrives as (the transfers module handles it). */
export const PROVIDER_CONFIRM_JOB = 'payouts.provider-confirm';
/** A sandbox onboarding link works once, for this long. */
export const SANDBOX_ONBOARDING_TTL_MINUTES = 60;

export interface ProviderConfirmPayload {
  transferId: number;
  providerReference: string;
  outcome: 'paid' | 'failed';
}

export interface PayoutSandboxAccountsTable {
  account_ref: string;
  recipient_id: number;
  onboarding_token_hash: string | null;
  onboarding_expires_at: Date | null;
  onboarded_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    payout_sandbox_accounts: PayoutSandboxAccountsTable;
  }
}

const TOKEN = /^sbo_[A-Za-z0-9_-]{43}$/;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const random = (bytes: number) => randomBytes(bytes).toString('base64url');

/**
 * The sandbox's test convention: an address whose local part ends in `+fail` (ann+fail@example.com)
 * onboards an account whose transfers fail, so both outcomes can be walked through.
 */
const failSuffix = (email: string) => (/\+fail@/i.test(email) ? '_fail' : '');

/** `ann@example.com` → `a•••@example.com`: enough to recognise one's own address, not to read it off a screen. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${email[0]}•••${email.slice(at)}`;
}

/**
 * Sandbox transfers are never paid on the spot: a job reports the outcome after commit, as a real
 * provider's webhook would. The reference is derived from the idempotency key, and a second
 * submission with the same key finds the job already queued, so a retried submission confirms once.
 */
async function submitSandboxTransfer(tx: Tx, input: SubmitTransferInput): Promise<{ providerReference: string }> {
  const providerReference = `sbx_tr_${createHash('sha256').update(input.idempotencyKey).digest('base64url').slice(0, 24)}`;
  const queued = await sql<{ one: number }>`
    select 1 as one from jobs
    where queue = ${jobQueueName()} and kind = ${PROVIDER_CONFIRM_JOB} and payload->>'providerReference' = ${providerReference}
    limit 1`.execute(tx);
  if (queued.rows.length === 0) {
    const payload: ProviderConfirmPayload = { transferId: input.transferId, providerReference, outcome: input.accountRef.endsWith('_fail') ? 'failed' : 'paid' };
    await enqueueJobs(tx, [{ kind: PROVIDER_CONFIRM_JOB, workspaceId: null, payload: { ...payload } }]);
  }
  return { providerReference };
}

/**
 * The sandbox card provider: hosted onboarding is a page of this service
 * (`/api/payouts/sandbox/onboarding/{token}`) that completes onboarding when its button is pressed,
 * so the whole flow can be walked in a browser. Tokens are stored hashed, work once, for an hour.
 */
export class SandboxCardProvider implements PayoutProvider {
  readonly kind = 'card' as const;
  readonly livemode = false;

  constructor(private readonly publicBaseUrl: string) {}

  async startOnboarding(tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart> {
    const existing = input.existingAccountRef ? await this.account(tx, input.existingAccountRef) : undefined;
    const mine = existing && existing.recipient_id === input.recipientId ? existing : undefined;
    if (mine?.onboarded_at) return { accountRef: mine.account_ref, ready: true, url: null, display: display(mine.account_ref), availableAt: mine.onboarded_at };
    const accountRef = mine?.account_ref ?? `sbx_acct_${random(12)}${failSuffix(input.email)}`;
    if (!mine) await tx.insertInto('payout_sandbox_accounts').values({ account_ref: accountRef, recipient_id: input.recipientId }).execute();
    return { accountRef, ready: false, url: await this.newLink(tx, accountRef), display: display(accountRef), availableAt: null };
  }

  async refresh(tx: Tx, accountRef: string): Promise<{ ready: boolean; url: string | null }> {
    const account = await this.account(tx, accountRef);
    if (!account) return { ready: false, url: null };
    if (account.onboarded_at) return { ready: true, url: null };
    return { ready: false, url: await this.newLink(tx, accountRef) };
  }

  submitTransfer(tx: Tx, input: SubmitTransferInput): Promise<{ providerReference: string }> {
    return submitSandboxTransfer(tx, input);
  }

  /** The account an unused, unexpired onboarding token belongs to (for the page), or nothing. */
  async pending(db: Executor, token: string): Promise<{ accountRef: string; recipientId: number; display: string } | null> {
    if (!TOKEN.test(token)) return null;
    const row = await db
      .selectFrom('payout_sandbox_accounts')
      .where('onboarding_token_hash', '=', hashToken(token))
      .where('onboarding_expires_at', '>', new Date())
      .where('onboarded_at', 'is', null)
      .select(['account_ref', 'recipient_id'])
      .executeTakeFirst();
    return row ? { accountRef: row.account_ref, recipientId: row.recipient_id, display: display(row.account_ref) } : null;
  }

  /** Completes onboarding with a token, once: the first caller gets the account, every later one (or after expiry) nothing. */
  async complete(tx: Tx, token: string): Promise<{ accountRef: string; recipientId: number; onboardedAt: Date } | null> {
    if (!TOKEN.test(token)) return null;
    const row = await tx
      .updateTable('payout_sandbox_accounts')
      .set({ onboarded_at: new Date(), onboarding_token_hash: null, onboarding_expires_at: null })
      .where('onboarding_token_hash', '=', hashToken(token))
      .where('onboarding_expires_at', '>', new Date())
      .where('onboarded_at', 'is', null)
      .returning(['account_ref', 'recipient_id', 'onboarded_at'])
      .executeTakeFirst();
    return row ? { accountRef: row.account_ref, recipientId: row.recipient_id, onboardedAt: row.onboarded_at! } : null;
  }

  private account(db: Executor, accountRef: string) {
    return db.selectFrom('payout_sandbox_accounts').where('account_ref', '=', accountRef).selectAll().executeTakeFirst();
  }

  /** A new link replaces the previous one (a link is single use, like a provider's account link). */
  private async newLink(tx: Tx, accountRef: string): Promise<string> {
    const token = `sbo_${random(32)}`;
    await tx
      .updateTable('payout_sandbox_accounts')
      .set({ onboarding_token_hash: hashToken(token), onboarding_expires_at: new Date(Date.now() + SANDBOX_ONBOARDING_TTL_MINUTES * 60_000) })
      .where('account_ref', '=', accountRef)
      .execute();
    return `${this.publicBaseUrl}/api/payouts/sandbox/onboarding/${token}`;
  }
}

const display = (accountRef: string) => `sandbox card •••• ${accountRef.endsWith('_fail') ? '0002' : '4242'}`;

/** The sandbox wallet provider: the destination is the recipient's verified e-mail, ready at once. */
export class SandboxWalletProvider implements PayoutProvider {
  readonly kind = 'wallet' as const;
  readonly livemode = false;

  async startOnboarding(_tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart> {
    // The same address is the same wallet account, so registering it again changes nothing.
    const accountRef = `sbx_wallet_${createHash('sha256').update(input.email).digest('hex').slice(0, 20)}${failSuffix(input.email)}`;
    return { accountRef, ready: true, url: null, display: maskEmail(input.email), availableAt: new Date() };
  }

  async refresh(): Promise<{ ready: boolean; url: string | null }> {
    return { ready: true, url: null };
  }

  submitTransfer(tx: Tx, input: SubmitTransferInput): Promise<{ providerReference: string }> {
    return submitSandboxTransfer(tx, input);
  }
}

/**
 * The providers of an app: the configured ones first, then the built-in sandbox for test mode.
 * Live mode has no default: without a configured provider it has none (routes answer 503).
 */
export function payoutProviders(sandbox: { card: SandboxCardProvider; wallet: SandboxWalletProvider }, configured?: PayoutProviders): PayoutProviders {
  return {
    get(kind: ProviderKind, livemode: boolean) {
      return configured?.get(kind, livemode) ?? (livemode ? null : sandbox[kind]);
    },
  };
}
