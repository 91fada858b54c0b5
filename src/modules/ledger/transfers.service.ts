import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { currentDestination, type PayoutProvider, type PayoutProviders, type ProviderTransfer, transferIdempotencyKey } from '../payouts/index.js';
import { crashPoint } from './crash-points.js';
import * as repo from './ledger.repo.js';
import { creditMoves } from './split.js';
import * as transfers from './transfers.repo.js';
import { emitWebhookEvent } from '../webhooks/index.js';

/** The smallest payable balance a payout run transfers, in minor units of its currency (PAYOUT_MINIMUM_MINOR_UNITS). */
export const DEFAULT_PAYOUT_MINIMUM = 1000;
/**
 * How long a run owns a transfer it reserved or took over, and how long a submitted transfer waits
 * for the provider's confirmation before a run asks the provider (PAYOUT_TRANSFER_LEASE_SECONDS).
 * Longer than any provider call; a run that dies leaves its transfer to the first run after it.
 */
export const DEFAULT_TRANSFER_LEASE_SECONDS = 300;
/** Unattended transfers one run takes over; the rest wait for the next run. */
const TAKE_OVER_PER_RUN = 1000;

type Outcome = 'submitted' | 'paid' | 'failed' | 'reconciliation_required';

export interface PayoutRunResult {
  livemode: boolean;
  run_id: string;
  considered: number;
  submitted: number;
  reconciliation_required: number;
  /** Transfers of runs that are gone (or whose outcome was unknown) that this run took over, with where they stand now. */
  resumed: Array<{ transfer_id: number; agreement_id: number; currency: string; status: Outcome }>;
  skipped: Array<{ agreement_id: number; currency: string; reason: string; transfer_id?: number }>;
}

/**
 * Payout runs and transfer states: reserved → submitted → paid | failed, and
 * reconciliation_required when the provider's answer is unknown. Reserving moves the payable
 * balance to `transfer_in_flight` (so a refund meanwhile cannot take it, and a second run cannot
 * reserve it twice); only the provider's word moves it to `paid_out`, and a failure returns it to
 * payable. A transfer is held by its run under a lease; when the lease runs out the next run takes
 * it over and finishes it: it asks the provider first (by the transfer's idempotency key) and
 * submits again only what the provider does not know, with the same key, so nothing is paid twice.
 */
export class Transfers {
  private readonly leaseSeconds: number;

  constructor(
    private readonly db: Db,
    private readonly providers: PayoutProviders,
    private readonly minimum: bigint,
    options: { leaseSeconds?: number | undefined } = {},
  ) {
    this.leaseSeconds = options.leaseSeconds ?? DEFAULT_TRANSFER_LEASE_SECONDS;
  }

  /** A run over the whole service (the CLI, an operator), or over one workspace's agreements (a run a workspace asked for from the console). */
  async run(livemode: boolean, only: { workspaceId?: number } = {}): Promise<PayoutRunResult> {
    const runId = `run_${randomUUID()}`;
    const result: PayoutRunResult = { livemode, run_id: runId, considered: 0, submitted: 0, reconciliation_required: 0, resumed: [], skipped: [] };
    const tally = (status: Outcome) => {
      if (status === 'reconciliation_required') result.reconciliation_required++;
      else result.submitted++;
    };
    // First what runs that are gone left behind: each holds its agreement's one in-flight slot.
    for (const u of await transfers.unattendedTransfers(this.db, livemode, TAKE_OVER_PER_RUN, only.workspaceId)) {
      // Left for a process that has the provider (a live one configured in the server, say).
      const provider = this.providers.get(u.provider, livemode);
      if (!provider) {
        result.skipped.push({ agreement_id: u.agreement_id, currency: u.currency, reason: 'provider_not_configured', transfer_id: u.id });
        continue;
      }
      const t = await transfers.claimTransfer(this.db, u.id, runId, this.leaseSeconds);
      if (!t) continue; // another run took it, or it was settled meanwhile
      const status = await this.resume(t, provider);
      result.resumed.push({ transfer_id: t.id, agreement_id: t.agreement_id, currency: u.currency, status });
      tally(status);
    }

    const candidates = await transfers.payableBalances(this.db, this.minimum, only.workspaceId);
    result.considered = candidates.length;
    for (const c of candidates) {
      const currency = c.currency.trim();
      const reserved = await this.reserve(c.workspace_id, c.agreement_id, currency, livemode, runId);
      if ('skipped' in reserved) {
        result.skipped.push({ agreement_id: c.agreement_id, currency, reason: reserved.skipped });
        continue;
      }
      crashPoint('transfer-reserved', c.agreement_id);
      tally(await this.submit(reserved.transfer, reserved.provider));
    }
    return result;
  }

  private reserve(workspaceId: number, agreementId: number, currency: string, livemode: boolean, runId: string) {
    return inTransaction(this.db, async (tx): Promise<{ transfer: transfers.TransferInHand; provider: PayoutProvider } | { skipped: string }> => {
      const agreement = await repo.lockAgreement(tx, workspaceId, agreementId);
      if (!agreement?.live || agreement.recipient_id === null) return { skipped: 'agreement_not_live' };
      if (await transfers.hasTransferInFlight(tx, agreementId, currency)) return { skipped: 'transfer_in_flight' };
      const buckets = (await repo.partnerBuckets(tx, agreementId, currency)).get(currency);
      if (!buckets || buckets.payable < this.minimum) return { skipped: 'below_minimum' };
      const destination = await currentDestination(tx, agreement.recipient_id, livemode);
      if (!destination || destination.status !== 'ready') return { skipped: 'no_ready_destination' };
      // A changed destination is held (security hold); transfers wait until it is available.
      if (destination.available_at && destination.available_at.getTime() > Date.now()) return { skipped: 'destination_on_hold' };
      const provider = this.providers.get(destination.provider, livemode);
      if (!provider) return { skipped: 'provider_not_configured' };
      const amount = buckets.payable;
      const id = await transfers.insertReservedTransfer(tx, {
        workspaceId, agreementId, recipientId: agreement.recipient_id, destinationId: destination.id, provider: destination.provider, livemode, currency, amount, runId, leaseSeconds: this.leaseSeconds,
      });
      await repo.insertTransaction(tx, { workspaceId, kind: 'transfer_reserved', agreementId, transferId: id }, [
        { account: 'partner_payable', agreementId, recipientId: agreement.recipient_id, currency, amount: -amount },
        { account: 'transfer_in_flight', agreementId, recipientId: agreement.recipient_id, currency, amount },
      ]);
      const transfer = { id, workspace_id: workspaceId, agreement_id: agreementId, provider: destination.provider, livemode, currency, amount: amount.toString(), status: 'reserved' as const, account_ref: destination.account_ref };
      await announceTransfer(tx, transfer, null, 'reserved');
      return { transfer, provider };
    });
  }

  /** A move of the run's own transfer (its lease holds it), announced with it when the status changed. */
  private async moved(t: transfers.TransferInHand, status: 'submitted' | 'reconciliation_required', write: (tx: Tx) => Promise<boolean>): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      if ((await write(tx)) && t.status !== status) await announceTransfer(tx, t, t.status, status);
    });
  }

  /**
   * Finishes a transfer another run left: what the provider knows under the transfer's key is the
   * truth (accepted, paid or failed); only a transfer it does not know is submitted, with that
   * same key. Never a blind retry: a provider whose keys expire would pay a retry twice.
   */
  private async resume(t: transfers.TransferInHand, provider: PayoutProvider): Promise<Outcome> {
    let known: ProviderTransfer | null;
    try {
      known = await provider.findTransfer(transferIdempotencyKey(t.id));
    } catch (error) {
      await this.moved(t, 'reconciliation_required', (tx) => transfers.recordOutcomeUnknown(tx, t.id, `asking the provider failed: ${messageOf(error)}`, this.leaseSeconds));
      return 'reconciliation_required';
    }
    if (known) return this.adopt(t, known);
    if (t.status === 'submitted') {
      await this.moved(t, 'reconciliation_required', (tx) => transfers.recordOutcomeUnknown(tx, t.id, 'the provider has no record of this submitted transfer', this.leaseSeconds));
      return 'reconciliation_required';
    }
    return this.submit(t, provider);
  }

  /** Hands a transfer to its provider. An error leaves its outcome unknown: reconciliation_required, asked again by the next run. */
  private async submit(t: transfers.TransferInHand, provider: PayoutProvider): Promise<Outcome> {
    let answer: ProviderTransfer;
    try {
      answer = await provider.submitTransfer({
        transferId: t.id,
        accountRef: t.account_ref,
        amount: BigInt(t.amount),
        currency: t.currency.trim(),
        idempotencyKey: transferIdempotencyKey(t.id),
      });
    } catch (error) {
      await this.moved(t, 'reconciliation_required', (tx) => transfers.recordOutcomeUnknown(tx, t.id, messageOf(error), this.leaseSeconds));
      return 'reconciliation_required';
    }
    crashPoint('transfer-provider-accepted', t.agreement_id);
    return this.adopt(t, answer);
  }

  /** Records what the provider said; a settled payout is settled here and now (its confirmation, if it comes, changes nothing). */
  private async adopt(t: transfers.TransferInHand, answer: ProviderTransfer): Promise<Outcome> {
    await this.moved(t, 'submitted', (tx) => transfers.recordSubmitted(tx, t.id, answer.providerReference, this.leaseSeconds));
    crashPoint('transfer-submitted', t.agreement_id);
    if (answer.status === 'pending') return 'submitted';
    await this.confirm(t.id, answer.status, answer.status === 'failed' ? 'the provider reported the transfer failed' : null, answer.providerReference);
    return answer.status;
  }

  /**
   * The provider's word on a transfer. Only this (or an operator's reconciliation) marks it paid; a
   * failure returns the amount to payable. Accepted from `reserved` too: a run that died after the
   * provider accepted never recorded `submitted`. Repeats change nothing.
   */
  async confirm(transferId: number, outcome: 'paid' | 'failed', reason: string | null = null, providerReference: string | null = null): Promise<string> {
    return inTransaction(this.db, async (tx) => {
      const head = await transfers.transferHead(tx, transferId);
      if (!head) return 'unknown_transfer';
      // Agreement first, then the transfer: the same lock order as the payout run.
      await repo.lockAgreement(tx, head.workspace_id, head.agreement_id);
      const row = (await transfers.lockTransfer(tx, transferId))!;
      if (row.status === 'paid' || row.status === 'failed') return row.status;
      await settleTransfer(tx, { id: transferId, ...head, ...row }, outcome, reason, providerReference);
      return outcome;
    });
  }
}

/**
 * Settles a transfer that is in flight, with its balanced ledger step: paid moves in flight to
 * paid out; failed moves it back to payable, paying off first anything the partner came to owe
 * meanwhile. The caller holds the agreement's and the transfer's locks. Returns the ledger
 * transaction's id.
 */
export async function settleTransfer(
  tx: Tx,
  t: { id: number; workspace_id: number; agreement_id: number; recipient_id: number; currency: string; amount: string; status: transfers.TransferStatus; livemode: boolean },
  outcome: 'paid' | 'failed',
  reason: string | null,
  providerReference: string | null,
): Promise<number> {
  const currency = t.currency.trim();
  const amount = BigInt(t.amount);
  const base = { agreementId: t.agreement_id, recipientId: t.recipient_id, currency };
  const head = { workspaceId: t.workspace_id, agreementId: t.agreement_id, transferId: t.id };
  let ledgerTransactionId: number | null;
  if (outcome === 'paid') {
    ledgerTransactionId = await repo.insertTransaction(tx, { ...head, kind: 'transfer_paid' }, [
      { ...base, account: 'transfer_in_flight', amount: -amount },
      { ...base, account: 'paid_out', amount },
    ]);
  } else {
    const buckets = (await repo.partnerBuckets(tx, t.agreement_id, currency)).get(currency) ?? { pending: 0n, payable: 0n, recovery: 0n };
    const m = creditMoves(buckets, amount, true);
    ledgerTransactionId = await repo.insertTransaction(tx, { ...head, kind: 'transfer_failed' }, [
      { ...base, account: 'transfer_in_flight', amount: -amount },
      { ...base, account: 'partner_payable', amount: m.payable },
      { ...base, account: 'partner_recovery', amount: m.recovery },
    ]);
  }
  await transfers.recordSettled(tx, t.id, outcome, reason, providerReference);
  await announceTransfer(tx, t, t.status, outcome);
  return ledgerTransactionId!;
}

/** Tells the workspace's webhooks that a transfer moved (payout.transfer.status_changed), in the transaction that moved it. */
const announceTransfer = (
  tx: Tx,
  t: { id: number; workspace_id: number; agreement_id: number; currency: string; amount: string; livemode: boolean },
  previous: transfers.TransferStatus | null,
  status: transfers.TransferStatus,
) =>
  emitWebhookEvent(tx, t.workspace_id, 'payout.transfer.status_changed', {
    transfer_id: t.id,
    agreement_id: t.agreement_id,
    previous_status: previous,
    status,
    currency: t.currency.trim(),
    amount_cents: Number(t.amount),
    livemode: t.livemode,
  });

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);
