import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { enqueueEmails } from '../../platform/mail/mail.js';
import { normaliseEmail, upsertCustomers } from '../customers/index.js';
import { getVisibleProductOrThrow, type ProductRef } from '../products/index.js';
import { issueSerials, NO_TERMS, revokeSerialsForRefund } from '../serials/index.js';
import { keepsSerialsOnRefund } from '../workspaces/index.js';
import { PRODUCT_PURCHASE_EMAIL } from './purchases.emails.js';
import { PurchaseErrors } from './purchases.errors.js';
import * as repo from './purchases.orders.repo.js';
import { insertItemsAnnounced } from './purchases.items.js';
import { emitWebhookEvent } from '../webhooks/index.js';

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
  const { channel, provider } = sale.source ?? MANAGED;
  const products: ProductRef[] = [];
  for (const item of sale.items) products.push(await getVisibleProductOrThrow(tx, scope, item.productId));
  const emailNormalized = normaliseEmail(sale.customer.email);
  const [firstName, ...rest] = (sale.customer.name ?? '').trim().split(/\s+/);
  const { accountIds } = await upsertCustomers(
    tx,
    scope,
    [{ email: sale.customer.email.trim(), emailNormalized, firstName: firstName || null, lastName: rest.join(' ') || null, productIds: products.map((p) => p.id), marketingConsent: false }],
    'checkout',
  );
  const customerId = accountIds.get(emailNormalized)!;
  const total = sale.items.reduce((s, i) => s + i.subtotalCents - i.discountCents, 0);
  const [order] = await repo.upsertOrders(tx, scope, [
    {
      customerId,
      reference: sale.orderId,
      externalReference: sale.orderId,
      channel,
      provider,
      status: 'paid',
      totalCents: total,
      currency: sale.currency,
      resellerId: null,
      purchasedAt: sale.purchasedAt,
    },
  ]);
  const serials = await issueSerials(
    tx,
    scope,
    products.map((p) => ({ productId: p.id, code: newSerialCode(), customerId, origin: 'granted' as const, maxActivations: p.maxActivations, orderId: order!.id, ...NO_TERMS, expiresAt: null })),
    { action: 'sold', data: { orderId: sale.orderId } },
  );
  if (serials.length !== products.length) throw new Error('A generated serial code collided; the sale was not written');
  const serialOf = new Map(serials.map((s) => [s.product_id, s]));
  const items = await insertItemsAnnounced(
    tx,
    scope,
    sale.items.map((i) => ({
      orderId: order!.id,
      productId: i.productId,
      customerId,
      channel,
      provider,
      resellerId: null,
      recordType: i.subtotalCents - i.discountCents > 0 ? 'sale' : 'free',
      status: 'paid',
      currency: sale.currency,
      priceCents: i.subtotalCents,
      salePriceCents: i.subtotalCents - i.discountCents,
      externalReference: sale.orderId,
      serialId: serialOf.get(i.productId)?.id ?? null,
      purchasedAt: sale.purchasedAt,
      entitlement: { source: 'purchase', kind: 'perpetual', endsAt: null, manualGrantId: null },
    })),
  );
  await enqueueEmails(
    tx,
    scope,
    PRODUCT_PURCHASE_EMAIL,
    items.map((row) => ({ orderItemId: row.id })),
  );
  await writeAudit(tx, scope, { action: 'purchases.checkout_sale', subjectType: 'order', subjectId: order!.id, data: { orderId: sale.orderId, items: items.length, channel, provider } });
  return items.map((row) => {
    const input = sale.items.find((i) => i.productId === row.product_id)!;
    return { itemId: row.id, productId: row.product_id, subtotalCents: input.subtotalCents, discountCents: input.discountCents };
  });
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
  if (refundedCents > item.sale_price_cents) {
    throw new AppError(PurchaseErrors.REFUND_EXCEEDS_PAYMENT, `Refunds would total ${refundedCents}, more than the ${item.sale_price_cents} paid`, {
      body: { refunded_cents: item.refunded_cents, sale_price_cents: item.sale_price_cents },
    });
  }
  await repo.setRefunds(tx, scope, [{ itemId: item.id, refundedCents, refundedAt }]);
  const full = refundedCents >= item.sale_price_cents;
  await emitWebhookEvent(tx, scope.workspaceId, 'purchase.refunded', { order_item_id: item.id, order_reference: item.external_reference, amount_cents: refundedCents - item.refunded_cents, refunded_cents: refundedCents, fully_refunded: full, refunded_at: refundedAt.toISOString() });
  const revoked = full && item.serial_id !== null && !(await keepsSerialsOnRefund(tx, scope)) ? await revokeSerialsForRefund(tx, scope, [{ serialId: item.serial_id, orderItemId: item.id }]) : [];
  await writeAudit(tx, scope, {
    action: 'purchases.checkout_refund',
    subjectType: 'order_item',
    subjectId: item.id,
    data: { orderId: item.external_reference, amountCents: refundedCents - item.refunded_cents, refundedCents, revokedSerialIds: revoked },
  });
}
