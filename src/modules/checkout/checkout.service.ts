import { createHash } from 'node:crypto';
import stableStringify from 'safe-stable-stringify';
import type { FastifyBaseLogger } from 'fastify';
import { operatorScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, type FieldError, notFound } from '../../platform/http/errors.js';
import { jsonValidator } from '../../platform/http/validation.js';
import { isIsoCurrency } from '../../platform/money/currencies.js';
import { getVisibleProductOrThrow } from '../products/index.js';
import { bookCheckoutRefund, bookSale, type ReferralVerifier } from './checkout.booking.js';
import { CheckoutErrors } from './checkout.errors.js';
import * as repo from './checkout.repo.js';
import { RefundCreatedData, SaleCapturedData, type CheckoutEventAnswer, type CheckoutEventBody } from './checkout.schemas.js';

export type { ReferralVerifier } from './checkout.booking.js';

// An event's data is checked by its type, with the rules of every request body (lengths in code points).
const checkSale = jsonValidator(SaleCapturedData, 'body/data');
const checkRefund = jsonValidator(RefundCreatedData, 'body/data');

function checked<T>(result: { ok: true; value: T } | { ok: false; errors: FieldError[] }): T {
  if (result.ok) return result.value;
  throw new AppError(CommonErrors.VALIDATION_FAILED, 'The event data is invalid', { errors: result.errors });
}

/** How far `created` may lie before the signature time: a checkout may redeliver an event for days after an outage. */
export const EVENT_MAX_AGE_SECONDS = 30 * 86_400;
/** How far `created` may lie after it: the checkout's event and signing clocks may be different machines. */
export const EVENT_MAX_LEAD_SECONDS = 300;

/** An event happens before it is signed (give or take the clock skew), and not long before. */
function checkEventTime(created: number, signedAt: number): void {
  if (created >= signedAt - EVENT_MAX_AGE_SECONDS && created <= signedAt + EVENT_MAX_LEAD_SECONDS) return;
  throw new AppError(
    CheckoutErrors.CHECKOUT_EVENT_TIME_OUT_OF_RANGE,
    `created (${created}) must lie between 30 days before and 5 minutes after the signature time (${signedAt})`,
    { errors: [{ path: 'body/created', message: 'is too far from the signature time' }] },
  );
}

/**
 * A sale is booked in its products' currency: no conversion rule exists, so a sale in another
 * currency than a product's price is refused rather than booked at a rate nobody chose.
 */
async function checkProductCurrencies(tx: Tx, scope: ReturnType<typeof operatorScope>, data: SaleCapturedData, currency: string): Promise<void> {
  const errors: FieldError[] = [];
  for (const [i, item] of data.items.entries()) {
    const product = await getVisibleProductOrThrow(tx, scope, item.product_id);
    const priced = product.currency.trim().toLowerCase();
    if (priced !== currency) errors.push({ path: `body/data/items/${i}/product_id`, message: `is priced in ${priced.toUpperCase()}, the sale is in ${currency.toUpperCase()}` });
  }
  if (errors.length > 0) throw new AppError(CheckoutErrors.CHECKOUT_CURRENCY_MISMATCH, 'The sale is not in its products’ currency; there is no conversion rule', { errors });
}

/**
 * Sales and refunds reported by the managed checkout. Each event is one transaction: its id is
 * recorded with a digest of its content, so a replay (same id, same content) changes nothing,
 * another event under a used id is refused, and an event that fails records nothing.
 */
export class CheckoutEvents {
  constructor(
    private readonly db: Db,
    private readonly verifyReferral: ReferralVerifier,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** `signedAt`: the signature's `t` (Unix seconds), which bounds the event's own time. */
  async handle(event: CheckoutEventBody, signedAt: number): Promise<CheckoutEventAnswer> {
    const known = event.type === 'sale.captured' || event.type === 'refund.created';
    const data = event.type === 'sale.captured' ? checked(checkSale(event.data)) : event.type === 'refund.created' ? checked(checkRefund(event.data)) : null;
    // Of the content, not the bytes: the same event serialised with other spacing or key order is a replay.
    const digest = createHash('sha256').update(stableStringify(event)).digest();
    return inTransaction(this.db, async (tx) => {
      const workspaceId = data?.workspace_id ?? null;
      const fresh = await repo.recordEvent(tx, { id: event.id, type: event.type, workspaceId, outcome: known ? 'recorded' : 'ignored', digest });
      // A replay is answered before the rules below: an event recorded once stays answerable however they change.
      if (!fresh) return this.replay(tx, event.id, digest);
      checkEventTime(event.created, signedAt);
      if (!known || !data) {
        this.log.info({ eventId: event.id, type: event.type }, 'checkout event of an unknown type ignored');
        return { received: true as const, id: event.id, outcome: 'ignored' as const };
      }
      if (!(await repo.workspaceExists(tx, data.workspace_id))) throw notFound('Workspace');
      const scope = operatorScope(data.workspace_id, 0);
      const at = new Date(event.created * 1000);
      if (event.type === 'sale.captured') return this.sale(tx, event.id, scope, data as SaleCapturedData, at);
      const refund = data as RefundCreatedData;
      const itemId = await bookCheckoutRefund(tx, scope, { orderId: refund.order_id, productId: refund.product_id, amountCents: refund.amount_cents, refundedAt: at });
      return { received: true as const, id: event.id, outcome: 'recorded' as const, order_item_ids: [itemId] };
    });
  }

  /** The id is taken: the same event again is a replay; another event under that id is refused. */
  private async replay(tx: Tx, eventId: string, digest: Buffer): Promise<CheckoutEventAnswer> {
    const known = await repo.storedDigest(tx, eventId);
    // Events recorded before digests were kept (null) cannot be compared; they stay replays.
    if (known && !digest.equals(known)) {
      this.log.warn({ eventId }, 'checkout event id reused for a different body; refused');
      throw new AppError(CheckoutErrors.CHECKOUT_EVENT_ID_REUSED, `Event ${eventId} was already received with a different body; an event id names one event`);
    }
    return { received: true, id: eventId, outcome: 'replayed' };
  }

  private async sale(tx: Tx, eventId: string, scope: ReturnType<typeof operatorScope>, data: SaleCapturedData, at: Date): Promise<CheckoutEventAnswer> {
    const errors = data.items.flatMap((item, i) => (item.discount_cents > item.subtotal_cents ? [{ path: `body/data/items/${i}/discount_cents`, message: 'must not exceed subtotal_cents' }] : []));
    const ids = new Set(data.items.map((i) => i.product_id));
    if (ids.size !== data.items.length) errors.push({ path: 'body/data/items', message: 'names a product twice' });
    if (data.items.reduce((s, i) => s + i.subtotal_cents - i.discount_cents, 0) > 2147483647) errors.push({ path: 'body/data/items', message: 'the order total is too large' });
    if (errors.length > 0) throw new AppError(CommonErrors.VALIDATION_FAILED, 'The sale is invalid', { errors });
    if (!isIsoCurrency(data.currency)) {
      throw new AppError(CheckoutErrors.CHECKOUT_CURRENCY_UNKNOWN, `${data.currency} is not a current ISO 4217 currency code`, { errors: [{ path: 'body/data/currency', message: 'is not a current ISO 4217 code' }] });
    }
    const currency = data.currency.toLowerCase();
    // One recording per checkout order, however many events name it.
    const booked = await bookSale(
      tx,
      scope,
      {
        orderId: data.order_id,
        currency,
        customer: { email: data.customer.email, name: data.customer.name ?? null },
        items: data.items.map((i) => ({ productId: i.product_id, subtotalCents: i.subtotal_cents, discountCents: i.discount_cents })),
        purchasedAt: at,
        referral: data.referral ?? null,
      },
      { verifyReferral: this.verifyReferral, log: this.log, beforeRecording: () => checkProductCurrencies(tx, scope, data, currency) },
    );
    return { received: true, id: eventId, outcome: booked.outcome, order_item_ids: booked.items.map((i) => i.orderItemId) };
  }
}
