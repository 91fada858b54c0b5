import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { withinAttributionWindow } from '../referrals/index.js';
import * as repo from './ledger.repo.js';
import { applyMoves, creditMoves, debitMoves, reversalStep, splitSale, type Basis, type PartnerBuckets, type SplitAgreement } from './split.js';

/**
 * The partner ledger's writes. Callers hand in their transaction, so a sale and its allocation
 * (or a refund and its reversal) commit together or not at all.
 *
 * Sign convention: an entry is positive when it adds to what the account's holder is owed.
 * `checkout_clearing` is the money the checkout collected (a sale debits it); `partner_recovery`
 * goes negative when a reversal outruns what a partner still had (they owe it back), and
 * `external_offset` balances the memo entries of unfunded external estimates.
 */

export interface SaleToAllocate {
  orderItemId: number;
  productId: number;
  currency: string;
  subtotal: bigint;
  discount: bigint;
  basis: Basis;
  /** External basis only: fees as the seller reported them. */
  platformFee?: bigint;
  processingFee?: bigint;
  soldAt: Date;
  /** The referral context a checked `pb_ref` named, if any. */
  referral: { agreementId: number; visitedAt: Date } | null;
}

/** Saves a sale's split and books it; once per item (a repeat changes nothing). Returns the allocation id. */
export async function allocateSale(tx: Tx, workspaceId: number, sale: SaleToAllocate): Promise<number | null> {
  return (await allocateSales(tx, workspaceId, [sale]))[0]!;
}

/**
 * `allocateSale` for several sales of one workspace in one transaction, with a constant number of
 * statements: the agreements of every sale are locked together (in id order), each partner's
 * balances are read once and carried from sale to sale in the order given, exactly as booking the
 * sales one after another would move them, and the allocations and ledger transactions are
 * written in one statement each. Answers each sale's allocation id (null: nothing to allocate, or
 * the item already had one), by position.
 */
export async function allocateSales(tx: Tx, workspaceId: number, sales: SaleToAllocate[]): Promise<Array<number | null>> {
  if (sales.length === 0) return [];
  const locked = await repo.lockAgreementsForSales(
    tx,
    workspaceId,
    sales.map((s) => ({ productId: s.productId, affiliateId: s.referral?.agreementId ?? null, at: s.soldAt })),
  );
  const planned = sales.map((sale, i) => {
    const applies = (a: repo.AgreementForMoney) => {
      if (sale.basis === 'external' && !a.include_reseller_sales) return false;
      if (a.kind === 'collaborator') return true;
      // A click is not proof of a sale: only a sale within the attribution window of the visit counts.
      return withinAttributionWindow(sale.referral!, sale.soldAt, a.attribution_window_days);
    };
    const sharing = locked[i]!.filter(applies).sort((a, b) => (a.kind === b.kind ? a.id - b.id : a.kind === 'affiliate' ? -1 : 1));
    const split = splitSale({
      subtotal: sale.subtotal,
      discount: sale.discount,
      basis: sale.basis,
      platformFee: sale.platformFee,
      processingFee: sale.processingFee,
      agreements: sharing.map((a): SplitAgreement => ({ agreementId: a.id, kind: a.kind, rateBps: a.product_rate_bps ?? a.rate_bps })),
    });
    return { sale, sharing, split };
  });
  // Once per item: a second sale of an item in the same call is a repeat, as it would be one after the other.
  const items = new Set<number>();
  const allocating = planned.filter((p) => p.split.proceeds !== 0n && !items.has(p.sale.orderItemId) && items.add(p.sale.orderItemId));
  const allocationIds = await repo.insertAllocations(
    tx,
    workspaceId,
    allocating.map(({ sale, sharing, split }) => {
      const affiliate = sharing.find((a) => a.kind === 'affiliate');
      return {
        orderItemId: sale.orderItemId,
        productId: sale.productId,
        currency: sale.currency,
        basis: sale.basis,
        proceeds: split.proceeds,
        platformFee: split.platformFee,
        processingFee: split.processingFee,
        referralAgreementId: affiliate?.id ?? null,
        referralVisitedAt: affiliate ? sale.referral!.visitedAt : null,
        parts: split.parts,
      };
    }),
  );
  const booked = allocating.filter((p) => allocationIds.has(p.sale.orderItemId));
  // Funded partner credits move between pending, payable and recovery by the partner's balances.
  const credited = booked.flatMap(({ sale, split }) =>
    sale.basis === 'external' ? [] : split.parts.filter((p) => p.agreementId !== null && p.party !== 'platform' && p.party !== 'developer').map((p) => ({ agreementId: p.agreementId!, currency: sale.currency })),
  );
  const buckets = await repo.partnerBucketsOf(tx, credited);
  const transactions = booked.map(({ sale, sharing, split }) => {
    const c = sale.currency;
    const entries: repo.Entry[] = [];
    if (sale.basis === 'external') {
      // Collected by someone else: the partner shares are unfunded estimates, recorded as memo entries.
      let estimated = 0n;
      for (const p of split.parts) {
        if (p.agreementId === null) continue;
        const a = sharing.find((x) => x.id === p.agreementId)!;
        entries.push({ account: 'external_estimate', agreementId: a.id, recipientId: a.recipient_id, currency: c, amount: p.amount });
        estimated += p.amount;
      }
      entries.push({ account: 'external_offset', agreementId: null, recipientId: null, currency: c, amount: -estimated });
    } else {
      entries.push({ account: 'checkout_clearing', agreementId: null, recipientId: null, currency: c, amount: -split.proceeds });
      for (const p of split.parts) {
        if (p.party === 'platform') entries.push({ account: 'platform_share', agreementId: null, recipientId: null, currency: c, amount: p.amount });
        else if (p.party === 'developer') entries.push({ account: 'developer_earnings', agreementId: null, recipientId: null, currency: c, amount: p.amount });
        else if (p.agreementId !== null) {
          const a = sharing.find((x) => x.id === p.agreementId)!;
          const key = repo.bucketKey(a.id, c);
          const before = buckets.get(key) ?? { pending: 0n, payable: 0n, recovery: 0n };
          const moves = creditMoves(before, p.amount, a.live);
          buckets.set(key, applyMoves(before, moves, 1n));
          entries.push(...creditEntries(a.id, a.recipient_id, c, moves));
        }
      }
    }
    return { allocationId: allocationIds.get(sale.orderItemId)!, entries };
  });
  await repo.insertAllocationTransactions(tx, workspaceId, 'sale', transactions);
  return planned.map((p) => (booked.includes(p) ? allocationIds.get(p.sale.orderItemId)! : null));
}

function creditEntries(agreementId: number, recipientId: number | null, currency: string, m: { pending: bigint; payable: bigint; recovery: bigint }): repo.Entry[] {
  return [
    { account: 'partner_pending', agreementId, recipientId, currency, amount: m.pending },
    { account: 'partner_payable', agreementId, recipientId, currency, amount: m.payable },
    { account: 'partner_recovery', agreementId, recipientId, currency, amount: m.recovery },
  ];
}

/**
 * Books the reversal after an item's refunds reach `refundedTotal` (cumulative): each party gives
 * back its cumulative target less what earlier refunds took, so partial refunds end where one
 * full refund would. A partner's part comes from pending, then payable; the rest becomes a recovery.
 */
export async function reverseRefund(tx: Tx, workspaceId: number, orderItemId: number, refundedTotal: bigint): Promise<void> {
  await reverseRefunds(tx, workspaceId, [{ orderItemId, refundedTotal }]);
}

/**
 * `reverseRefund` for several items of one workspace (each once) in one transaction, with a constant number of
 * statements: the allocations are locked together (in id order), then their agreements (in id order); each
 * partner's balances are read once and carried from reversal to reversal in the order given, as one reversal
 * after another would move them.
 */
export async function reverseRefunds(tx: Tx, workspaceId: number, refunds: Array<{ orderItemId: number; refundedTotal: bigint }>): Promise<void> {
  const allocations = await repo.lockAllocationsOfItems(tx, workspaceId, refunds.map((r) => r.orderItemId));
  const planned = refunds.flatMap(({ orderItemId, refundedTotal }) => {
    const allocation = allocations.get(orderItemId);
    if (!allocation || refundedTotal <= allocation.refunded) return [];
    const target = refundedTotal > allocation.proceeds ? allocation.proceeds : refundedTotal;
    const step = reversalStep(allocation.parts.map((p) => p.amount), allocation.refunded, target);
    return [{ allocation, target, step }];
  });
  if (planned.length === 0) return;
  await repo.recordReversals(
    tx,
    workspaceId,
    planned.map(({ allocation, target, step }) => ({ allocationId: allocation.id, refunded: target, reversedByPosition: allocation.parts.map((p, i) => p.reversed + step[i]!) })),
  );
  const locked = await repo.lockAgreements(tx, workspaceId, planned.flatMap(({ allocation }) => allocation.parts.filter((p) => p.agreement_id !== null).map((p) => p.agreement_id!)));
  const debited = planned.flatMap(({ allocation, step }) =>
    allocation.basis === 'external' ? [] : allocation.parts.flatMap((p, i) => (p.party !== 'platform' && p.party !== 'processing' && p.party !== 'developer' && step[i]! > 0n ? [{ agreementId: p.agreement_id!, currency: allocation.currency }] : [])),
  );
  const buckets = await repo.partnerBucketsOf(tx, debited);
  const transactions = planned.map(({ allocation, target, step }) => {
    const c = allocation.currency;
    const entries: repo.Entry[] = [];
    if (allocation.basis === 'external') {
      let back = 0n;
      allocation.parts.forEach((p, i) => {
        if (p.agreement_id === null) return;
        entries.push({ account: 'external_estimate', agreementId: p.agreement_id, recipientId: locked.get(p.agreement_id)!.recipient_id, currency: c, amount: -step[i]! });
        back += step[i]!;
      });
      entries.push({ account: 'external_offset', agreementId: null, recipientId: null, currency: c, amount: back });
    } else {
      entries.push({ account: 'checkout_clearing', agreementId: null, recipientId: null, currency: c, amount: target - allocation.refunded });
      for (let i = 0; i < allocation.parts.length; i++) {
        const p = allocation.parts[i]!;
        const amount = step[i]!;
        if (p.party === 'platform' || p.party === 'processing') entries.push({ account: 'platform_share', agreementId: null, recipientId: null, currency: c, amount: -amount });
        else if (p.party === 'developer') entries.push({ account: 'developer_earnings', agreementId: null, recipientId: null, currency: c, amount: -amount });
        else if (amount > 0n) {
          const key = repo.bucketKey(p.agreement_id!, c);
          const before = buckets.get(key) ?? { pending: 0n, payable: 0n, recovery: 0n };
          const m = debitMoves(before, amount);
          buckets.set(key, applyMoves(before, m, -1n));
          const recipientId = locked.get(p.agreement_id!)!.recipient_id;
          entries.push(
            { account: 'partner_pending', agreementId: p.agreement_id, recipientId, currency: c, amount: -m.pending },
            { account: 'partner_payable', agreementId: p.agreement_id, recipientId, currency: c, amount: -m.payable },
            { account: 'partner_recovery', agreementId: p.agreement_id, recipientId, currency: c, amount: -m.recovery },
          );
        }
      }
    }
    return { allocationId: allocation.id, entries };
  });
  await repo.insertAllocationTransactions(tx, workspaceId, 'refund', transactions);
}

/**
 * Once an agreement is live (active, both parties consented), what accrued as pending becomes
 * payable, after paying off any recovery the partner owes. Safe to repeat: nothing pending, nothing to do.
 */
export async function releasePending(tx: Tx, workspaceId: number, agreementId: number): Promise<bigint> {
  const agreement = await repo.lockAgreement(tx, workspaceId, agreementId);
  if (!agreement?.live) return 0n;
  let released = 0n;
  for (const [currency, buckets] of await repo.partnerBuckets(tx, agreementId)) {
    if (buckets.pending <= 0n) continue;
    const afterDebit: PartnerBuckets = { ...buckets, pending: 0n };
    const m = creditMoves(afterDebit, buckets.pending, true);
    await repo.insertTransaction(tx, { workspaceId, kind: 'release', agreementId }, [
      { account: 'partner_pending', agreementId, recipientId: agreement.recipient_id, currency, amount: -buckets.pending },
      ...creditEntries(agreementId, agreement.recipient_id, currency, m),
    ]);
    released += buckets.pending;
  }
  return released;
}

/**
 * Estimates partner shares of sales collected elsewhere (imports, external stores) for the
 * collaborators whose terms include reseller sales. Unfunded: memo entries only, never payable.
 * Resumable and safe to repeat: items that have an allocation are skipped.
 */
export async function allocateExternalSales(db: Db, workspaceId: number, batchSize = 500): Promise<number> {
  let after = 0;
  let allocated = 0;
  for (;;) {
    const items = await repo.unallocatedExternalItems(db, workspaceId, after, batchSize);
    if (items.length === 0) return allocated;
    await inTransaction(db, async (tx) => {
      for (const item of items) {
        const id = await allocateSale(tx, workspaceId, {
          orderItemId: item.id,
          productId: item.product_id,
          currency: item.currency.trim(),
          subtotal: BigInt(item.sale_price_cents),
          discount: 0n,
          basis: 'external',
          // The seller's fees are not known to us and stay with them: the estimate is of the whole sale.
          platformFee: 0n,
          processingFee: 0n,
          soldAt: item.purchased_at,
          referral: null,
        });
        if (id !== null) allocated++;
        if (id !== null && BigInt(item.refunded_cents) > 0n) await reverseRefund(tx, workspaceId, item.id, BigInt(item.refunded_cents));
      }
    });
    after = items.at(-1)!.id;
  }
}
