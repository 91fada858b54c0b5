import { createHash } from 'node:crypto';
import stableStringify from 'safe-stable-stringify';
import type { FastifyBaseLogger } from 'fastify';
import pLimit, { type LimitFunction } from 'p-limit';
import { operatorScope, type Scope } from '../../platform/auth/scope.js';
import { Batcher } from '../../platform/db/batcher.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, type FieldError, notFound } from '../../platform/http/errors.js';
import { jsonValidator } from '../../platform/http/validation.js';
import { isIsoCurrency } from '../../platform/money/currencies.js';
import { getVisibleProductOrThrow, visibleProducts } from '../products/index.js';
import { checkoutItemKey, lockCheckoutItems, type RefundableItem } from '../purchases/index.js';
import { bookCheckoutRefund, bookCheckoutRefunds, bookSale, bookSales, type ReferralVerifier, type SaleToBook } from './checkout.booking.js';
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

const eventTimeInRange = (created: number, signedAt: number) => created >= signedAt - EVENT_MAX_AGE_SECONDS && created <= signedAt + EVENT_MAX_LEAD_SECONDS;

/** An event happens before it is signed (give or take the clock skew), and not long before. */
function checkEventTime(created: number, signedAt: number): void {
  if (eventTimeInRange(created, signedAt)) return;
  throw new AppError(
    CheckoutErrors.CHECKOUT_EVENT_TIME_OUT_OF_RANGE,
    `created (${created}) must lie between 30 days before and 5 minutes after the signature time (${signedAt})`,
    { errors: [{ path: 'body/created', message: 'is too far from the signature time' }] },
  );
}

/** What is wrong with a sale on its face (no database needed), or null. */
function saleRefusal(data: SaleCapturedData): AppError | null {
  const errors = data.items.flatMap((item, i) => (item.discount_cents > item.subtotal_cents ? [{ path: `body/data/items/${i}/discount_cents`, message: 'must not exceed subtotal_cents' }] : []));
  const ids = new Set(data.items.map((i) => i.product_id));
  if (ids.size !== data.items.length) errors.push({ path: 'body/data/items', message: 'names a product twice' });
  if (data.items.reduce((s, i) => s + i.subtotal_cents - i.discount_cents, 0) > 2147483647) errors.push({ path: 'body/data/items', message: 'the order total is too large' });
  if (errors.length > 0) return new AppError(CommonErrors.VALIDATION_FAILED, 'The sale is invalid', { errors });
  if (!isIsoCurrency(data.currency)) {
    return new AppError(CheckoutErrors.CHECKOUT_CURRENCY_UNKNOWN, `${data.currency} is not a current ISO 4217 currency code`, { errors: [{ path: 'body/data/currency', message: 'is not a current ISO 4217 code' }] });
  }
  return null;
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

/** A sale waiting for the next group booking. */
interface QueuedSale {
  event: CheckoutEventBody;
  data: SaleCapturedData;
  digest: Buffer;
  signedAt: number;
}

/** A refund waiting for the next group booking of refunds. */
interface QueuedRefund {
  event: CheckoutEventBody;
  data: RefundCreatedData;
  digest: Buffer;
  signedAt: number;
}

/** What the group booking made of a sale: its answer, or that it goes the one-event path (anything out of the ordinary). */
type GroupResult = { answer: CheckoutEventAnswer } | { alone: true };
const ALONE: GroupResult = { alone: true };

/** How many sales one group booking takes at most (each has at most 100 items). */
export const MAX_SALES_PER_BOOKING = 64;
/** Group bookings at once per instance: one is prepared and sent while the database works on the other. */
export const GROUP_BOOKING_LANES = 2;
/** How many refunds one group booking takes at most (a refund names one item). */
export const MAX_REFUNDS_PER_BOOKING = 64;

/**
 * Sales and refunds reported by the managed checkout. An event's id is recorded with a digest of
 * its content in the transaction that books it, so a replay (same id, same content) changes
 * nothing, another event under a used id is refused, and an event that fails records nothing.
 *
 * Sales that arrive while a booking runs are booked together in the next one (a group commit: one
 * transaction, the statements of one sale, no timer and no added wait): every sale of the group
 * is checked first, and only sales with nothing out of the ordinary are booked together — a known
 * event id, a time out of range, an unknown workspace or product, a currency mismatch, the same
 * order twice all take the one-event path below, which answers them as it always has. A group
 * that fails as a whole (a lock timeout, a collision) commits nothing, and each of its sales is
 * then booked alone. Either way an event is answered only once its sale is booked.
 */
export class CheckoutEvents {
  private readonly groups: Batcher<QueuedSale, GroupResult>;
  private readonly refundGroups: Batcher<QueuedRefund, GroupResult>;
  private readonly alone: LimitFunction;

  constructor(
    private readonly db: Db,
    private readonly verifyReferral: ReferralVerifier,
    private readonly log: FastifyBaseLogger,
    /** One-event bookings at once (refunds, other types, sales out of the ordinary). */
    concurrency = 4,
  ) {
    this.groups = new Batcher((sales) => this.bookGroup(sales), MAX_SALES_PER_BOOKING, GROUP_BOOKING_LANES);
    this.refundGroups = new Batcher((refunds) => this.bookRefundGroup(refunds), MAX_REFUNDS_PER_BOOKING, GROUP_BOOKING_LANES);
    this.alone = pLimit(concurrency);
  }

  /** Events admitted and not answered yet: waiting for a group or a turn, or being booked. */
  get inFlight(): number {
    return this.groups.pending + this.refundGroups.pending + this.alone.activeCount + this.alone.pendingCount;
  }

  /** `signedAt`: the signature's `t` (Unix seconds), which bounds the event's own time. */
  async handle(event: CheckoutEventBody, signedAt: number): Promise<CheckoutEventAnswer> {
    if (event.type === 'sale.captured') {
      const data = checked(checkSale(event.data));
      const result = await this.groups.add({ event, data, digest: digestOf(event), signedAt }).catch((error: unknown) => {
        this.log.warn({ err: error, eventId: event.id }, 'a group booking of checkout sales failed; each of its sales is booked alone');
        return ALONE;
      });
      if ('answer' in result) return result.answer;
    } else if (event.type === 'refund.created') {
      const data = checked(checkRefund(event.data));
      const result = await this.refundGroups.add({ event, data, digest: digestOf(event), signedAt }).catch((error: unknown) => {
        this.log.warn({ err: error, eventId: event.id }, 'a group booking of checkout refunds failed; each of its refunds is booked alone');
        return ALONE;
      });
      if ('answer' in result) return result.answer;
    }
    return this.alone(() => this.handleAlone(event, signedAt));
  }

  /** One event in its own transaction: the path every event can take, and the one that answers each refusal. */
  private async handleAlone(event: CheckoutEventBody, signedAt: number): Promise<CheckoutEventAnswer> {
    const known = event.type === 'sale.captured' || event.type === 'refund.created';
    const data = event.type === 'sale.captured' ? checked(checkSale(event.data)) : event.type === 'refund.created' ? checked(checkRefund(event.data)) : null;
    const digest = digestOf(event);
    return inTransaction(this.db, async (tx) => {
      const workspaceId = data?.workspace_id ?? null;
      // Locks in the group booking's order: a refund's item before its event id (the group locks its
      // items, then records its ids). Recording the id first could deadlock with a group of another
      // instance that holds the item and records the same id.
      if (event.type === 'refund.created' && data) {
        const refund = data as RefundCreatedData;
        await lockCheckoutItems(tx, operatorScope(refund.workspace_id, 0), [{ orderId: refund.order_id, productId: refund.product_id }]);
      }
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

  /**
   * Books the sales of a group that have nothing out of the ordinary, together, in one
   * transaction; the others are answered `ALONE`. The checks are the one-event path's, read for
   * the whole group at once.
   */
  private async bookGroup(sales: QueuedSale[]): Promise<GroupResult[]> {
    const results: GroupResult[] = sales.map(() => ALONE);
    const candidates = groupCandidates(sales, (q) => saleRefusal(q.data) === null);
    if (candidates.length === 0) return results;
    await inTransaction(this.db, async (tx) => {
      const byWorkspace = await newEventsByWorkspace(tx, candidates);
      const booking: Array<{ scope: Scope; sales: QueuedSale[] }> = [];
      for (const [workspaceId, queued] of byWorkspace) {
        const scope = operatorScope(workspaceId, 0);
        const products = await visibleProducts(tx, scope, queued.flatMap((q) => q.data.items.map((i) => i.product_id)));
        const orders = new Set<string>();
        const ordinary = queued.filter((q) => {
          const currency = q.data.currency.toLowerCase();
          const priced = q.data.items.every((i) => products.get(i.product_id)?.currency.trim().toLowerCase() === currency);
          // The same order twice in a group: the second is answered as a replay on its own, once the first is booked.
          if (!priced || orders.has(q.data.order_id)) return false;
          orders.add(q.data.order_id);
          return true;
        });
        if (ordinary.length > 0) booking.push({ scope, sales: ordinary });
      }
      const recorded = await repo.recordEvents(
        tx,
        booking.flatMap((b) => b.sales.map((q) => ({ id: q.event.id, type: q.event.type, workspaceId: q.data.workspace_id, outcome: 'recorded' as const, digest: q.digest }))),
      );
      for (const { scope, sales: queued } of booking) {
        // An id another instance recorded meanwhile is not booked here: the one-event path answers it.
        const mine = queued.filter((q) => recorded.has(q.event.id));
        const booked = await bookSales(
          tx,
          scope,
          mine.map((q) => toSale(q.data, new Date(q.event.created * 1000))),
          { verifyReferral: this.verifyReferral, log: this.log },
        );
        mine.forEach((q, i) => {
          results[sales.indexOf(q)] = { answer: { received: true, id: q.event.id, outcome: booked[i]!.outcome, order_item_ids: booked[i]!.items.map((item) => item.orderItemId) } };
        });
      }
    });
    return results;
  }

  /**
   * Books the refunds of a group that have nothing out of the ordinary, together, in one
   * transaction, as `bookGroup` does sales; the others are answered `ALONE`: a used event id, a
   * time out of range, an unknown workspace, an item that does not exist, an item refunded twice
   * in the group (the second is booked after the first, on its own), a refund beyond what was paid.
   */
  private async bookRefundGroup(refunds: QueuedRefund[]): Promise<GroupResult[]> {
    const results: GroupResult[] = refunds.map(() => ALONE);
    const candidates = groupCandidates(refunds, () => true);
    if (candidates.length === 0) return results;
    await inTransaction(this.db, async (tx) => {
      const byWorkspace = await newEventsByWorkspace(tx, candidates);
      const booking: Array<{ scope: Scope; refunds: Array<{ q: QueuedRefund; item: RefundableItem }> }> = [];
      for (const [workspaceId, queued] of byWorkspace) {
        const scope = operatorScope(workspaceId, 0);
        const items = await lockCheckoutItems(tx, scope, queued.map((q) => ({ orderId: q.data.order_id, productId: q.data.product_id })));
        const taken = new Set<number>();
        const ordinary = queued.flatMap((q) => {
          const item = items.get(checkoutItemKey(q.data.order_id, q.data.product_id));
          if (!item || taken.has(item.id) || item.refunded_cents + q.data.amount_cents > item.sale_price_cents) return [];
          taken.add(item.id);
          return [{ q, item }];
        });
        if (ordinary.length > 0) booking.push({ scope, refunds: ordinary });
      }
      const recorded = await repo.recordEvents(
        tx,
        booking.flatMap((b) => b.refunds.map(({ q }) => ({ id: q.event.id, type: q.event.type, workspaceId: q.data.workspace_id, outcome: 'recorded' as const, digest: q.digest }))),
      );
      for (const { scope, refunds: queued } of booking) {
        // An id another instance recorded meanwhile is not booked here: the one-event path answers it.
        const mine = queued.filter(({ q }) => recorded.has(q.event.id));
        const itemIds = await bookCheckoutRefunds(
          tx,
          scope,
          mine.map(({ q, item }) => ({ item, amountCents: q.data.amount_cents, refundedAt: new Date(q.event.created * 1000) })),
        );
        mine.forEach(({ q }, i) => {
          results[refunds.indexOf(q)] = { answer: { received: true, id: q.event.id, outcome: 'recorded', order_item_ids: [itemIds[i]!] } };
        });
      }
    });
    return results;
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
    const refusal = saleRefusal(data);
    if (refusal) throw refusal;
    const sale = toSale(data, at);
    // One recording per checkout order, however many events name it.
    const booked = await bookSale(tx, scope, sale, { verifyReferral: this.verifyReferral, log: this.log, beforeRecording: () => checkProductCurrencies(tx, scope, data, sale.currency) });
    return { received: true, id: eventId, outcome: booked.outcome, order_item_ids: booked.items.map((i) => i.orderItemId) };
  }
}

/** An event waiting for a group booking (a sale or a refund). */
type Queued = { event: CheckoutEventBody; data: { workspace_id: number }; signedAt: number };

/**
 * The events of a group that may be booked together, as far as they can be told without the database: each id
 * once (the first is booked in the group, the rest answer as replays, or 409, on their own), its time in range, and
 * whatever `ordinary` asks of its type.
 */
function groupCandidates<Q extends Queued>(queued: Q[], ordinary: (q: Q) => boolean): Q[] {
  const ids = new Set<string>();
  return queued.filter((q) => {
    if (ids.has(q.event.id)) return false;
    ids.add(q.event.id);
    return eventTimeInRange(q.event.created, q.signedAt) && ordinary(q);
  });
}

/** The candidates whose id is not taken yet and whose workspace exists, by workspace (the others go the one-event path). */
async function newEventsByWorkspace<Q extends Queued>(tx: Tx, candidates: Q[]): Promise<Map<number, Q[]>> {
  const used = await repo.usedEventIds(tx, candidates.map((q) => q.event.id));
  const workspaces = await repo.existingWorkspaces(tx, [...new Set(candidates.map((q) => q.data.workspace_id))]);
  const byWorkspace = new Map<number, Q[]>();
  for (const q of candidates) {
    if (used.has(q.event.id) || !workspaces.has(q.data.workspace_id)) continue;
    byWorkspace.set(q.data.workspace_id, [...(byWorkspace.get(q.data.workspace_id) ?? []), q]);
  }
  return byWorkspace;
}

/** Of the content, not the bytes: the same event serialised with other spacing or key order is a replay. */
const digestOf = (event: CheckoutEventBody) => createHash('sha256').update(stableStringify(event)).digest();

/** A checked sale event as the booking takes it: the sale happened at the event's `created`. */
function toSale(data: SaleCapturedData, at: Date): SaleToBook {
  return {
    orderId: data.order_id,
    currency: data.currency.toLowerCase(),
    customer: { email: data.customer.email, name: data.customer.name ?? null },
    items: data.items.map((i) => ({ productId: i.product_id, subtotalCents: i.subtotal_cents, discountCents: i.discount_cents })),
    purchasedAt: at,
    referral: data.referral ?? null,
  };
}
