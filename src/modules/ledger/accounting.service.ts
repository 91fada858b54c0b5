import type { RecipientScope, Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/errors.js';
import { currentDestinations, type DestinationRecord } from '../payouts/index.js';
import * as repo from './accounting.repo.js';
import { requestFoldIfBehind } from './balances.service.js';

// Amounts leave as JSON integers of minor units: every amount is bounded far below 2^53 (orders
// stay below 2^31 minor units), so the BigInt → number step is exact.
const n = (v: bigint) => Number(v);

interface BalanceKey {
  currency: string;
  agreementId: number;
}

/** Per agreement and currency: what was allocated and reversed, and where the rest sits now. */
function partnerDetails(sums: repo.AccountSum[], allocated: repo.AllocatedSum[], agreements: Array<{ id: number; kind: string; name: string; status: string }>) {
  const keys = new Map<string, BalanceKey>();
  const key = (currency: string, agreementId: number) => `${agreementId}:${currency}`;
  for (const s of sums) if (s.agreement_id !== null && s.account !== 'external_estimate') keys.set(key(s.currency, s.agreement_id), { currency: s.currency, agreementId: s.agreement_id });
  for (const a of allocated) if (a.agreement_id !== null && a.basis === 'managed') keys.set(key(a.currency, a.agreement_id), { currency: a.currency, agreementId: a.agreement_id });
  const sum = (account: string, k: BalanceKey) => sums.filter((s) => s.account === account && s.agreement_id === k.agreementId && s.currency === k.currency).reduce((t, s) => t + s.total, 0n);
  return [...keys.values()]
    .filter((k) => agreements.some((a) => a.id === k.agreementId))
    .sort((a, b) => a.agreementId - b.agreementId || a.currency.localeCompare(b.currency))
    .map((k) => {
      const agreement = agreements.find((a) => a.id === k.agreementId)!;
      const alloc = allocated.filter((a) => a.agreement_id === k.agreementId && a.currency === k.currency && a.basis === 'managed');
      return {
        currency: k.currency,
        agreement_id: k.agreementId,
        party: agreement.kind,
        name: agreement.name,
        status: agreement.status,
        allocated_cents: n(alloc.reduce((t, a) => t + a.allocated, 0n)),
        reversed_cents: n(alloc.reduce((t, a) => t + a.reversed, 0n)),
        pending_cents: n(sum('partner_pending', k)),
        payable_cents: n(sum('partner_payable', k)),
        in_transfer_cents: n(sum('transfer_in_flight', k)),
        paid_cents: n(sum('paid_out', k)),
        recovery_outstanding_cents: n(-sum('partner_recovery', k)),
      };
    });
}

function unfunded(sums: repo.AccountSum[], agreements: Array<{ id: number; name: string }>) {
  return sums
    .filter((s) => s.account === 'external_estimate' && s.agreement_id !== null && s.total !== 0n && agreements.some((a) => a.id === s.agreement_id))
    .map((s) => ({ currency: s.currency, agreement_id: s.agreement_id!, name: agreements.find((a) => a.id === s.agreement_id)!.name, estimated_cents: n(s.total), funded: false as const, payable: false as const }));
}

const destinationJson = (d: DestinationRecord, now = Date.now()) => ({
  recipient_id: d.recipient_id,
  provider: d.provider,
  livemode: d.livemode,
  status: d.status,
  ready: d.status === 'ready',
  display: d.display,
  hold_until: d.hold_until?.toISOString() ?? null,
  available_at: d.available_at?.toISOString() ?? null,
  transfers_allowed: d.status === 'ready' && (d.available_at === null || d.available_at.getTime() <= now),
});

export const transferJson = (t: Omit<repo.TransferRow, 'workspace_id' | 'recipient_id'>) => ({
  id: t.id,
  agreement_id: t.agreement_id,
  provider: t.provider,
  livemode: t.livemode,
  currency: t.currency.trim(),
  amount_cents: Number(t.amount),
  status: t.status,
  failure_reason: t.failure_reason,
  created_at: t.created_at.toISOString(),
  submitted_at: t.submitted_at?.toISOString() ?? null,
  settled_at: t.settled_at?.toISOString() ?? null,
});

const allocationJson = (a: repo.AllocationRow) => ({
  id: a.id,
  order_item_id: a.order_item_id,
  product_id: a.product_id,
  currency: a.currency.trim(),
  basis: a.basis,
  funded: a.basis === 'managed',
  proceeds_cents: Number(a.proceeds),
  platform_fee_cents: Number(a.platform_fee),
  processing_fee_cents: Number(a.processing_fee),
  refunded_cents: Number(a.refunded),
  referral_agreement_id: a.referral_agreement_id,
  created_at: new Date(a.created_at).toISOString(),
  parts: (a.parts ?? []).map((p) => ({ party: p.party, agreement_id: p.agreement_id, rate_bps: p.rate_bps, amount_cents: Number(p.amount), reversed_cents: Number(p.reversed) })),
});

/** The developer's view: every party's balances in the workspace, from the ledger. */
export async function developerAccounting(db: Db, scope: Scope, paging: { page: number; pageSize: number }) {
  const [{ sums, unfolded }, allocated, agreements, allocations, reversals, transfers] = await Promise.all([
    repo.workspaceBalances(db, scope.workspaceId),
    repo.allocatedTotals(db, { workspaceId: scope.workspaceId }),
    repo.workspaceAgreements(db, scope.workspaceId),
    repo.listAllocations(db, scope.workspaceId, paging.page, paging.pageSize, false),
    repo.listAllocations(db, scope.workspaceId, paging.page, paging.pageSize, true),
    repo.listTransfers(db, { workspaceId: scope.workspaceId }, 100),
  ]);
  void requestFoldIfBehind(db, unfolded);
  const recipientIds = [...new Set(agreements.map((a) => a.recipient_id).filter((id): id is number => id !== null))];
  const destinations = [...(await currentDestinations(db, recipientIds, false)), ...(await currentDestinations(db, recipientIds, true))];
  const currencies = [...new Set(sums.map((s) => s.currency))].sort();
  const total = (account: string, currency: string) => sums.filter((s) => s.account === account && s.currency === currency).reduce((t, s) => t + s.total, 0n);
  const devAlloc = (party: string, currency: string, field: 'allocated' | 'reversed') =>
    allocated.filter((a) => a.party === party && a.currency === currency && a.basis === 'managed').reduce((t, a) => t + a[field], 0n);
  return {
    currencies,
    balance_details: [
      ...currencies.flatMap((c) => [
        { currency: c, agreement_id: null, party: 'developer', name: 'Developer earnings', allocated_cents: n(devAlloc('developer', c, 'allocated')), reversed_cents: n(devAlloc('developer', c, 'reversed')), balance_cents: n(total('developer_earnings', c)) },
        { currency: c, agreement_id: null, party: 'platform', name: 'Platform share (10%)', allocated_cents: n(devAlloc('platform', c, 'allocated')), reversed_cents: n(devAlloc('platform', c, 'reversed')), balance_cents: n(total('platform_share', c)) },
      ]),
      ...partnerDetails(sums, allocated, agreements),
    ],
    funded: currencies.map((c) => ({
      currency: c,
      collected_cents: n(-total('checkout_clearing', c)),
      platform_share_cents: n(total('platform_share', c)),
      developer_earnings_cents: n(total('developer_earnings', c)),
      partner_pending_cents: n(total('partner_pending', c)),
      partner_payable_cents: n(total('partner_payable', c)),
      partner_recovery_outstanding_cents: n(-total('partner_recovery', c)),
      in_transfer_cents: n(total('transfer_in_flight', c)),
      paid_out_cents: n(total('paid_out', c)),
    })),
    external: currencies
      .map((c) => ({ currency: c, estimated_partner_cents: n(total('external_estimate', c)), funded: false as const }))
      .filter((e) => e.estimated_partner_cents !== 0),
    unfunded_earnings: unfunded(sums, agreements),
    allocations: { rows: allocations.rows.map(allocationJson), total: allocations.total, page: paging.page, pageSize: paging.pageSize },
    reversals: { rows: reversals.rows.map(allocationJson), total: reversals.total, page: paging.page, pageSize: paging.pageSize },
    destinations: destinations.map((d) => ({ ...destinationJson(d), agreement_ids: agreements.filter((a) => a.recipient_id === d.recipient_id).map((a) => a.id) })),
    transfers: transfers.map(transferJson),
  };
}

/** The recipient's view: their own balances and transfers across workspaces, nothing of anyone else. */
export async function recipientAccounting(db: Db, recipient: RecipientScope) {
  const agreements = await repo.recipientAgreements(db, recipient.recipientId);
  const ids = agreements.map((a) => a.id);
  const [{ sums, unfolded }, allocated, transfers, destinations] = await Promise.all([
    repo.recipientBalances(db, recipient.recipientId),
    ids.length ? repo.allocatedTotals(db, { agreementIds: ids }) : Promise.resolve([]),
    repo.listTransfers(db, { recipientId: recipient.recipientId }, 100),
    Promise.all([currentDestinations(db, [recipient.recipientId], false), currentDestinations(db, [recipient.recipientId], true)]),
  ]);
  void requestFoldIfBehind(db, unfolded);
  return {
    programs: agreements.map((a) => ({ agreement_id: a.id, kind: a.kind, name: a.name, status: a.status, workspace_name: a.workspace_name })),
    balance_details: partnerDetails(sums, allocated, agreements).map((d) => ({ ...d, workspace_name: agreements.find((a) => a.id === d.agreement_id)!.workspace_name })),
    unfunded_earnings: unfunded(sums, agreements),
    destinations: destinations.flat().map((d) => destinationJson(d)),
    transfers: transfers.filter((t) => ids.includes(t.agreement_id)).map(transferJson),
  };
}

/**
 * The recipient's own allocation rows, paged: their part of each saved split (never another
 * party's), with the sale's product, proceeds and refunds. `agreementId` narrows to one agreement
 * of theirs; another's (or one of a workspace whose partner programs are off) is not found.
 */
export async function recipientEntries(
  db: Db,
  recipient: RecipientScope,
  query: { page: number; pageSize: number; agreementId?: number | undefined; reversals?: boolean | undefined; currency?: string | undefined },
) {
  const agreements = await repo.recipientAgreements(db, recipient.recipientId);
  const chosen = query.agreementId === undefined ? agreements : agreements.filter((a) => a.id === query.agreementId);
  if (query.agreementId !== undefined && chosen.length === 0) throw notFound('Agreement');
  const { rows, total } = await repo.listRecipientEntries(
    db,
    chosen.map((a) => ({ workspaceId: a.workspace_id, agreementId: a.id })),
    query.page,
    query.pageSize,
    query.reversals === true,
    query.currency?.toLowerCase() ?? null,
  );
  return {
    rows: rows.map((r) => {
      const agreement = agreements.find((a) => a.id === r.agreement_id)!;
      return {
        allocation_id: Number(r.allocation_id),
        agreement_id: r.agreement_id,
        workspace_name: agreement.workspace_name,
        program_name: agreement.name,
        party: r.party,
        product_name: r.product_name,
        currency: r.currency.trim(),
        basis: r.basis,
        funded: r.basis === 'managed',
        proceeds_cents: Number(r.proceeds),
        refunded_cents: Number(r.refunded),
        rate_bps: r.rate_bps,
        amount_cents: Number(r.amount),
        reversed_cents: Number(r.reversed),
        net_cents: Number(r.amount) - Number(r.reversed),
        created_at: new Date(r.created_at).toISOString(),
      };
    }),
    total,
    page: query.page,
    pageSize: query.pageSize,
  };
}
