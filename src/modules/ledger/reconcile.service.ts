import { writeAudit } from '../../platform/audit/audit.repo.js';
import { operatorScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { type PayoutProviders, transferIdempotencyKey } from '../payouts/index.js';
import * as repo from './ledger.repo.js';
import * as transfers from './transfers.repo.js';
import { settleTransfer } from './transfers.service.js';

// The operator's side of transfers whose outcome is unknown (`patchbay payouts reconcile`). Runs
// ask the provider again by themselves; what stays is what the provider cannot answer (it is
// down, it is not configured in this process, it refused a reused key), and there a person who
// has looked at the provider's dashboard or the bank settles the transfer.

/** A refusal the operator can act on (the transfer is not waiting for reconciliation, the provider says otherwise…). */
export class ReconcileRefused extends Error {}

/** What the provider says of a transfer, asked by its idempotency key. */
export type ProviderWord = 'paid' | 'failed' | 'pending' | 'no_record' | 'unreachable' | 'not_configured';

export const MAX_RECONCILIATION_LIST = 500;

const transferJson = (t: transfers.TransferForOperator) => ({
  id: t.id,
  workspace_id: t.workspace_id,
  agreement_id: t.agreement_id,
  recipient_id: t.recipient_id,
  provider: t.provider,
  livemode: t.livemode,
  currency: t.currency.trim(),
  amount_cents: Number(t.amount),
  status: t.status,
  idempotency_key: transferIdempotencyKey(t.id),
  provider_reference: t.provider_reference,
  failure_reason: t.failure_reason,
  attempts: t.attempts,
  created_at: t.created_at.toISOString(),
  submitted_at: t.submitted_at?.toISOString() ?? null,
  settled_at: t.settled_at?.toISOString() ?? null,
});

export class Reconciliation {
  constructor(
    private readonly db: Db,
    private readonly providers: PayoutProviders,
  ) {}

  /** Transfers waiting for an operator, each with what its provider says now (asking never pays). */
  async list(filter: { workspaceId?: number | undefined }) {
    const rows = await transfers.transfersNeedingReconciliation(this.db, filter, MAX_RECONCILIATION_LIST + 1);
    const listed = [];
    for (const t of rows.slice(0, MAX_RECONCILIATION_LIST)) listed.push({ ...transferJson(t), provider_says: (await this.ask(t)).word });
    return { transfers: listed, truncated: rows.length > MAX_RECONCILIATION_LIST };
  }

  /**
   * Settles a transfer whose outcome is unknown: `paid` (in flight → paid out) or `returned`
   * (in flight → payable; the transfer ends `failed`). The provider is asked first: its word
   * decides when it has one, and an outcome against it is refused; a provider that cannot be
   * asked is overridden only with `withoutProvider`. Written with its ledger step and an audit
   * record (actor operator, the reason) in one transaction.
   */
  async settle(input: { transferId: number; outcome: 'paid' | 'returned'; reason: string; withoutProvider: boolean }) {
    const before = await transfers.transferForOperator(this.db, input.transferId);
    if (!before) throw new ReconcileRefused(`No transfer ${input.transferId}`);
    refuseUnlessWaiting(before);
    const asked = await this.ask(before);
    refuseAgainstProvider(asked, input);

    const outcome = input.outcome === 'paid' ? 'paid' : 'failed';
    const ledgerTransactionId = await inTransaction(this.db, async (tx) => {
      // Agreement first, then the transfer: the lock order of every writer of transfers.
      await repo.lockAgreement(tx, before.workspace_id, before.agreement_id);
      const row = (await transfers.lockTransfer(tx, input.transferId))!;
      const now = await transfers.transferForOperator(tx, input.transferId);
      // Checked again under the lock: a run may have taken it over (or settled it) since.
      refuseUnlessWaiting(now!);
      const reason = outcome === 'failed' ? `returned by the operator: ${input.reason}` : null;
      const id = await settleTransfer(tx, { id: input.transferId, workspace_id: before.workspace_id, agreement_id: before.agreement_id, ...row }, outcome, reason, asked.reference);
      await writeAudit(tx, operatorScope(before.workspace_id, 0), {
        action: 'payouts.transfer_reconciled',
        subjectType: 'partner_transfer',
        subjectId: input.transferId,
        data: {
          actor: 'operator',
          reason: input.reason,
          outcome: input.outcome,
          provider_says: asked.word,
          without_provider: input.withoutProvider,
          agreement_id: before.agreement_id,
          currency: before.currency.trim(),
          amount_cents: Number(before.amount),
          ledger_transaction_id: id,
        },
      });
      return id;
    });
    const after = (await transfers.transferForOperator(this.db, input.transferId))!;
    return { transfer: transferJson(after), outcome: input.outcome, provider_says: asked.word, ledger_transaction_id: ledgerTransactionId };
  }

  private async ask(t: transfers.TransferForOperator): Promise<{ word: ProviderWord; reference: string | null }> {
    const provider = this.providers.get(t.provider as 'card' | 'wallet', t.livemode);
    if (!provider) return { word: 'not_configured', reference: null };
    try {
      const known = await provider.findTransfer(transferIdempotencyKey(t.id));
      return known ? { word: known.status, reference: known.providerReference } : { word: 'no_record', reference: null };
    } catch {
      return { word: 'unreachable', reference: null };
    }
  }
}

function refuseUnlessWaiting(t: transfers.TransferForOperator): void {
  if (t.status !== 'reconciliation_required') {
    throw new ReconcileRefused(`Transfer ${t.id} is ${t.status}, not reconciliation_required: only a transfer whose outcome is unknown is settled by hand`);
  }
  if (t.run_id !== null && t.lease_until && t.lease_until.getTime() > Date.now()) {
    throw new ReconcileRefused(`A payout run is asking the provider about transfer ${t.id} right now; try again after ${t.lease_until.toISOString()}`);
  }
}

function refuseAgainstProvider(asked: { word: ProviderWord; reference: string | null }, input: { transferId: number; outcome: 'paid' | 'returned'; withoutProvider: boolean }): void {
  const id = input.transferId;
  switch (asked.word) {
    case 'paid':
      if (input.outcome !== 'paid') throw new ReconcileRefused(`The provider reports transfer ${id} paid (${asked.reference}); it cannot be returned to payable`);
      return;
    case 'failed':
      if (input.outcome !== 'returned') throw new ReconcileRefused(`The provider reports transfer ${id} failed (${asked.reference}); settle it with --outcome returned`);
      return;
    case 'pending':
      throw new ReconcileRefused(`The provider has transfer ${id} (${asked.reference}) and has not settled it yet; the next payout run records its outcome`);
    case 'no_record':
      // Never reached the provider: nothing can be paid twice either way (paid: settled outside the provider).
      return;
    case 'unreachable':
    case 'not_configured':
      if (!input.withoutProvider) {
        throw new ReconcileRefused(
          `The provider of transfer ${id} cannot be asked here (${asked.word === 'unreachable' ? 'it did not answer' : 'it is not configured in this process'}); ` +
            'check its outcome with the provider yourself and repeat with --without-provider',
        );
      }
  }
}
