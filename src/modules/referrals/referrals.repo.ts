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

/** The recipient's own agreement (its workspace's partner programs on), or nothing: another's answers as unknown. */
export async function recipientAgreement(db: Executor, recipientId: number, agreementId: number) {
  return db
    .selectFrom('partner_agreements as a')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .where('a.id', '=', agreementId)
    .where('a.recipient_id', '=', recipientId)
    .where('w.partner_programs_enabled', '=', true)
    .select(['a.id', 'a.workspace_id', 'a.kind'])
    .executeTakeFirst();
}

export interface VisitDay {
  day: string;
  visits: number;
  bot_visits: number;
}

/** Visits per UTC day since `since`, and all-time totals, in one statement (one snapshot): counts only, nothing of who visited. */
export async function visitCounts(db: Executor, workspaceId: number, agreementId: number, since: Date): Promise<{ days: VisitDay[]; total: number; last: Date | null }> {
  const result = await sql<{ total: number; last: Date | string | null; days: VisitDay[] | string }>`
    select count(*)::int as total, max(visited_at) as last,
      (select coalesce(json_agg(d order by d.day), '[]'::json) from (
         select to_char(visited_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as visits,
                (count(*) filter (where user_agent_class = 'bot'))::int as bot_visits
         from partner_referral_visits
         where workspace_id = ${workspaceId} and agreement_id = ${agreementId} and visited_at >= ${since.toISOString()}::timestamptz
         group by 1) d) as days
    from partner_referral_visits where workspace_id = ${workspaceId} and agreement_id = ${agreementId}`.execute(db);
  const row = result.rows[0]!;
  return { days: typeof row.days === 'string' ? (JSON.parse(row.days) as VisitDay[]) : row.days, total: row.total, last: row.last === null ? null : new Date(row.last) };
}
