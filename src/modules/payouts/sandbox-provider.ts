import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import type { OnboardingStart, PayoutProvider, PayoutProviders, ProviderKind, ProviderTransfer, SubmitTransferInput } from './providers.js';
import { ProviderConfirmJob } from './payouts.jobs.js';
import * as repo from './sandbox.repo.js';

/** A sandbox onboarding link works once, for this long. */
export const SANDBOX_ONBOARDING_TTL_MINUTES = 60;

const TOKEN = /^sbo_[A-Za-z0-9_-]{43}$/;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const random = (bytes: number) => randomBytes(bytes).toString('base64url');

/**
 * The sandbox's test conventions, by the local part of the address a destination was onboarded
 * with, so every outcome can be walked through: `ann+fail@…` onboards an account whose payouts
 * fail; `+timeout` one whose payouts are accepted and paid but whose answer is lost (the
 * submission errs, a lookup finds the payout); `+lost` one whose submissions never arrive (the
 * submission errs, a lookup finds nothing).
 */
const BEHAVIOURS = ['fail', 'timeout', 'lost'] as const;
type Behaviour = (typeof BEHAVIOURS)[number];
const behaviourSuffix = (email: string) => {
  const match = /\+(fail|timeout|lost)@/i.exec(email);
  return match ? `_${match[1]!.toLowerCase()}` : '';
};
const behaviourOf = (accountRef: string): Behaviour | null => BEHAVIOURS.find((b) => accountRef.endsWith(`_${b}`)) ?? null;

/** `ann@example.com` → `a•••@example.com`: enough to recognise one's own address, not to read it off a screen. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${email[0]}•••${email.slice(at)}`;
}

/**
 * The sandbox's side of payouts, as a real provider's API behaves. It keeps the payouts it
 * accepted by idempotency key and commits them in a transaction of its own (never the caller's:
 * a crash of the caller after the sandbox accepted cannot roll the acceptance back). The same
 * key again answers the first answer and pays nothing; the same key with another amount,
 * currency or account is refused, as a real API refuses a reused key. A payout's outcome is
 * decided when it is accepted and reported after commit by a job, as a real provider's webhook
 * would; a lookup tells it at once.
 */
class SandboxPayouts {
  constructor(private readonly db: Db) {}

  async submit(input: SubmitTransferInput): Promise<ProviderTransfer> {
    const behaviour = behaviourOf(input.accountRef);
    if (behaviour === 'lost') throw new Error('sandbox payout provider: the submission never arrived (a "+lost" test destination)');
    const providerReference = `sbx_tr_${createHash('sha256').update(input.idempotencyKey).digest('base64url').slice(0, 24)}`;
    const row = await inTransaction(this.db, async (tx) => {
      const key = { idempotencyKey: input.idempotencyKey, accountRef: input.accountRef, amount: input.amount, currency: input.currency };
      const inserted = await repo.insertSandboxTransfer(tx, { ...key, providerReference, transferId: input.transferId, outcome: behaviour === 'fail' ? 'failed' : 'paid' });
      if (inserted) {
        await ProviderConfirmJob.enqueue(tx, { transferId: input.transferId, providerReference, outcome: inserted.outcome }, { workspaceId: null });
        return { provider_reference: inserted.provider_reference, same: true };
      }
      return repo.earlierSandboxTransfer(tx, key);
    });
    if (!row.same) throw new Error('sandbox payout provider: this idempotency key was used with another amount, currency or account');
    if (behaviour === 'timeout') throw new Error('sandbox payout provider: no answer in time (a "+timeout" test destination; the payout was accepted)');
    return { providerReference: row.provider_reference, status: 'pending' };
  }

  async find(idempotencyKey: string): Promise<ProviderTransfer | null> {
    const row = await repo.sandboxTransferByKey(this.db, idempotencyKey);
    return row ? { providerReference: row.provider_reference, status: row.outcome } : null;
  }
}

/**
 * The sandbox card provider: hosted onboarding is a page of this service
 * (`/api/payouts/sandbox/onboarding/{token}`) that completes onboarding when its button is pressed,
 * so the whole flow can be walked in a browser. Tokens are stored hashed, work once, for an hour.
 */
export class SandboxCardProvider implements PayoutProvider {
  readonly kind = 'card' as const;
  readonly livemode = false;
  private readonly payouts: SandboxPayouts;

  constructor(
    db: Db,
    private readonly publicBaseUrl: string,
  ) {
    this.payouts = new SandboxPayouts(db);
  }

  async startOnboarding(tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart> {
    const existing = input.existingAccountRef ? await this.account(tx, input.existingAccountRef) : undefined;
    const mine = existing && existing.recipient_id === input.recipientId ? existing : undefined;
    if (mine?.onboarded_at) return { accountRef: mine.account_ref, ready: true, url: null, display: display(mine.account_ref), availableAt: mine.onboarded_at };
    const accountRef = mine?.account_ref ?? `sbx_acct_${random(12)}${behaviourSuffix(input.email)}`;
    if (!mine) await repo.insertSandboxAccount(tx, accountRef, input.recipientId);
    return { accountRef, ready: false, url: await this.newLink(tx, accountRef), display: display(accountRef), availableAt: null };
  }

  async refresh(tx: Tx, accountRef: string): Promise<{ ready: boolean; url: string | null }> {
    const account = await this.account(tx, accountRef);
    if (!account) return { ready: false, url: null };
    if (account.onboarded_at) return { ready: true, url: null };
    return { ready: false, url: await this.newLink(tx, accountRef) };
  }

  submitTransfer(input: SubmitTransferInput): Promise<ProviderTransfer> {
    return this.payouts.submit(input);
  }

  findTransfer(idempotencyKey: string): Promise<ProviderTransfer | null> {
    return this.payouts.find(idempotencyKey);
  }

  /** The account an unused, unexpired onboarding token belongs to (for the page), or nothing. */
  async pending(db: Executor, token: string): Promise<{ accountRef: string; recipientId: number; display: string } | null> {
    if (!TOKEN.test(token)) return null;
    const row = await repo.accountOfOnboardingToken(db, hashToken(token));
    return row ? { accountRef: row.account_ref, recipientId: row.recipient_id, display: display(row.account_ref) } : null;
  }

  /** Completes onboarding with a token, once: the first caller gets the account, every later one (or after expiry) nothing. */
  async complete(tx: Tx, token: string): Promise<{ accountRef: string; recipientId: number; onboardedAt: Date } | null> {
    if (!TOKEN.test(token)) return null;
    const row = await repo.completeOnboarding(tx, hashToken(token));
    return row ? { accountRef: row.account_ref, recipientId: row.recipient_id, onboardedAt: row.onboarded_at! } : null;
  }

  private account(db: Executor, accountRef: string) {
    return repo.sandboxAccount(db, accountRef);
  }

  /** A new link replaces the previous one (a link is single use, like a provider's account link). */
  private async newLink(tx: Tx, accountRef: string): Promise<string> {
    const token = `sbo_${random(32)}`;
    await repo.setOnboardingToken(tx, accountRef, hashToken(token), new Date(Date.now() + SANDBOX_ONBOARDING_TTL_MINUTES * 60_000));
    return `${this.publicBaseUrl}/api/payouts/sandbox/onboarding/${token}`;
  }
}

const display = (accountRef: string) => `sandbox card •••• ${accountRef.endsWith('_fail') ? '0002' : '4242'}`;

/** The sandbox wallet provider: the destination is the recipient's verified e-mail, ready at once. */
export class SandboxWalletProvider implements PayoutProvider {
  readonly kind = 'wallet' as const;
  readonly livemode = false;
  private readonly payouts: SandboxPayouts;

  constructor(db: Db) {
    this.payouts = new SandboxPayouts(db);
  }

  async startOnboarding(_tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart> {
    // The same address is the same wallet account, so registering it again changes nothing.
    const accountRef = `sbx_wallet_${createHash('sha256').update(input.email).digest('hex').slice(0, 20)}${behaviourSuffix(input.email)}`;
    return { accountRef, ready: true, url: null, display: maskEmail(input.email), availableAt: new Date() };
  }

  async refresh(): Promise<{ ready: boolean; url: string | null }> {
    return { ready: true, url: null };
  }

  submitTransfer(input: SubmitTransferInput): Promise<ProviderTransfer> {
    return this.payouts.submit(input);
  }

  findTransfer(idempotencyKey: string): Promise<ProviderTransfer | null> {
    return this.payouts.find(idempotencyKey);
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
