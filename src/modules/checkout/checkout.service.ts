import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { operatorScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { allocateSale, reverseRefund } from '../ledger/ledger.service.js';
import { recordCheckoutRefund, recordCheckoutSale } from '../purchases/purchases.checkout.js';
import { RefundCreatedData, SaleCapturedData, type CheckoutEventAnswer, type CheckoutEventBody } from './checkout.schemas.js';

/** Checks a `pb_ref` referral context; null when it is not one this service signed. */
export type ReferralVerifier = (value: string) => { agreementId: number; workspaceId: number; visitedAt: Date } | null;

function checked<T extends TSchema>(schema: T, data: unknown): import('@sinclair/typebox').Static<T> {
  if (Value.Check(schema, data)) return data;
  const errors = [...Value.Errors(schema, data)].slice(0, 20).map((e) => ({ path: `body/data${e.path}`, message: e.message }));
  throw new AppError(CommonErrors.VALIDATION_FAILED, 'The event data is invalid', { errors });
}

/**
 * Sales and refunds reported by the managed checkout. Each event is one transaction: its id is
 * recorded with what it changed, so a replay (same id) answers the same and changes nothing, and
 * an event that fails records nothing.
 */
export class CheckoutEvents {
  constructor(
    private readonly db: Db,
    private readonly verifyReferral: ReferralVerifier,
    private readonly log: FastifyBaseLogger,
  ) {}

  async handle(event: CheckoutEventBody): Promise<CheckoutEventAnswer> {
    const known = event.type === 'sale.captured' || event.type === 'refund.created';
    const data = event.type === 'sale.captured' ? checked(SaleCapturedData, event.data) : event.type === 'refund.created' ? checked(RefundCreatedData, event.data) : null;
    return inTransaction(this.db, async (tx) => {
      const workspaceId = data?.workspace_id ?? null;
      const fresh = await sql<{ id: string }>`
        insert into checkout_events (id, type, workspace_id, outcome) values (${event.id}, ${event.type}, ${workspaceId}, ${known ? 'recorded' : 'ignored'})
        on conflict (id) do nothing returning id`.execute(tx);
      if (fresh.rows.length === 0) return { received: true as const, id: event.id, outcome: 'replayed' as const };
      if (!known || !data) {
        this.log.info({ eventId: event.id, type: event.type }, 'checkout event of an unknown type ignored');
        return { received: true as const, id: event.id, outcome: 'ignored' as const };
      }
      const exists = await tx.selectFrom('workspaces').select('id').where('id', '=', data.workspace_id).executeTakeFirst();
      if (!exists) throw notFound('Workspace');
      const scope = operatorScope(data.workspace_id, 0);
      const at = new Date(event.created * 1000);
      if (event.type === 'sale.captured') return this.sale(tx, event.id, scope, data as SaleCapturedData, at);
      const refund = data as RefundCreatedData;
      const { itemId, refundedCents } = await recordCheckoutRefund(tx, scope, { orderId: refund.order_id, productId: refund.product_id, amountCents: refund.amount_cents, refundedAt: at });
      await reverseRefund(tx, data.workspace_id, itemId, BigInt(refundedCents));
      return { received: true as const, id: event.id, outcome: 'recorded' as const, order_item_ids: [itemId] };
    });
  }

  private async sale(tx: Tx, eventId: string, scope: ReturnType<typeof operatorScope>, data: SaleCapturedData, at: Date): Promise<CheckoutEventAnswer> {
    const errors = data.items.flatMap((item, i) => (item.discount_cents > item.subtotal_cents ? [{ path: `body/data/items/${i}/discount_cents`, message: 'must not exceed subtotal_cents' }] : []));
    const ids = new Set(data.items.map((i) => i.product_id));
    if (ids.size !== data.items.length) errors.push({ path: 'body/data/items', message: 'names a product twice' });
    if (data.items.reduce((s, i) => s + i.subtotal_cents - i.discount_cents, 0) > 2147483647) errors.push({ path: 'body/data/items', message: 'the order total is too large' });
    if (errors.length > 0) throw new AppError(CommonErrors.VALIDATION_FAILED, 'The sale is invalid', { errors });
    // One recording per checkout order, however many events name it.
    await sql`select pg_advisory_xact_lock(hashtext('checkout-order'), hashtext(${`${data.workspace_id}:${data.order_id}`}))`.execute(tx);
    const already = await tx
      .selectFrom('order_items')
      .select('id')
      .where('workspace_id', '=', data.workspace_id)
      .where('channel', '=', 'managed_checkout')
      .where('external_reference', '=', data.order_id)
      .execute();
    if (already.length > 0) {
      this.log.warn({ eventId, orderId: data.order_id }, 'sale.captured for an order already recorded; ignored');
      return { received: true, id: eventId, outcome: 'replayed', order_item_ids: already.map((r) => r.id) };
    }
    // A referral context counts only when this service signed it, for this workspace.
    let referral: { agreementId: number; visitedAt: Date } | null = null;
    if (data.referral) {
      const ctx = this.verifyReferral(data.referral);
      if (ctx && ctx.workspaceId === data.workspace_id) referral = { agreementId: ctx.agreementId, visitedAt: ctx.visitedAt };
      else this.log.warn({ eventId }, 'sale.captured carries a referral context that does not verify; no attribution');
    }
    const currency = data.currency.toLowerCase();
    const items = await recordCheckoutSale(tx, scope, {
      orderId: data.order_id,
      currency,
      customer: { email: data.customer.email, name: data.customer.name ?? null },
      items: data.items.map((i) => ({ productId: i.product_id, subtotalCents: i.subtotal_cents, discountCents: i.discount_cents })),
      purchasedAt: at,
    });
    for (const item of items) {
      await allocateSale(tx, data.workspace_id, {
        orderItemId: item.itemId,
        productId: item.productId,
        currency,
        subtotal: BigInt(item.subtotalCents),
        discount: BigInt(item.discountCents),
        basis: 'managed',
        soldAt: at,
        referral,
      });
    }
    return { received: true, id: eventId, outcome: 'recorded', order_item_ids: items.map((i) => i.itemId) };
  }
}
