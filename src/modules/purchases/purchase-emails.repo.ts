import type { Executor } from '../../platform/db/transaction.js';
import { sql } from 'kysely';

/**
 * What a purchase or grant e-mail says, read when it is sent: the product, the customer's address
 * in this workspace, the serial's code (never queued), the access it gives, and the workspace the
 * buyer knows (its name, and its portal when that is on).
 */
export interface EmailItem {
  productName: string;
  email: string;
  customerStatus: string;
  serialCode: string | null;
  sale_price_cents: number;
  currency: string;
  accessKind: string | null;
  accessEndsAt: Date | null;
  workspaceName: string;
  workspaceSlug: string | null;
  portalEnabled: boolean;
}

/**
 * What the e-mails of several items say, each item of its own workspace, in one statement: answers by position (undefined: the item is gone).
 *
 * Each item is found by its primary key, its workspace checked as a filter: written as `is not distinct from`, the
 * workspace is not an equality the planner can join on, so no plan reaches the items through the workspace (its
 * index on `workspace_id` scans every item of a workspace per key). Such a plan was chosen while the table's
 * statistics still described it as nearly empty (a database without autovacuum, as CI's server runs): 4–7 s per
 * read of 64 items at 10,000 items, most of a CPU during the checkout bench.
 */
export async function itemsForEmail(db: Executor, keys: Array<{ workspaceId: number; orderItemId: number }>) {
  if (keys.length === 0) return [];
  const result = await sql<EmailItem & { position: number }>`
    select k.n::int as position, p.name as "productName", dc.email, dc.status as "customerStatus", s.code as "serialCode", oi.sale_price_cents, oi.currency,
           e.kind as "accessKind", e.ends_at as "accessEndsAt", w.name as "workspaceName", w.slug as "workspaceSlug", w.customer_portal_enabled as "portalEnabled"
    from unnest(${keys.map((k) => k.workspaceId)}::int[], ${keys.map((k) => k.orderItemId)}::int[]) with ordinality as k(workspace_id, order_item_id, n)
    join order_items oi on oi.id = k.order_item_id and oi.workspace_id is not distinct from k.workspace_id
    join products p on p.workspace_id = oi.workspace_id and p.id = oi.product_id
    join developer_customers dc on dc.workspace_id = oi.workspace_id and dc.account_id = oi.customer_id
    left join serials s on s.workspace_id = oi.workspace_id and s.id = oi.serial_id
    left join entitlements e on e.workspace_id = oi.workspace_id and e.order_item_id = oi.id
    join workspaces w on w.id = oi.workspace_id`.execute(db);
  const out: Array<EmailItem | undefined> = keys.map(() => undefined);
  for (const { position, ...row } of result.rows) out[position - 1] = row;
  return out;
}
