import type { Executor } from '../../platform/db/transaction.js';

/**
 * What a purchase or grant e-mail says, read when it is sent: the product, the customer's address
 * in this workspace, the serial's code (never queued), the access it gives, and the workspace the
 * buyer knows (its name, and its portal when that is on).
 */
export async function itemForEmail(db: Executor, workspaceId: number, orderItemId: number) {
  return db
    .selectFrom('order_items as oi')
    .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 'oi.workspace_id').onRef('p.id', '=', 'oi.product_id'))
    .innerJoin('developer_customers as dc', (j) => j.onRef('dc.workspace_id', '=', 'oi.workspace_id').onRef('dc.account_id', '=', 'oi.customer_id'))
    .leftJoin('serials as s', (j) => j.onRef('s.workspace_id', '=', 'oi.workspace_id').onRef('s.id', '=', 'oi.serial_id'))
    .leftJoin('entitlements as e', (j) => j.onRef('e.workspace_id', '=', 'oi.workspace_id').onRef('e.order_item_id', '=', 'oi.id'))
    .innerJoin('workspaces as w', 'w.id', 'oi.workspace_id')
    .where('oi.workspace_id', '=', workspaceId)
    .where('oi.id', '=', orderItemId)
    .select(['p.name as productName', 'dc.email', 'dc.status as customerStatus', 's.code as serialCode', 'oi.sale_price_cents', 'oi.currency', 'e.kind as accessKind', 'e.ends_at as accessEndsAt', 'w.name as workspaceName', 'w.slug as workspaceSlug', 'w.customer_portal_enabled as portalEnabled'])
    .executeTakeFirst();
}
