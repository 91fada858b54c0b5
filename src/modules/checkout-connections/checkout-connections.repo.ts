import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { CheckoutConnectionEventsTable, CheckoutConnectionsTable, CheckoutEventOutcome, CheckoutProvider } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// The checkout connections' queries. Every developer-side query starts from the scope's workspace;
// the provider webhook finds its connection by id first and then works in that connection's workspace.

export type ConnectionRecord = Selectable<CheckoutConnectionsTable>;
export type EventRecord = Selectable<CheckoutConnectionEventsTable>;

/** An id before the row exists: the sealed secret is bound to the connection it belongs to. */
export async function nextConnectionId(tx: Tx): Promise<number> {
  const result = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('checkout_connections', 'id'))::int as id`.execute(tx);
  return result.rows[0]!.id;
}

export async function insertConnection(
  tx: Tx,
  scope: Scope,
  row: { id: number; provider: CheckoutProvider; signingSecretSealed: string; apiKeySealed: string | null; enabled: boolean },
): Promise<void> {
  await tx
    .insertInto('checkout_connections')
    .values({ id: row.id, workspace_id: scope.workspaceId, provider: row.provider, signing_secret_sealed: row.signingSecretSealed, api_key_sealed: row.apiKeySealed, enabled: row.enabled })
    .execute();
}

export async function findConnection(db: Executor, scope: Scope, id: number, forUpdate = false): Promise<ConnectionRecord | undefined> {
  const query = db.selectFrom('checkout_connections').selectAll().where('workspace_id', '=', scope.workspaceId).where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export const listConnections = (db: Executor, scope: Scope): Promise<ConnectionRecord[]> =>
  db.selectFrom('checkout_connections').selectAll().where('workspace_id', '=', scope.workspaceId).orderBy('id').execute();

/** The connection a provider's webhook names, in whichever workspace it is (the caller checks the signature next). */
export const connectionForWebhook = (db: Executor, id: number): Promise<ConnectionRecord | undefined> =>
  db.selectFrom('checkout_connections').selectAll().where('id', '=', id).executeTakeFirst();

export async function updateConnection(
  tx: Tx,
  scope: Scope,
  id: number,
  change: { signing_secret_sealed?: string; api_key_sealed?: string | null; enabled?: boolean },
): Promise<void> {
  await tx.updateTable('checkout_connections').set({ ...change, updated_at: new Date() }).where('workspace_id', '=', scope.workspaceId).where('id', '=', id).execute();
}

export async function deleteConnection(tx: Tx, scope: Scope, id: number): Promise<void> {
  await tx.deleteFrom('checkout_connections').where('workspace_id', '=', scope.workspaceId).where('id', '=', id).execute();
}

/** Which of these product ids are products of the workspace. */
export async function workspaceProductIds(db: Executor, scope: Scope, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('products').select('id').where('workspace_id', '=', scope.workspaceId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export async function replaceMapping(tx: Tx, scope: Scope, connectionId: number, entries: Array<{ providerProductId: string; productId: number }>): Promise<void> {
  await tx.deleteFrom('checkout_connection_products').where('workspace_id', '=', scope.workspaceId).where('connection_id', '=', connectionId).execute();
  if (entries.length === 0) return;
  await tx
    .insertInto('checkout_connection_products')
    .values(entries.map((e) => ({ workspace_id: scope.workspaceId, connection_id: connectionId, provider_product_id: e.providerProductId, product_id: e.productId })))
    .execute();
}

export async function mappingsOf(db: Executor, scope: Scope, connectionIds: number[]) {
  if (connectionIds.length === 0) return [];
  return db
    .selectFrom('checkout_connection_products')
    .select(['connection_id', 'provider_product_id', 'product_id'])
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', 'in', connectionIds)
    .orderBy('provider_product_id')
    .execute();
}

/** The Patchbay products the given provider ids map to on a connection. */
export async function mappedProducts(db: Executor, scope: Scope, connectionId: number, providerIds: string[]): Promise<Map<string, number>> {
  if (providerIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('checkout_connection_products')
    .select(['provider_product_id', 'product_id'])
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', '=', connectionId)
    .where('provider_product_id', 'in', providerIds)
    .execute();
  return new Map(rows.map((r) => [r.provider_product_id, r.product_id]));
}

// ---- the event log

export async function findEvent(db: Executor, connectionId: number, providerEventId: string): Promise<EventRecord | undefined> {
  return db.selectFrom('checkout_connection_events').selectAll().where('connection_id', '=', connectionId).where('provider_event_id', '=', providerEventId).executeTakeFirst();
}

/**
 * Takes an event id for this delivery: the row (a placeholder outcome until the event is booked)
 * or undefined when the id is taken. A concurrent delivery of the same id waits here until the
 * first one's transaction ends, so an event is booked once however many deliveries race.
 */
export async function claimEvent(tx: Tx, event: { workspaceId: number; connectionId: number; providerEventId: string; type: string; digest: Buffer }): Promise<number | undefined> {
  const row = await tx
    .insertInto('checkout_connection_events')
    .values({ workspace_id: event.workspaceId, connection_id: event.connectionId, provider_event_id: event.providerEventId, type: event.type, outcome: 'ignored', body_digest: event.digest })
    .onConflict((oc) => oc.columns(['connection_id', 'provider_event_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function lockEvent(tx: Tx, connectionId: number, eventId: number): Promise<EventRecord | undefined> {
  return tx.selectFrom('checkout_connection_events').selectAll().where('connection_id', '=', connectionId).where('id', '=', eventId).forUpdate().executeTakeFirst();
}

export interface EventOutcome {
  outcome: CheckoutEventOutcome;
  reason: string | null;
  orderItemIds: number[];
  /** Failed events only: the event as received, sealed, for a later re-processing. */
  payloadSealed: string | null;
  waitingFor: string | null;
}

export async function finishEvent(tx: Tx, id: number, result: EventOutcome, countAttempt: boolean): Promise<EventRecord> {
  return tx
    .updateTable('checkout_connection_events')
    .set((eb) => ({
      outcome: result.outcome,
      reason: result.reason,
      order_item_ids: result.orderItemIds,
      payload_sealed: result.payloadSealed,
      waiting_for: result.waitingFor,
      processed_at: new Date(),
      ...(countAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A failed first delivery, written after its booking rolled back; a concurrent delivery that got further wins. */
export async function insertFailedEvent(
  tx: Tx,
  event: { workspaceId: number; connectionId: number; providerEventId: string; type: string; digest: Buffer; reason: string; payloadSealed: string; waitingFor: string | null },
): Promise<EventRecord | undefined> {
  return tx
    .insertInto('checkout_connection_events')
    .values({
      workspace_id: event.workspaceId,
      connection_id: event.connectionId,
      provider_event_id: event.providerEventId,
      type: event.type,
      outcome: 'failed',
      reason: event.reason,
      body_digest: event.digest,
      payload_sealed: event.payloadSealed,
      waiting_for: event.waitingFor,
    })
    .onConflict((oc) => oc.columns(['connection_id', 'provider_event_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function listEvents(db: Executor, scope: Scope, connectionId: number, outcome: CheckoutEventOutcome | undefined, page: { limit: number; offset: number }) {
  let base = db.selectFrom('checkout_connection_events').where('workspace_id', '=', scope.workspaceId).where('connection_id', '=', connectionId);
  if (outcome) base = base.where('outcome', '=', outcome);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export async function findEventOf(db: Executor, scope: Scope, connectionId: number, eventId: number): Promise<EventRecord | undefined> {
  return db.selectFrom('checkout_connection_events').selectAll().where('workspace_id', '=', scope.workspaceId).where('connection_id', '=', connectionId).where('id', '=', eventId).executeTakeFirst();
}

/** Failed sales of a connection that wait for a customer's e-mail (Paddle). */
export async function eventsWaitingFor(db: Executor, connectionId: number, providerCustomerId: string): Promise<number[]> {
  const rows = await db.selectFrom('checkout_connection_events').select('id').where('connection_id', '=', connectionId).where('waiting_for', '=', providerCustomerId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

// ---- the orders connections booked, and their refunds

/** What a booked provider order keeps of each item, to carry refunds over to it. */
export interface OrderItemRef {
  key: string;
  productId: number;
  orderItemId: number;
  paidCents: number;
  salePriceCents: number;
}

export async function insertOrder(
  tx: Tx,
  scope: Scope,
  order: { connectionId: number; providerOrderId: string; paymentRef: string | null; currency: string; items: OrderItemRef[] },
): Promise<void> {
  await tx
    .insertInto('checkout_connection_orders')
    .values({
      workspace_id: scope.workspaceId,
      connection_id: order.connectionId,
      provider_order_id: order.providerOrderId,
      payment_ref: order.paymentRef,
      currency: order.currency,
      items: JSON.stringify(order.items),
    })
    .onConflict((oc) => oc.columns(['connection_id', 'provider_order_id']).doNothing())
    .execute();
}

/** A booked order by the provider's order id or (Stripe) payment intent, locked: refunds of one order take turns. */
export async function lockOrder(tx: Tx, scope: Scope, connectionId: number, ref: { orderId: string } | { paymentRef: string }) {
  let query = tx
    .selectFrom('checkout_connection_orders')
    .select(['provider_order_id', 'items', 'reported_refunded_cents'])
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', '=', connectionId);
  query = 'orderId' in ref ? query.where('provider_order_id', '=', ref.orderId) : query.where('payment_ref', '=', ref.paymentRef);
  const row = await query.forUpdate().executeTakeFirst();
  return row ? { providerOrderId: row.provider_order_id, items: row.items as OrderItemRef[], reportedRefundedCents: Number(row.reported_refunded_cents) } : undefined;
}

export async function raiseReportedTotal(tx: Tx, scope: Scope, connectionId: number, providerOrderId: string, totalCents: number): Promise<void> {
  await tx
    .updateTable('checkout_connection_orders')
    .set({ reported_refunded_cents: sql`greatest(reported_refunded_cents, ${totalCents})` })
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', '=', connectionId)
    .where('provider_order_id', '=', providerOrderId)
    .execute();
}

/** Records a refund by its id (per item, or `''` for the order); a refund seen before is not counted again. */
export async function recordRefundParts(
  tx: Tx,
  scope: Scope,
  connectionId: number,
  providerOrderId: string,
  refundKey: string,
  parts: Array<{ itemKey: string; amountCents: number }>,
): Promise<void> {
  if (parts.length === 0) return;
  await tx
    .insertInto('checkout_connection_refunds')
    .values(parts.map((p) => ({ workspace_id: scope.workspaceId, connection_id: connectionId, provider_order_id: providerOrderId, refund_key: refundKey, item_key: p.itemKey, amount_cents: p.amountCents })))
    .onConflict((oc) => oc.columns(['connection_id', 'provider_order_id', 'refund_key', 'item_key']).doNothing())
    .execute();
}

/** The refunds counted for an order, summed per item key (`''`: refunds of the whole order). */
export async function refundSums(tx: Tx, scope: Scope, connectionId: number, providerOrderId: string): Promise<Map<string, number>> {
  const rows = await tx
    .selectFrom('checkout_connection_refunds')
    .select(['item_key', sql<string>`sum(amount_cents)::text`.as('total')])
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', '=', connectionId)
    .where('provider_order_id', '=', providerOrderId)
    .groupBy('item_key')
    .execute();
  return new Map(rows.map((r) => [r.item_key, Number(r.total)]));
}

// ---- Paddle's customers

export async function upsertCustomer(tx: Tx, scope: Scope, connectionId: number, customer: { providerCustomerId: string; email: string; name: string | null }): Promise<void> {
  await tx
    .insertInto('checkout_connection_customers')
    .values({ workspace_id: scope.workspaceId, connection_id: connectionId, provider_customer_id: customer.providerCustomerId, email: customer.email, name: customer.name })
    .onConflict((oc) => oc.columns(['connection_id', 'provider_customer_id']).doUpdateSet({ email: customer.email, name: customer.name, updated_at: new Date() }))
    .execute();
}

export async function findCustomer(db: Executor, scope: Scope, connectionId: number, providerCustomerId: string) {
  return db
    .selectFrom('checkout_connection_customers')
    .select(['email', 'name'])
    .where('workspace_id', '=', scope.workspaceId)
    .where('connection_id', '=', connectionId)
    .where('provider_customer_id', '=', providerCustomerId)
    .executeTakeFirst();
}
