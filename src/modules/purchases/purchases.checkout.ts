import { writeAudits } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { enqueueEmails } from '../../platform/mail/mail.js';
import { normaliseEmail, upsertCustomers } from '../customers/index.js';
import { visibleProductsOrThrow } from '../products/index.js';
import { issueSerials, NO_TERMS, revokeSerialsForRefund } from '../serials/index.js';
import { keepsSerialsOnRefund } from '../workspaces/index.js';
import { PRODUCT_PURCHASE_EMAIL } from './purchases.emails.js';
import { PurchaseErrors } from './purchases.errors.js';
import * as repo from './purchases.orders.repo.js';
import { insertItemsAnnounced } from './purchases.items.js';
import { emitWebhookEvents } from '../webhooks/index.js';

/** The provider name of sales collected by Patchbay's managed checkout. */
export const MANAGED_CHECKOUT_PROVIDER = 'patchbay_checkout';

/** Where a sale was collected: Patchbay's managed checkout, or a seller's own store connected to Patchbay (Stripe, Paddle, Lemon Squeezy). */
export type SaleSource = { channel: 'managed_checkout'; provider: typeof MANAGED_CHECKOUT_PROVIDER } | { channel: 'external_store'; provider: string };
const MANAGED: SaleSource = { channel: 'managed_checkout', provider: MANAGED_CHECKOUT_PROVIDER };

export interface CheckoutSale {
  orderId: string;
  /** Default: the managed checkout. */
  source?: SaleSource;
  currency: string;
  customer: { email: string; name: string | null };
  items: Array<{ productId: number; subtotalCents: number; discountCents: number }>;
  purchasedAt: Date;
}

export interface RecordedSaleItem {
  itemId: number;
  productId: number;
  subtotalCents: number;
  discountCents: number;
}

/**
 * A sale captured by the managed checkout (or a connected store) becomes a purchase like any
 * other: the customer (found or created by e-mail), an order, one item per product with its
 * entitlement, a serial per item, and the purchase e-mail through the job runner. Returns the
 * items for the partner allocation.
 */
export async function recordCheckoutSale(tx: Tx, scope: Scope, sale: CheckoutSale): Promise<RecordedSaleItem[]> {
  return (await recordCheckoutSales(tx, scope, [sale]))[0]!;
}

/**
 * `recordCheckoutSale` for several sales of one workspace, each of another order, with the same
 * statements as one sale: the customers, orders, serials, items, e-mails and audit records of all
 * of them are written together. Answers each sale's items, by position. A buyer of several of the
 * sales is one customer, as booking them one after another would make.
 */
export async function recordCheckoutSales(tx: Tx, scope: Scope, sales: CheckoutSale[]): Promise<RecordedSaleItem[][]> {
  if (sales.length === 0) return [];
  const products = await visibleProductsOrThrow(tx, scope, sales.flatMap((s) => s.items.map((i) => i.productId)));
  const buyers = sales.map((sale) => {
    const emailNormalized = normaliseEmail(sale.customer.email);
    const [firstName, ...rest] = (sale.customer.name ?? '').trim().split(/\s+/);
    return { email: sale.customer.email.trim(), emailNormalized, firstName: firstName || null, lastName: rest.join(' ') || null, productIds: sale.items.map((i) => i.productId), marketingConsent: false };
  });
  const { accountIds, customerIds } = await upsertCustomers(tx, scope, buyers, 'checkout');
  const customerOf = sales.map((_, i) => accountIds.get(buyers[i]!.emailNormalized)!);
  const customerRefOf = sales.map((_, i) => customerIds.get(buyers[i]!.emailNormalized)!);
  const orders = await repo.upsertOrders(
    tx,
    scope,
    sales.map((sale, i) => {
      const { channel, provider } = sale.source ?? MANAGED;
      return {
        customerId: customerOf[i]!,
        reference: sale.orderId,
        externalReference: sale.orderId,
        channel,
        provider,
        status: 'paid' as const,
        totalCents: sale.items.reduce((s, item) => s + item.subtotalCents - item.discountCents, 0),
        currency: sale.currency,
        resellerId: null,
        purchasedAt: sale.purchasedAt,
      };
    }),
  );
  const orderIdOf = new Map(orders.map((o) => [o.reference, o.id]));
  const orderOf = sales.map((sale) => orderIdOf.get(sale.orderId)!);
  if (orderIdOf.size !== sales.length || orderOf.includes(undefined as never)) throw new Error('The sales must name distinct orders, each written once; nothing was recorded');
  const several = sales.length > 1;
  const wanted = sales.flatMap((sale, i) =>
    sale.items.map((item) => {
      const p = products.get(item.productId)!;
      return {
        productId: p.id,
        code: newSerialCode(),
        customerId: customerOf[i]!,
        origin: 'granted' as const,
        maxActivations: p.maxActivations,
        orderId: orderOf[i]!,
        ...NO_TERMS,
        expiresAt: null,
        ...(several ? { eventData: { orderId: sale.orderId } } : {}),
      };
    }),
  );
  const serials = await issueSerials(tx, scope, wanted, { action: 'sold', data: several ? {} : { orderId: sales[0]!.orderId } });
  if (serials.length !== wanted.length) throw new Error('A generated serial code collided; the sale was not written');
  const serialOf = new Map(serials.map((s) => [`${s.order_id}:${s.product_id}`, s]));
  const items = await insertItemsAnnounced(
    tx,
    scope,
    sales.flatMap((sale, i) => {
      const { channel, provider } = sale.source ?? MANAGED;
      return sale.items.map((item) => ({
        orderId: orderOf[i]!,
        productId: item.productId,
        customerId: customerOf[i]!,
        customerRef: customerRefOf[i]!,
        channel,
        provider,
        resellerId: null,
        recordType: item.subtotalCents - item.discountCents > 0 ? ('sale' as const) : ('free' as const),
        status: 'paid' as const,
        currency: sale.currency,
        priceCents: item.subtotalCents,
        salePriceCents: item.subtotalCents - item.discountCents,
        externalReference: sale.orderId,
        serialId: serialOf.get(`${orderOf[i]}:${item.productId}`)?.id ?? null,
        purchasedAt: sale.purchasedAt,
        entitlement: { source: 'purchase' as const, kind: 'perpetual' as const, endsAt: null, manualGrantId: null },
      }));
    }),
  );
  await enqueueEmails(
    tx,
    scope,
    PRODUCT_PURCHASE_EMAIL,
    items.map((row) => ({ orderItemId: row.id })),
  );
  const itemsOf = new Map<number, typeof items>();
  for (const row of items) itemsOf.set(row.order_id, [...(itemsOf.get(row.order_id) ?? []), row]);
  await writeAudits(
    tx,
    scope,
    sales.map((sale, i) => {
      const { channel, provider } = sale.source ?? MANAGED;
      return { action: 'purchases.checkout_sale', subjectType: 'order', subjectId: orderOf[i]!, data: { orderId: sale.orderId, items: itemsOf.get(orderOf[i]!)?.length ?? 0, channel, provider } };
    }),
  );
  return sales.map((sale, i) =>
    (itemsOf.get(orderOf[i]!) ?? []).map((row) => {
      const input = sale.items.find((item) => item.productId === row.product_id)!;
      return { itemId: row.id, productId: row.product_id, subtotalCents: input.subtotalCents, discountCents: input.discountCents };
    }),
  );
}

/**
 * A refund reported by the checkout: adds to the item's refunded amount (never beyond what was
 * paid) and updates its refund state; a full refund ends the entitlement and revokes the serial.
 * Returns the item and its cumulative refunded amount for the partner reversal.
 */
export async function recordCheckoutRefund(tx: Tx, scope: Scope, refund: { orderId: string; productId: number; amountCents: number; refundedAt: Date }) {
  const item = await repo.lockCheckoutItem(tx, scope, refund.orderId, refund.productId);
  if (!item) throw notFound('Order item');
  const refunded = item.refunded_cents + refund.amountCents;
  await refundItem(tx, scope, item, refunded, refund.refundedAt);
  return { itemId: item.id, refundedCents: refunded };
}

/**
 * `recordCheckoutRefund` for several refunds of one workspace whose items the caller locked with
 * `lockCheckoutItems` (each item once, each refund within what was paid): the writes of
 * one refund for all of them. Returns each refund's item and cumulative refunded amount, by position.
 */
export async function recordCheckoutRefunds(tx: Tx, scope: Scope, refunds: ReadonlyArray<{ item: repo.RefundableItem; amountCents: number; refundedAt: Date }>) {
  const written = refunds.map(({ item, amountCents, refundedAt }) => ({ item, refundedCents: item.refunded_cents + amountCents, refundedAt }));
  await refundItems(tx, scope, written);
  return written.map((r) => ({ itemId: r.item.id, refundedCents: r.refundedCents }));
}

/**
 * A connected store's refund of an item it sold, as the item's refunded total so far (stores
 * report refunds per order; the caller spreads them over the items). A total at or below what is
 * recorded changes nothing (null): reports may repeat or arrive out of order.
 */
export async function recordExternalRefund(tx: Tx, scope: Scope, refund: { orderItemId: number; refundedCents: number; refundedAt: Date }) {
  const item = await repo.lockExternalStoreItem(tx, scope, refund.orderItemId);
  if (!item) throw notFound('Order item');
  if (refund.refundedCents <= item.refunded_cents) return null;
  await refundItem(tx, scope, item, refund.refundedCents, refund.refundedAt);
  return { itemId: item.id, refundedCents: refund.refundedCents };
}

/**
 * The one refund path of every channel: the item's cumulative refund and refund state, the
 * entitlement ended on a full refund, and the serial sold with the item revoked then (unless the
 * workspace keeps serials on refund). A partial refund changes no serial.
 */
async function refundItem(tx: Tx, scope: Scope, item: repo.RefundableItem, refundedCents: number, refundedAt: Date): Promise<void> {
  await refundItems(tx, scope, [{ item, refundedCents, refundedAt }]);
}

/** `refundItem` for several items of one workspace (each once, locked) in one transaction, with the statements of one. */
async function refundItems(tx: Tx, scope: Scope, refunds: ReadonlyArray<{ item: repo.RefundableItem; refundedCents: number; refundedAt: Date }>): Promise<void> {
  if (refunds.length === 0) return;
  const over = refunds.find((r) => r.refundedCents > r.item.sale_price_cents);
  if (over) {
    throw new AppError(PurchaseErrors.REFUND_EXCEEDS_PAYMENT, `Refunds would total ${over.refundedCents}, more than the ${over.item.sale_price_cents} paid`, {
      body: { refunded_cents: over.item.refunded_cents, sale_price_cents: over.item.sale_price_cents },
    });
  }
  await repo.setRefunds(tx, scope, refunds.map(({ item, refundedCents, refundedAt }) => ({ itemId: item.id, refundedCents, refundedAt })));
  const full = (r: (typeof refunds)[number]) => r.refundedCents >= r.item.sale_price_cents;
  await emitWebhookEvents(
    tx,
    scope.workspaceId,
    'purchase.refunded',
    refunds.map((r) => ({
      order_item_id: r.item.id,
      order_reference: r.item.external_reference,
      amount_cents: r.refundedCents - r.item.refunded_cents,
      refunded_cents: r.refundedCents,
      fully_refunded: full(r),
      refunded_at: r.refundedAt.toISOString(),
    })),
  );
  const sold = refunds.filter((r) => full(r) && r.item.serial_id !== null).map((r) => ({ serialId: r.item.serial_id!, orderItemId: r.item.id }));
  const revoked = new Set(sold.length > 0 && !(await keepsSerialsOnRefund(tx, scope)) ? await revokeSerialsForRefund(tx, scope, sold) : []);
  await writeAudits(
    tx,
    scope,
    refunds.map(({ item, refundedCents }) => ({
      action: 'purchases.checkout_refund',
      subjectType: 'order_item',
      subjectId: item.id,
      data: { orderId: item.external_reference, amountCents: refundedCents - item.refunded_cents, refundedCents, revokedSerialIds: item.serial_id !== null && revoked.has(item.serial_id) ? [item.serial_id] : [] },
    })),
  );
}
