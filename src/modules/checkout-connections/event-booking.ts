import type { FastifyBaseLogger } from 'fastify';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { INT32_MAX } from '../../platform/http/bounded.js';
import { isIsoCurrency } from '../../platform/money/currencies.js';
import { bookExternalRefund, bookSale, type ReferralVerifier } from '../checkout/index.js';
import * as repo from './checkout-connections.repo.js';
import { ReprocessWaitingJob } from './checkout-connections.jobs.js';
import type { EventAction, ProviderRefund, ProviderSale } from './provider-events.js';
import { itemRefundTarget, spreadOrderRefund } from './refund-split.js';

// What an interpreted provider event does, inside the transaction that records it: a sale through
// the managed checkout's booking path (channel `external_store`, the provider recorded), a refund
// carried over to the items it refunds, Paddle's customers kept for the sales that name them.

/** The event cannot be booked as it stands: recorded as failed with the reason, nothing else written. */
export class BookingFailed extends Error {
  constructor(
    message: string,
    /** Paddle: the customer whose customer.created event will re-process it. */
    readonly waitingFor: string | null = null,
  ) {
    super(message);
  }
}

export interface BookedEvent {
  outcome: 'recorded' | 'replayed' | 'ignored';
  reason: string | null;
  orderItemIds: number[];
}

export interface ConnectionRef {
  id: number;
  provider: string;
}

export interface BookingDeps {
  verifyReferral: ReferralVerifier;
  log: FastifyBaseLogger;
}

export async function bookAction(tx: Tx, scope: Scope, connection: ConnectionRef, action: EventAction, deps: BookingDeps): Promise<BookedEvent> {
  switch (action.kind) {
    case 'fail':
      throw new BookingFailed(action.reason);
    case 'ignore':
      return { outcome: 'ignored', reason: action.reason, orderItemIds: [] };
    case 'customer': {
      await repo.upsertCustomer(tx, scope, connection.id, action.customer);
      const waiting = await repo.eventsWaitingFor(tx, connection.id, action.customer.providerCustomerId);
      // Sales that arrived before their customer are booked by a job once this commits.
      if (waiting.length > 0) await ReprocessWaitingJob.enqueue(tx, { connectionId: connection.id, eventIds: waiting }, { workspaceId: scope.workspaceId });
      return { outcome: 'recorded', reason: waiting.length > 0 ? `${waiting.length} waiting sale(s) queued for re-processing` : null, orderItemIds: [] };
    }
    case 'sale':
      return bookProviderSale(tx, scope, connection, action.sale, deps);
    case 'refund':
      return bookProviderRefund(tx, scope, connection, action.refund);
  }
}

async function buyerOf(tx: Tx, scope: Scope, connection: ConnectionRef, sale: ProviderSale) {
  if (!('providerCustomerId' in sale.customer)) return sale.customer;
  const id = sale.customer.providerCustomerId;
  const known = await repo.findCustomer(tx, scope, connection.id, id);
  if (!known) throw new BookingFailed(`the customer ${id} is not known yet (subscribe to customer.created): this sale is booked when that event arrives`, id);
  return known;
}

async function bookProviderSale(tx: Tx, scope: Scope, connection: ConnectionRef, sale: ProviderSale, deps: BookingDeps): Promise<BookedEvent> {
  if (!isIsoCurrency(sale.currency)) throw new BookingFailed(`${sale.currency} is not a current ISO 4217 currency code`);
  const providerIds = sale.lines.flatMap((l) => [l.providerProductId, l.providerPriceId].filter((id): id is string => id !== null));
  const mapped = await repo.mappedProducts(tx, scope, connection.id, [...new Set(providerIds)]);
  const items: Array<{ key: string; productId: number; subtotalCents: number; discountCents: number; paidCents: number }> = [];
  const unmapped: string[] = [];
  for (const line of sale.lines) {
    const productId = line.patchbayProductId ?? (line.providerProductId ? mapped.get(line.providerProductId) : undefined) ?? (line.providerPriceId ? mapped.get(line.providerPriceId) : undefined);
    const name = `${line.providerProductId ?? line.providerPriceId ?? line.key}${line.label ? ` (${line.label})` : ''}`;
    if (productId === undefined) {
      unmapped.push(name);
      continue;
    }
    // One order item holds one licence: a quantity would be paid licences without serials.
    if (line.quantity !== 1) throw new BookingFailed(`${name} was bought ${line.quantity} times; a sale books one licence per product`);
    if (line.discountCents > line.subtotalCents) throw new BookingFailed(`${name}: the discount exceeds the subtotal`);
    if (items.some((i) => i.productId === productId)) throw new BookingFailed(`the order holds Patchbay product ${productId} twice`);
    items.push({ key: line.key, productId, subtotalCents: line.subtotalCents, discountCents: line.discountCents, paidCents: line.paidCents });
  }
  if (unmapped.length > 0) throw new BookingFailed(`no product mapping for ${unmapped.join(', ')}: add it to the connection's productMapping, then re-process this event`);
  if (items.length === 0) throw new BookingFailed('the order has no items');
  if (items.reduce((s, i) => s + i.subtotalCents - i.discountCents, 0) > INT32_MAX) throw new BookingFailed('the order total is too large');
  const currency = sale.currency.toLowerCase();
  const booked = await bookSale(
    tx,
    scope,
    {
      orderId: sale.orderId,
      source: { channel: 'external_store', provider: connection.provider },
      currency,
      customer: await buyerOf(tx, scope, connection, sale),
      items: items.map((i) => ({ productId: i.productId, subtotalCents: i.subtotalCents, discountCents: i.discountCents })),
      purchasedAt: sale.purchasedAt,
      referral: sale.referral,
    },
    deps,
  );
  const itemOf = new Map(booked.items.map((i) => [i.productId, i.orderItemId]));
  // Also for a replay: another connection of the workspace may have booked the order; this one then finds its refunds too.
  await repo.insertOrder(tx, scope, {
    connectionId: connection.id,
    providerOrderId: sale.orderId,
    paymentRef: sale.paymentRef,
    currency,
    items: items.flatMap((i) => (itemOf.has(i.productId) ? [{ key: i.key, productId: i.productId, orderItemId: itemOf.get(i.productId)!, paidCents: i.paidCents, salePriceCents: i.subtotalCents - i.discountCents }] : [])),
  });
  const ids = booked.items.map((i) => i.orderItemId);
  return booked.outcome === 'recorded' ? { outcome: 'recorded', reason: null, orderItemIds: ids } : { outcome: 'replayed', reason: `the order ${sale.orderId} was already recorded`, orderItemIds: ids };
}

async function bookProviderRefund(tx: Tx, scope: Scope, connection: ConnectionRef, refund: ProviderRefund): Promise<BookedEvent> {
  const order = await repo.lockOrder(tx, scope, connection.id, refund.order);
  const named = 'orderId' in refund.order ? refund.order.orderId : refund.order.paymentRef;
  if (!order) throw new BookingFailed(`no sale of ${named} was recorded through this connection; re-process this event once it is`);
  const report = refund.report;
  let reportedTotal = order.reportedRefundedCents;
  if (report.kind === 'total') {
    await repo.raiseReportedTotal(tx, scope, connection.id, order.providerOrderId, report.totalCents);
    reportedTotal = Math.max(reportedTotal, report.totalCents);
  } else if (report.kind === 'refund') {
    await repo.recordRefundParts(tx, scope, connection.id, order.providerOrderId, report.refundKey, [{ itemKey: '', amountCents: report.amountCents }]);
  } else {
    const unknown = report.items.filter((r) => !order.items.some((i) => i.key === r.itemKey)).map((r) => r.itemKey);
    if (unknown.length > 0) throw new BookingFailed(`the refund names items this connection did not record: ${unknown.join(', ')}`);
    const parts = report.items.map((r) => ({ itemKey: r.itemKey, amountCents: r.full ? order.items.find((i) => i.key === r.itemKey)!.paidCents : r.amountCents }));
    await repo.recordRefundParts(tx, scope, connection.id, order.providerOrderId, report.refundKey, parts);
  }
  const sums = await repo.refundSums(tx, scope, connection.id, order.providerOrderId);
  // Reports are lower bounds of what the order has refunded: the larger of the totals and the sum of distinct refunds.
  const orderLevel = spreadOrderRefund(
    order.items.map((i) => i.paidCents),
    Math.max(reportedTotal, sums.get('') ?? 0),
  );
  const changed: number[] = [];
  for (const [i, item] of order.items.entries()) {
    const refunded = orderLevel[i]! + (sums.get(item.key) ?? 0);
    const target = itemRefundTarget(item, refunded);
    if (target > 0 && (await bookExternalRefund(tx, scope, { orderItemId: item.orderItemId, refundedCents: target, refundedAt: refund.refundedAt }))) changed.push(item.orderItemId);
  }
  return changed.length > 0 ? { outcome: 'recorded', reason: null, orderItemIds: changed } : { outcome: 'replayed', reason: 'this refund was already counted', orderItemIds: [] };
}
