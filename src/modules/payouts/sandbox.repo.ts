import { type ColumnType, sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// The sandbox provider's own tables: its hosted-onboarding accounts and the payouts it accepted.
// They stand for a real provider's records, so nothing of Patchbay's money reads them.

export interface PayoutSandboxAccountsTable {
  account_ref: string;
  recipient_id: number;
  onboarding_token_hash: string | null;
  onboarding_expires_at: Date | null;
  onboarded_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** The payouts the sandbox accepted, one per idempotency key (its side of the money, not Patchbay's). */
export interface PayoutSandboxTransfersTable {
  idempotency_key: string;
  provider_reference: string;
  transfer_id: number;
  account_ref: string;
  amount: ColumnType<string, string, never>;
  currency: string;
  outcome: 'paid' | 'failed';
  created_at: ColumnType<Date, Date | undefined, never>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    payout_sandbox_accounts: PayoutSandboxAccountsTable;
    payout_sandbox_transfers: PayoutSandboxTransfersTable;
  }
}

/** Records an accepted payout once per idempotency key; null when the key was used before. */
export async function insertSandboxTransfer(
  tx: Tx,
  t: { idempotencyKey: string; providerReference: string; transferId: number; accountRef: string; amount: bigint; currency: string; outcome: 'paid' | 'failed' },
) {
  const row = await tx
    .insertInto('payout_sandbox_transfers')
    .values({
      idempotency_key: t.idempotencyKey,
      provider_reference: t.providerReference,
      transfer_id: t.transferId,
      account_ref: t.accountRef,
      amount: t.amount.toString(),
      currency: t.currency,
      outcome: t.outcome,
    })
    .onConflict((c) => c.column('idempotency_key').doNothing())
    .returning(['provider_reference', 'outcome'])
    .executeTakeFirst();
  return row ?? null;
}

/** The payout first accepted under this key, and whether it was for the same account, amount and currency. */
export async function earlierSandboxTransfer(tx: Tx, t: { idempotencyKey: string; accountRef: string; amount: bigint; currency: string }) {
  return tx
    .selectFrom('payout_sandbox_transfers')
    .select(['provider_reference', sql<boolean>`account_ref = ${t.accountRef} and amount = ${t.amount.toString()}::bigint and currency = ${t.currency}`.as('same')])
    .where('idempotency_key', '=', t.idempotencyKey)
    .executeTakeFirstOrThrow();
}

export async function sandboxTransferByKey(db: Executor, idempotencyKey: string) {
  return db.selectFrom('payout_sandbox_transfers').select(['provider_reference', 'outcome']).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
}

export async function sandboxAccount(db: Executor, accountRef: string) {
  return db.selectFrom('payout_sandbox_accounts').where('account_ref', '=', accountRef).selectAll().executeTakeFirst();
}

export async function insertSandboxAccount(tx: Tx, accountRef: string, recipientId: number): Promise<void> {
  await tx.insertInto('payout_sandbox_accounts').values({ account_ref: accountRef, recipient_id: recipientId }).execute();
}

/** The account an unused, unexpired onboarding token belongs to. */
export async function accountOfOnboardingToken(db: Executor, tokenHash: string) {
  return db
    .selectFrom('payout_sandbox_accounts')
    .where('onboarding_token_hash', '=', tokenHash)
    .where('onboarding_expires_at', '>', new Date())
    .where('onboarded_at', 'is', null)
    .select(['account_ref', 'recipient_id'])
    .executeTakeFirst();
}

/** Uses an onboarding token once: the first caller onboards the account, every later one (or after expiry) gets nothing. */
export async function completeOnboarding(tx: Tx, tokenHash: string) {
  return tx
    .updateTable('payout_sandbox_accounts')
    .set({ onboarded_at: new Date(), onboarding_token_hash: null, onboarding_expires_at: null })
    .where('onboarding_token_hash', '=', tokenHash)
    .where('onboarding_expires_at', '>', new Date())
    .where('onboarded_at', 'is', null)
    .returning(['account_ref', 'recipient_id', 'onboarded_at'])
    .executeTakeFirst();
}

/** A new onboarding link replaces the previous one. */
export async function setOnboardingToken(tx: Tx, accountRef: string, tokenHash: string, expiresAt: Date): Promise<void> {
  await tx.updateTable('payout_sandbox_accounts').set({ onboarding_token_hash: tokenHash, onboarding_expires_at: expiresAt }).where('account_ref', '=', accountRef).execute();
}
