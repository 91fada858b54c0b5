import type { Tx } from '../../platform/db/transaction.js';

// The payout providers behind one interface. A provider works inside the caller's transaction:
// whatever it records (its own state, a job that reports back) commits or rolls back with the
// destination change or transfer that asked for it.

export type ProviderKind = 'card' | 'wallet';
export interface OnboardingStart { accountRef: string; ready: boolean; url: string | null; display: string; availableAt: Date | null }
export interface SubmitTransferInput { transferId: number; accountRef: string; amount: bigint; currency: string; idempotencyKey: string }
export interface PayoutProvider {
  readonly kind: ProviderKind;
  readonly livemode: boolean;
  /** Card: creates the hosted-onboarding account and link; wallet: registers the verified e-mail. */
  startOnboarding(tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart>;
  refresh(tx: Tx, accountRef: string): Promise<{ ready: boolean; url: string | null }>;
  /** Submits a payout; the provider confirms later (never synchronously "paid"). */
  submitTransfer(tx: Tx, input: SubmitTransferInput): Promise<{ providerReference: string }>;
}
export interface PayoutProviders { get(kind: ProviderKind, livemode: boolean): PayoutProvider | null }
