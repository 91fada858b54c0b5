import { sql } from 'kysely';
import type { Executor } from '../../platform/db/transaction.js';

/** What a referral link leads to: its agreement and the storefront addresses it may redirect to. */
export interface ReferralTarget {
  agreement_id: number;
  workspace_id: number;
  status: string;
  workspace_url: string | null;
  /** The asked-for product, when it is an active product of the agreement's workspace. */
  product_id: number | null;
  product_url: string | null;
}

export interface VisitRow {
  workspaceId: number;
  agreementId: number;
  productId: number | null;
  visitedAt: Date;
  addressHash: string;
  userAgentClass: 'bot' | 'mobile' | 'desktop' | 'other';
}

/**
 * The public side of an affiliate agreement, by its code (the code is the credential, so no scope):
 * one query for the agreement, its workspace's storefront and the product asked for. A product of
 * another workspace never joins, and a workspace whose partner features are off finds nothing.
 */
export async function referralTarget(db: Executor, code: string, productId: number | null): Promise<ReferralTarget | undefined> {
  return db
    .selectFrom('partner_agreements as a')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .leftJoin('products as p', (join) =>
      join
        .onRef('p.workspace_id', '=', 'a.workspace_id')
        .on('p.id', '=', productId ?? 0)
        .on('p.status', '=', 'active'),
    )
    .where('a.referral_code', '=', code)
    .where('a.kind', '=', 'affiliate')
    .where('w.partner_programs_enabled', '=', true)
    .select(['a.id as agreement_id', 'a.workspace_id', 'a.status', 'w.storefront_url as workspace_url', 'p.id as product_id', 'p.storefront_url as product_url'])
    .executeTakeFirst();
}

/** One statement for the whole batch, whatever its size. */
export async function insertVisits(db: Executor, rows: VisitRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO partner_referral_visits (workspace_id, agreement_id, product_id, visited_at, address_hash, user_agent_class)
    SELECT * FROM unnest(
      ${rows.map((r) => r.workspaceId)}::int[], ${rows.map((r) => r.agreementId)}::int[], ${rows.map((r) => r.productId)}::int[],
      ${rows.map((r) => r.visitedAt.toISOString())}::timestamptz[], ${rows.map((r) => r.addressHash)}::text[], ${rows.map((r) => r.userAgentClass)}::text[])`.execute(db);
}
