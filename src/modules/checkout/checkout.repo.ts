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

/** Serialises the events that name one checkout order (until the transaction ends). */
export async function lockCheckoutOrder(tx: Tx, order: CheckoutOrderKey): Promise<void> {
  // The managed checkout's key is unchanged, so instances of the previous release serialise with this one.
  const key = order.channel === 'managed_checkout' ? `${order.workspaceId}:${order.orderId}` : `${order.workspaceId}:${order.provider}:${order.orderId}`;
  await sql`select pg_advisory_xact_lock(hashtext('checkout-order'), hashtext(${key}))`.execute(tx);
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
