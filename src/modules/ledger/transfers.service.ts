import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { currentDestination } from '../payouts/destinations.repo.js';
import type { PayoutProviders } from '../payouts/providers.js';
import * as repo from './ledger.repo.js';
import { creditMoves } from './split.js';

/** The smallest payable balance a payout run transfers, in minor units of its currency (PAYOUT_MINIMUM_MINOR_UNITS). */
export const DEFAULT_PAYOUT_MINIMUM = 1000;

export interface PayoutRunResult {
  livemode: boolean;
  considered: number;
  submitted: number;
  reconciliation_required: number;
  skipped: Array<{ agreement_id: number; currency: string; reason: string }>;
}

/**
 * Payout runs and transfer states: reserved → submitted → paid | failed | reconciliation_required.
 * Reserving moves the payable balance to `transfer_in_flight` (so a refund meanwhile cannot take
 * it, and a second run cannot reserve it twice); only the provider's confirmation moves it to
 * `paid_out`, and a failure returns it to payable.
 */
export class Transfers {
  constructor(
    private readonly db: Db,
    private readonly providers: PayoutProviders,
    private readonly minimum: bigint,
  ) {}

  async run(livemode: boolean): Promise<PayoutRunResult> {
    const candidates = await sql<{ workspace_id: number; agreement_id: number; currency: string; payable: string }>`
      select workspace_id, agreement_id, currency, sum(amount)::text as payable from ledger_entries
      where account = 'partner_payable' group by workspace_id, agreement_id, currency
      having sum(amount) >= ${this.minimum.toString()}::bigint order by agreement_id, currency`.execute(this.db);
    const result: PayoutRunResult = { livemode, considered: candidates.rows.length, submitted: 0, reconciliation_required: 0, skipped: [] };
    for (const c of candidates.rows) {
      const currency = c.currency.trim();
      const reserved = await this.reserve(c.workspace_id, c.agreement_id, currency, livemode);
      if ('skipped' in reserved) {
        result.skipped.push({ agreement_id: c.agreement_id, currency, reason: reserved.skipped });
        continue;
      }
      if ((await this.submit(reserved.transferId)) === 'submitted') result.submitted++;
      else result.reconciliation_required++;
    }
    return result;
  }

  private reserve(workspaceId: number, agreementId: number, currency: string, livemode: boolean): Promise<{ transferId: number } | { skipped: string }> {
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.lockAgreement(tx, workspaceId, agreementId);
      if (!agreement?.live || agreement.recipient_id === null) return { skipped: 'agreement_not_live' };
      const inFlight = await tx.selectFrom('partner_transfers').select('id').where('agreement_id', '=', agreementId).where('currency', '=', currency).where('status', 'in', ['reserved', 'submitted', 'reconciliation_required']).executeTakeFirst();
      if (inFlight) return { skipped: 'transfer_in_flight' };
      const buckets = (await repo.partnerBuckets(tx, agreementId, currency)).get(currency);
      if (!buckets || buckets.payable < this.minimum) return { skipped: 'below_minimum' };
      const destination = await currentDestination(tx, agreement.recipient_id, livemode);
      if (!destination || destination.status !== 'ready') return { skipped: 'no_ready_destination' };
      // A changed destination is held (security hold); transfers wait until it is available.
      if (destination.available_at && destination.available_at.getTime() > Date.now()) return { skipped: 'destination_on_hold' };
      const provider = this.providers.get(destination.provider, livemode);
      if (!provider) return { skipped: 'provider_not_configured' };
      const inserted = await sql<{ id: number }>`
        insert into partner_transfers (workspace_id, agreement_id, recipient_id, destination_id, provider, livemode, currency, amount, status)
        values (${workspaceId}, ${agreementId}, ${agreement.recipient_id}, ${destination.id}, ${destination.provider}, ${livemode}, ${currency}, ${buckets.payable.toString()}::bigint, 'reserved')
        returning id`.execute(tx);
      const transferId = inserted.rows[0]!.id;
      await repo.insertTransaction(tx, { workspaceId, kind: 'transfer_reserved', agreementId, transferId }, [
        { account: 'partner_payable', agreementId, recipientId: agreement.recipient_id, currency, amount: -buckets.payable },
        { account: 'transfer_in_flight', agreementId, recipientId: agreement.recipient_id, currency, amount: buckets.payable },
      ]);
      return { transferId };
    });
  }

  /** Hands a reserved transfer to its provider. An error leaves its outcome unknown: reconciliation_required, never silently retried. */
  private async submit(transferId: number): Promise<'submitted' | 'reconciliation_required'> {
    try {
      return await inTransaction(this.db, async (tx) => {
        const t = await sql<{ id: number; provider: 'card' | 'wallet'; livemode: boolean; currency: string; amount: string; status: string; account_ref: string }>`
          select t.id, t.provider, t.livemode, t.currency, t.amount::text, t.status, d.account_ref
          from partner_transfers t join payout_destinations d on d.id = t.destination_id where t.id = ${transferId} for update of t`.execute(tx);
        const row = t.rows[0]!;
        const provider = this.providers.get(row.provider, row.livemode)!;
        const { providerReference } = await provider.submitTransfer(tx, {
          transferId,
          accountRef: row.account_ref,
          amount: BigInt(row.amount),
          currency: row.currency.trim(),
          idempotencyKey: `patchbay-transfer-${transferId}`,
        });
        await sql`update partner_transfers set status = 'submitted', provider_reference = ${providerReference}, submitted_at = now(), updated_at = now() where id = ${transferId}`.execute(tx);
        return 'submitted' as const;
      });
    } catch (error) {
      await sql`update partner_transfers set status = 'reconciliation_required', failure_reason = ${String((error as Error).message).slice(0, 500)}, updated_at = now() where id = ${transferId} and status = 'reserved'`.execute(this.db);
      return 'reconciliation_required';
    }
  }

  /** The provider's word on a transfer. Only this marks it paid; a failure returns the amount to payable. Repeats change nothing. */
  async confirm(transferId: number, outcome: 'paid' | 'failed', reason: string | null = null): Promise<string> {
    return inTransaction(this.db, async (tx) => {
      const head = await tx.selectFrom('partner_transfers').select(['workspace_id', 'agreement_id']).where('id', '=', transferId).executeTakeFirst();
      if (!head) return 'unknown_transfer';
      // Agreement first, then the transfer: the same lock order as the payout run.
      await repo.lockAgreement(tx, head.workspace_id, head.agreement_id);
      const t = await sql<{ status: string; currency: string; amount: string; recipient_id: number }>`
        select status, currency, amount::text, recipient_id from partner_transfers where id = ${transferId} for update`.execute(tx);
      const row = t.rows[0]!;
      if (row.status !== 'submitted' && row.status !== 'reconciliation_required') return row.status;
      const currency = row.currency.trim();
      const amount = BigInt(row.amount);
      const base = { agreementId: head.agreement_id, recipientId: row.recipient_id, currency };
      if (outcome === 'paid') {
        await repo.insertTransaction(tx, { workspaceId: head.workspace_id, kind: 'transfer_paid', agreementId: head.agreement_id, transferId }, [
          { ...base, account: 'transfer_in_flight', amount: -amount },
          { ...base, account: 'paid_out', amount },
        ]);
      } else {
        // Back to payable, paying off first anything the partner came to owe meanwhile.
        const buckets = (await repo.partnerBuckets(tx, head.agreement_id, currency)).get(currency) ?? { pending: 0n, payable: 0n, recovery: 0n };
        const m = creditMoves(buckets, amount, true);
        await repo.insertTransaction(tx, { workspaceId: head.workspace_id, kind: 'transfer_failed', agreementId: head.agreement_id, transferId }, [
          { ...base, account: 'transfer_in_flight', amount: -amount },
          { ...base, account: 'partner_payable', amount: m.payable },
          { ...base, account: 'partner_recovery', amount: m.recovery },
        ]);
      }
      await sql`update partner_transfers set status = ${outcome}, failure_reason = ${reason}, settled_at = now(), updated_at = now() where id = ${transferId}`.execute(tx);
      return outcome;
    });
  }
}
