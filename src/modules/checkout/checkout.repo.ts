import { sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// The checkout webhook's own queries: the events it has received, and the order items a checkout
// order already became. Every other write goes through the purchases and ledger modules.

/** Records an event's id with its digest; false when the id is already taken (a replay or a reused id). */
export async function recordEvent(
  tx: Tx,
  event: { id: string; type: string; workspaceId: number | null; outcome: 'recorded' | 'ignored'; digest: Buffer },
): Promise<boolean> {
  const fresh = await sql<{ id: string }>`
    insert into checkout_events (id, type, workspace_id, outcome, body_digest)
    values (${event.id}, ${event.type}, ${event.workspaceId}, ${event.outcome}, ${event.digest})
    on conflict (id) do nothing returning id`.execute(tx);
  return fresh.rows.length > 0;
}

/** The digest stored with an event id: null for events recorded before digests were kept. */
export async function storedDigest(db: Executor, eventId: string): Promise<Buffer | null> {
  const stored = await sql<{ body_digest: Buffer | null }>`select body_digest from checkout_events where id = ${eventId}`.execute(db);
  return stored.rows[0]?.body_digest ?? null;
}

export async function workspaceExists(db: Executor, workspaceId: number): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()) !== undefined;
}

/** An order of a checkout: the managed checkout's, or a connected store's (named by its provider). */
export interface CheckoutOrderKey {
  workspaceId: number;
  channel: 'managed_checkout' | 'external_store';
  provider: string;
  orderId: string;
}

// The managed checkout's key is unchanged, so instances of the previous release serialise with this one.
const orderLockKey = (order: CheckoutOrderKey) =>
  order.channel === 'managed_checkout' ? `${order.workspaceId}:${order.orderId}` : `${order.workspaceId}:${order.provider}:${order.orderId}`;

/** Serialises the events that name one checkout order (until the transaction ends). */
export async function lockCheckoutOrder(tx: Tx, order: CheckoutOrderKey): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('checkout-order'), hashtext(${orderLockKey(order)}))`.execute(tx);
}

/** The order items a checkout order already became (none: it was not recorded yet). */
export async function checkoutOrderItems(db: Executor, order: CheckoutOrderKey): Promise<Array<{ orderItemId: number; productId: number }>> {
  let query = db
    .selectFrom('order_items')
    .select(['id', 'product_id'])
    .where('workspace_id', '=', order.workspaceId)
    .where('channel', '=', order.channel)
    .where('external_reference', '=', order.orderId);
  if (order.channel === 'external_store') query = query.where('provider', '=', order.provider);
  const rows = await query.orderBy('id').execute();
  return rows.map((r) => ({ orderItemId: r.id, productId: r.product_id }));
}

/** `lockCheckoutOrder` for several orders of one workspace and source, in key order (so concurrent lockers cannot deadlock). */
export async function lockCheckoutOrders(tx: Tx, orders: CheckoutOrderKey[]): Promise<void> {
  const keys = [...new Set(orders.map(orderLockKey))].sort();
  if (keys.length === 1) {
    await sql`select pg_advisory_xact_lock(hashtext('checkout-order'), hashtext(${keys[0]!}))`.execute(tx);
    return;
  }
  // unnest keeps the array's order, so the locks are taken in key order.
  await sql`select count(pg_advisory_xact_lock(hashtext('checkout-order'), hashtext(k))) from unnest(${keys}::text[]) as k`.execute(tx);
}

/** `checkoutOrderItems` for several orders of one workspace and source, in one statement: order id → its items (recorded orders only). */
export async function checkoutOrdersItems(db: Executor, orders: CheckoutOrderKey[]): Promise<Map<string, Array<{ orderItemId: number; productId: number }>>> {
  const out = new Map<string, Array<{ orderItemId: number; productId: number }>>();
  if (orders.length === 0) return out;
  const first = orders[0]!;
  let query = db
    .selectFrom('order_items')
    .select(['id', 'product_id', 'external_reference'])
    .where('workspace_id', '=', first.workspaceId)
    .where('channel', '=', first.channel)
    .where('external_reference', 'in', [...new Set(orders.map((o) => o.orderId))]);
  if (first.channel === 'external_store') query = query.where('provider', '=', first.provider);
  for (const r of await query.orderBy('id').execute()) {
    const key = r.external_reference!;
    out.set(key, [...(out.get(key) ?? []), { orderItemId: r.id, productId: r.product_id }]);
  }
  return out;
}

/** `recordEvent` for several events in one statement: the ids recorded now (an id taken before, or meanwhile, is not). */
export async function recordEvents(
  tx: Tx,
  events: Array<{ id: string; type: string; workspaceId: number | null; outcome: 'recorded' | 'ignored'; digest: Buffer }>,
): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  // In id order, so two groups recording some of the same ids wait for each other instead of deadlocking.
  events = [...events].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const fresh = await sql<{ id: string }>`
    insert into checkout_events (id, type, workspace_id, outcome, body_digest)
    select x.id, x.type, x.workspace_id, x.outcome, x.body_digest
    from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.type)}::text[], ${events.map((e) => e.workspaceId)}::int[],
                ${events.map((e) => e.outcome)}::text[], ${events.map((e) => e.digest)}::bytea[]) as x(id, type, workspace_id, outcome, body_digest)
    on conflict (id) do nothing returning id`.execute(tx);
  return new Set(fresh.rows.map((r) => r.id));
}

/** Which of these event ids are recorded already. */
export async function usedEventIds(db: Executor, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const used = await sql<{ id: string }>`select id from checkout_events where id = any(${ids}::text[])`.execute(db);
  return new Set(used.rows.map((r) => r.id));
}

/** Which of these workspaces exist. */
export async function existingWorkspaces(db: Executor, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('workspaces').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}
