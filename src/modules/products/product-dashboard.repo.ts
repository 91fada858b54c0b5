import { type RawBuilder, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductEnvironment, ReviewStatus } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';
import type { CredentialRecord, KeyRecord } from './product-credentials.repo.js';
import type { FileRecord } from './product-files.repo.js';
import type { ReviewRow } from './product-reviews.repo.js';
import type { VersionRow } from './product-versions.repo.js';
import type { ProductRecord } from './products.repo.js';

// The dashboard's reads, in one statement: the product row and, as JSON built by PostgreSQL, every section the
// caller may read (a section without its permission is not in the statement at all). A view used to send about
// fifteen statements, each a round trip and a pool checkout; at ten views at once they queued on the pool of ten.
// Every sub-select starts from the caller's workspace and the one product, like the section's own route.

/** Which sections the statement reads (the caller's `access`). */
export interface DashboardSections {
  analytics: boolean;
  reviews: boolean;
  files: boolean;
  credentials: boolean;
}

export interface SalesWindowRow {
  currency: string;
  window: number;
  orders: number;
  units: number;
  gross: string;
  refunds: string;
}

export interface DashboardRead {
  product: ProductRecord;
  /** The workspace's storefront URL, read only when the product names none. */
  workspaceStorefront: string | null;
  versions: VersionRow[];
  files: FileRecord[] | null;
  analytics: {
    sales: SalesWindowRow[];
    customers: number;
    orders: number;
    activity: {
      sales: Array<{ id: number; order_id: number; channel: string; record_type: string; currency: string; sale_price_cents: number; at: Date }>;
      refunds: Array<{ id: number; order_id: number; currency: string; refunded_cents: number; refund_status: string; at: Date }>;
      serials: Array<{ serial_id: number; action: string; actor_type: string; after_status: string | null; at: Date }>;
      events: Array<{ kind: string; data: unknown; at: Date }>;
    };
  } | null;
  reviews: { latest: ReviewRow[]; counts: Array<{ status: ReviewStatus; rating: number; n: number }> } | null;
  /** Undefined without credentials access; null when the product has no credential for the environment. */
  credential?: { credential: CredentialRecord; key: KeyRecord | null } | null;
}

/** An array of the sub-select's rows as JSON, in the sub-select's order ('[]' when it has none). */
const jsonRows = (from: RawBuilder<unknown>) => sql`(select coalesce(json_agg(s), '[]'::json) from (${from}) as s)`;

// JSON carries a timestamp as ISO text with microseconds; `new Date` keeps its milliseconds as the driver's parser
// does (both truncate), so a section's times read the same as from its own route.
const date = (text: string) => new Date(text);
const dateOrNull = (text: string | null) => (text === null ? null : new Date(text));

/**
 * The rows behind the `product_sales_daily` view (folded part and deltas, migration 0027), without the view's
 * regrouping by day: every figure here is a sum over days, and a sum of the parts is the sum of the view's rows.
 * Through the view, its per-day aggregate over three years of rows was most of the statement's time.
 */
const salesDays = (w: number, productId: number, andDays: RawBuilder<unknown>) => sql`
  select day, currency, orders, units, gross_cents, refunds_cents from product_sales_daily_folded where workspace_id = ${w} and product_id = ${productId} ${andDays}
  union all
  select day, currency, orders, units, gross_cents, refunds_cents from product_sales_daily_deltas where workspace_id = ${w} and product_id = ${productId} ${andDays}`;

export async function dashboardRead(
  db: Executor,
  scope: Scope,
  productId: number,
  sections: DashboardSections,
  options: { windows: readonly number[]; activityLimit: number; reviewLimit: number; environment: ProductEnvironment },
): Promise<DashboardRead | undefined> {
  if (scope.products !== 'all' && !scope.products.has(productId)) return undefined;
  const w = scope.workspaceId;
  const columns: RawBuilder<unknown>[] = [
    sql`p.id, p.name, p.description, p.status, p.app_id, p.price_cents, p.currency, p.max_activations, p.offline_grace_days, p.storefront_url,
      p.current_version, p.downloads_total, p.created_at, p.updated_at`,
    sql`case when coalesce(p.storefront_url, '') = '' then (select ws.storefront_url from workspaces ws where ws.id = ${w}) end as workspace_storefront`,
    sql`${jsonRows(sql`
      select id, version, changelog, release_date, is_current, created_at, updated_at from product_versions
      where workspace_id = ${w} and product_id = ${productId}
      order by is_current desc, release_date desc nulls last, id desc`)} as versions`,
  ];
  if (sections.files) {
    columns.push(sql`${jsonRows(sql`
      select id, product_id, filename, platform, type, version, managed, storage_key, external_url, content_type, size_bytes, sha256, uploaded_at
      from product_files where workspace_id = ${w} and product_id = ${productId}
      order by uploaded_at desc, id`)} as files`);
  }
  if (sections.analytics) {
    const longest = Math.max(...options.windows);
    const limit = options.activityLimit;
    columns.push(
      sql`${jsonRows(sql`
        select d.currency, w.days as window, coalesce(sum(d.orders), 0)::int as orders, coalesce(sum(d.units), 0)::int as units,
               coalesce(sum(d.gross_cents), 0)::text as gross, coalesce(sum(d.refunds_cents), 0)::text as refunds
        from (${salesDays(w, productId, sql`and day > (now() at time zone 'utc')::date - ${longest}::int`)}) d
        join unnest(${[...options.windows]}::int[]) as w(days) on d.day > (now() at time zone 'utc')::date - w.days
        group by d.currency, w.days`)} as sales`,
      // Both from maintained counters (migrations 0027 and 0030): a few index reads, never a count over the product's customers.
      sql`(select coalesce(sum(active_customers), 0) from product_customer_counts where workspace_id = ${w} and product_id = ${productId})::int as customers`,
      sql`(select coalesce(sum(orders), 0) from (${salesDays(w, productId, sql``)}) d)::int as orders`,
      sql`${jsonRows(sql`
        select id, order_id, channel, record_type, currency, sale_price_cents, purchased_at as at from order_items
        where workspace_id = ${w} and product_id = ${productId} order by purchased_at desc limit ${limit}`)} as activity_sales`,
      sql`${jsonRows(sql`
        select id, order_id, currency, refunded_cents, refund_status, refunded_at as at from order_items
        where workspace_id = ${w} and product_id = ${productId} and refunded_at is not null order by refunded_at desc limit ${limit}`)} as activity_refunds`,
      sql`${jsonRows(sql`
        select serial_id, action, actor_type, after_status, created_at as at from serial_events
        where workspace_id = ${w} and product_id = ${productId} order by created_at desc limit ${limit}`)} as activity_serials`,
      sql`${jsonRows(sql`
        select kind, data, occurred_at as at from product_events
        where workspace_id = ${w} and product_id = ${productId} order by occurred_at desc limit ${limit}`)} as activity_events`,
    );
  }
  if (sections.reviews) {
    columns.push(
      sql`${jsonRows(sql`
        select r.id, r.product_id, r.rating, r.title, r.body, r.status, r.customer_name, r.customer_email, r.imported, r.verified, r.metadata, r.created_at,
          (select dc.id from developer_customers dc where dc.workspace_id = r.workspace_id and dc.account_id = r.account_id) as customer_ref,
          exists (select 1 from entitlements e where e.workspace_id = r.workspace_id and e.customer_id = r.account_id
            and e.product_id = r.product_id and e.status = 'active' and (e.ends_at is null or e.ends_at > now())) as verified_purchase
        from product_reviews r where r.workspace_id = ${w} and r.product_id = ${productId}
        order by r.id desc limit ${options.reviewLimit}`)} as reviews`,
      sql`${jsonRows(sql`
        select status, rating, count(*)::int as n from product_reviews
        where workspace_id = ${w} and product_id = ${productId} group by status, rating`)} as review_counts`,
    );
  }
  if (sections.credentials) {
    columns.push(sql`(
      select json_build_object(
        'credential', json_build_object('id', c.id, 'product_id', c.product_id, 'environment', c.environment, 'app_id', c.app_id,
          'last_request_at', c.last_request_at, 'last_plugin_connection_at', c.last_plugin_connection_at, 'created_at', c.created_at),
        'key', case when k.id is null then null else json_build_object('id', k.id, 'credential_id', k.credential_id, 'key_hash', k.key_hash,
          'key_sealed', k.key_sealed, 'sealed_with', k.sealed_with, 'preview', k.preview, 'status', k.status, 'accepted_until', k.accepted_until,
          'created_at', k.created_at) end)
      from product_credentials c
      left join product_keys k on k.workspace_id = c.workspace_id and k.credential_id = c.id and k.status = 'active'
      where c.workspace_id = ${w} and c.product_id = ${productId} and c.environment = ${options.environment}
    ) as credential`);
  }
  const result = await sql<Record<string, unknown>>`select ${sql.join(columns)} from products p where p.workspace_id = ${w} and p.id = ${productId}`.execute(db);
  const row = result.rows[0];
  return row ? readRow(row, sections) : undefined;
}

type Json = Record<string, unknown>;

function readRow(row: Json, sections: DashboardSections): DashboardRead {
  const product = {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    app_id: row.app_id,
    price_cents: row.price_cents,
    currency: row.currency,
    max_activations: row.max_activations,
    offline_grace_days: row.offline_grace_days,
    storefront_url: row.storefront_url,
    current_version: row.current_version,
    downloads_total: row.downloads_total,
    created_at: row.created_at,
    updated_at: row.updated_at,
  } as ProductRecord;
  const rows = (name: string) => row[name] as Json[];
  const read: DashboardRead = {
    product,
    workspaceStorefront: (row.workspace_storefront as string | null) ?? null,
    versions: rows('versions').map((v) => ({ ...v, release_date: dateOrNull(v.release_date as string | null), created_at: date(v.created_at as string), updated_at: date(v.updated_at as string) }) as VersionRow),
    files: sections.files ? rows('files').map((f) => ({ ...f, uploaded_at: date(f.uploaded_at as string) }) as FileRecord) : null,
    analytics: null,
    reviews: null,
  };
  if (sections.analytics) {
    type Activity = NonNullable<DashboardRead['analytics']>['activity'];
    const at = (r: Json) => ({ ...r, at: date(r.at as string) });
    read.analytics = {
      sales: row.sales as SalesWindowRow[],
      customers: row.customers as number,
      orders: row.orders as number,
      activity: {
        sales: rows('activity_sales').map(at) as Activity['sales'],
        refunds: rows('activity_refunds').map(at) as Activity['refunds'],
        serials: rows('activity_serials').map(at) as Activity['serials'],
        events: rows('activity_events').map(at) as Activity['events'],
      },
    };
  }
  if (sections.reviews) {
    read.reviews = {
      latest: rows('reviews').map((r) => ({ ...r, created_at: date(r.created_at as string) }) as ReviewRow),
      counts: row.review_counts as Array<{ status: ReviewStatus; rating: number; n: number }>,
    };
  }
  if (sections.credentials) {
    const found = row.credential as { credential: Json; key: Json | null } | null;
    read.credential = found
      ? {
          credential: {
            ...found.credential,
            last_request_at: dateOrNull(found.credential.last_request_at as string | null),
            last_plugin_connection_at: dateOrNull(found.credential.last_plugin_connection_at as string | null),
            created_at: date(found.credential.created_at as string),
          } as CredentialRecord,
          key: found.key
            ? ({ ...found.key, accepted_until: dateOrNull(found.key.accepted_until as string | null), created_at: date(found.key.created_at as string) } as KeyRecord)
            : null,
        }
      : null;
  }
  return read;
}
