import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Tx } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { enqueueEmails, type QueuedEmail } from '../../platform/mail/mail.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { normaliseEmail } from '../customers/customers.import.js';
import { upsertCustomers } from '../customers/customers.service.js';
import { getVisibleProductOrThrow, type ProductRef } from '../products/products.service.js';
import { issueSerials, NO_TERMS } from '../serials/serials.service.js';
import { PurchaseErrors } from './purchases.errors.js';
import * as repo from './purchases.repo.js';

/** The provider name of sales collected by Patchbay's managed checkout. */
export const MANAGED_CHECKOUT_PROVIDER = 'patchbay_checkout';

export interface CheckoutSale {
  orderId: string;
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

function purchaseEmail(product: ProductRef, email: string, serialCode: string | null, paid: number, currency: string): QueuedEmail {
  const lines = [`Thank you for buying ${product.name} (${formatMajorUnits(paid, currency)} ${currency.toUpperCase()}).`, ...(serialCode ? ['', `Your serial: ${serialCode}`] : [])];
  return { kind: 'product_purchase', recipient: email, subject: `Your purchase of ${product.name}`, text: lines.join('\n'), data: { productId: product.id } };
}

/**
 * A sale captured by the managed checkout becomes a purchase like any other: the customer (found
 * or created by e-mail), an order, one item per product with its entitlement, a serial per item,
 * and the purchase e-mail through the job runner. Returns the items for the partner allocation.
 */
export async function recordCheckoutSale(tx: Tx, scope: Scope, sale: CheckoutSale): Promise<RecordedSaleItem[]> {
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
      channel: 'managed_checkout',
      provider: MANAGED_CHECKOUT_PROVIDER,
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
  const items = await repo.insertItems(
    tx,
    scope,
    sale.items.map((i) => ({
      orderId: order!.id,
      productId: i.productId,
      customerId,
      channel: 'managed_checkout',
      provider: MANAGED_CHECKOUT_PROVIDER,
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
    products.map((p) => {
      const item = sale.items.find((i) => i.productId === p.id)!;
      return purchaseEmail(p, sale.customer.email.trim(), serialOf.get(p.id)?.code ?? null, item.subtotalCents - item.discountCents, sale.currency);
    }),
  );
  await writeAudit(tx, scope, { action: 'purchases.checkout_sale', subjectType: 'order', subjectId: order!.id, data: { orderId: sale.orderId, items: items.length } });
  return items.map((row) => {
    const input = sale.items.find((i) => i.productId === row.product_id)!;
    return { itemId: row.id, productId: row.product_id, subtotalCents: input.subtotalCents, discountCents: input.discountCents };
  });
}

/**
 * A refund reported by the checkout: adds to the item's refunded amount (never beyond what was
 * paid) and updates its refund state; a full refund ends the entitlement. Returns the item and
 * its cumulative refunded amount for the partner reversal.
 */
export async function recordCheckoutRefund(tx: Tx, scope: Scope, refund: { orderId: string; productId: number; amountCents: number; refundedAt: Date }) {
  const item = await repo.lockCheckoutItem(tx, scope, refund.orderId, refund.productId);
  if (!item) throw notFound('Order item');
  const refunded = item.refunded_cents + refund.amountCents;
  if (refunded > item.sale_price_cents) {
    throw new AppError(PurchaseErrors.REFUND_EXCEEDS_PAYMENT, `Refunds would total ${refunded}, more than the ${item.sale_price_cents} paid`, {
      body: { refunded_cents: item.refunded_cents, sale_price_cents: item.sale_price_cents },
    });
  }
  await repo.setRefunds(tx, scope, [{ itemId: item.id, refundedCents: refunded, refundedAt: refund.refundedAt }]);
  await writeAudit(tx, scope, { action: 'purchases.checkout_refund', subjectType: 'order_item', subjectId: item.id, data: { orderId: refund.orderId, amountCents: refund.amountCents, refundedCents: refunded } });
  return { itemId: item.id, refundedCents: refunded };
}
