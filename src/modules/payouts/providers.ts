import type { Tx } from '../../platform/db/transaction.js';

// The payout providers behind one interface. Onboarding works inside the caller's transaction:
// whatever the provider records commits or rolls back with the destination change that asked
// for it. Submitting money does not: a provider is a remote service whose acceptance no
// rollback of ours can undo, so a transfer is submitted outside any transaction, with an
// idempotency key that makes a repeated submission return the first answer and pay nothing twice.

export type ProviderKind = 'card' | 'wallet';
export interface OnboardingStart { accountRef: string; ready: boolean; url: string | null; display: string; availableAt: Date | null }
export interface SubmitTransferInput { transferId: number; accountRef: string; amount: bigint; currency: string; idempotencyKey: string }
/** The provider's record of a payout: accepted and on its way (`pending`), or settled. */
export interface ProviderTransfer { providerReference: string; status: 'pending' | 'paid' | 'failed' }
export interface PayoutProvider {
  readonly kind: ProviderKind;
  readonly livemode: boolean;
  /** Card: creates the hosted-onboarding account and link; wallet: registers the verified e-mail. */
  startOnboarding(tx: Tx, input: { recipientId: number; email: string; existingAccountRef: string | null }): Promise<OnboardingStart>;
  refresh(tx: Tx, accountRef: string): Promise<{ ready: boolean; url: string | null }>;
  /**
   * Submits a payout; the provider confirms later (never synchronously "paid"). The same
   * idempotency key again returns the first answer and pays nothing more. Any error leaves the
   * outcome unknown: the provider may or may not have accepted it.
   */
  submitTransfer(input: SubmitTransferInput): Promise<ProviderTransfer>;
  /** What the provider knows of the payout submitted with this idempotency key (null: nothing). Never pays. */
  findTransfer(idempotencyKey: string): Promise<ProviderTransfer | null>;
}
export interface PayoutProviders { get(kind: ProviderKind, livemode: boolean): PayoutProvider | null }

/** The key a transfer is submitted with, derived from its id: every attempt for one transfer carries the same key. */
export const transferIdempotencyKey = (transferId: number) => `patchbay-transfer-${transferId}`;
