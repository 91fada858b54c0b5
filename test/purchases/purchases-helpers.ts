import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { bearer, seedWorkspace, type TestContext } from '../helpers/app.js';

export const PURCHASES = '/api/developer/purchases';

/** A purchase row as GET /api/developer/purchases returns it (contract 4.4). */
export interface PurchaseRow {
  order_id: number;
  order_item_id: number;
  product_id: number;
  product: string;
  customer_id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  status: string;
  invoice_available: boolean;
  channel: string;
  provider: string;
  reseller_id: number | null;
  reseller: string | null;
  record_type: string;
  refund_status: string;
  currency: string;
  price_cents: number;
  sale_price_cents: number;
  refunded_cents: number;
  price: string;
  sale_price: string;
  order_reference: string;
  external_reference: string | null;
  serial_id: number | null;
  serial_code: string | null;
  customer_portal_hidden: boolean;
  can_refund: boolean;
  purchased_at: string;
  [field: string]: unknown;
}

export interface PurchaseList {
  rows: PurchaseRow[];
  total: number;
  page: number;
  pageSize: number;
  canRefund: boolean;
}

export interface FilterOptions {
  products: Array<{ id: number; name: string }>;
  resellers: Array<{ id: number; name: string; kind: string }>;
  channels: string[];
  providers: string[];
  refundStatuses: string[];
  recordTypes: string[];
}

/** Builds `?a=1&b=2` from an object, skipping undefined values; a string is passed through. */
export function qs(query: string | Record<string, string | number | undefined> = ''): string {
  if (typeof query === 'string') return query === '' || query.startsWith('?') ? query : `?${query}`;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** Thin request helpers bound to a file's test app. */
export function client(ctx: () => TestContext) {
  const inject = (method: 'GET' | 'POST', token: string | undefined, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    ctx().app.inject({
      method,
      url,
      headers: { ...(token === undefined ? {} : bearer(token)), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    /** Raw GET; `path` is relative to PURCHASES when it does not start with `/`. */
    get: (token: string | undefined, path = '') => inject('GET', token, resolve(path)),
    /** Raw POST; `path` is relative to PURCHASES when it does not start with `/`. */
    post: (token: string | undefined, path: string, body?: unknown, headers?: Record<string, string>) =>
      inject('POST', token, resolve(path), body, headers),
    /** Raw GET /api/developer/purchases with the given query. */
    listRaw: (token: string | undefined, query: Parameters<typeof qs>[0] = '') => inject('GET', token, `${PURCHASES}${qs(query)}`),
    /** The parsed body of GET /api/developer/purchases; asserts 200. */
    list: async (token: string, query: Parameters<typeof qs>[0] = ''): Promise<PurchaseList> => {
      const res = await inject('GET', token, `${PURCHASES}${qs(query)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as PurchaseList;
    },
    /** Raw GET /api/developer/purchases/export with the given query. */
    exportRaw: (token: string | undefined, query: Parameters<typeof qs>[0] = '') => inject('GET', token, `${PURCHASES}/export${qs(query)}`),
    /** The parsed CSV of the export (header row first); asserts 200 and text/csv. */
    export: async (token: string, query: Parameters<typeof qs>[0] = ''): Promise<string[][]> => {
      const res = await inject('GET', token, `${PURCHASES}/export${qs(query)}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      return parseCsv(res.body);
    },
    filterOptionsRaw: (token: string | undefined) => inject('GET', token, `${PURCHASES}/filter-options`),
    filterOptions: async (token: string): Promise<FilterOptions> => {
      const res = await inject('GET', token, `${PURCHASES}/filter-options`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as FilterOptions;
    },
    importJson: (token: string, body: unknown) => inject('POST', token, `${PURCHASES}/import`, body),
    grant: (token: string, body: unknown) => inject('POST', token, `${PURCHASES}/manual-grant`, body),
  };
}

const resolve = (path: string) => (path.startsWith('/') ? path : path === '' ? PURCHASES : `${PURCHASES}/${path}`);

export { expectProblem } from '../helpers/problem.js';

/** CSV text as rows of cells (header row first). */
export function parseCsv(text: string): string[][] {
  return parse(text, { bom: true, relax_column_count: false }) as string[][];
}

/** CSV rows as objects keyed by the header row. */
export function csvRecords(rows: string[][]): Array<Record<string, string>> {
  const [header, ...body] = rows;
  if (!header) return [];
  return body.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}

/** Members used across the purchase tests. */
export const MEMBERS = {
  viewer: { key: 'viewer', permissions: ['purchases.view'], products: 'all' as const },
  refunder: { key: 'refunder', permissions: ['purchases.view', 'purchases.refund'], products: 'all' as const },
  manager: { key: 'manager', permissions: ['purchases.view', 'purchases.manage'], products: 'all' as const },
  outsider: { key: 'outsider', permissions: ['customers.view', 'serials.view'], products: 'all' as const },
  scoped: { key: 'scoped', permissions: ['purchases.view', 'purchases.refund', 'purchases.manage'], products: ['p1'] },
};

/**
 * Adds `count` managed-checkout items to an existing order straight in SQL
 * (fixtures are too slow for thousands). Item g (1..count) is purchased at
 * `start - g * step`; a step of '0 seconds' gives them all the same instant,
 * '1 microsecond' gives timestamps a JavaScript Date cannot hold.
 */
export async function insertBulkItems(
  ctx: () => TestContext,
  // customerId is the relationship id (customer_id in answers); items are joined by the account behind it.
  input: { workspaceId: number; orderId: number; productId: number; customerId: number; count: number; start: string; step: string; provider?: string },
): Promise<void> {
  await sql`
    insert into order_items (workspace_id, order_id, product_id, customer_id, channel, provider, record_type, status, currency,
                             price_cents, sale_price_cents, purchased_at)
    select ${input.workspaceId}, ${input.orderId}, ${input.productId},
           (select account_id from developer_customers where workspace_id = ${input.workspaceId} and id = ${input.customerId}),
           'managed_checkout', ${input.provider ?? 'card-provider'},
           'sale', 'paid', 'usd', 1000, 1000, ${input.start}::timestamptz - g * ${input.step}::interval
    from generate_series(1, ${input.count}::int) g`.execute(ctx().database.db);
}

/** Labels rows by the fixture order key that created them: `o1`, or `o6#1` for the second item of a multi-item order. */
export function labeller(orderItems: Record<string, number[]>) {
  const names = new Map<number, string>();
  for (const [order, ids] of Object.entries(orderItems)) ids.forEach((id, i) => names.set(id, ids.length === 1 ? order : `${order}#${i}`));
  return (rows: Array<{ order_item_id: number } | Record<string, string>>) =>
    rows.map((r) => {
      const id = Number((r as Record<string, unknown>).order_item_id);
      return names.get(id) ?? `?${id}`;
    });
}

/**
 * A workspace with seven purchase rows covering every channel, refund status
 * and record type. Newest first: o6#1 (p3, subscription), o6#0 (p1) — pending
 * managed checkout of Cara, 2026-05-05T08:00Z; o5 (p2) manual grant to Cara,
 * 2026-04-20T12:30Z; o4 (p3) external_store/paddle via r2, partially refunded,
 * Bob, 2026-03-02T00:00Z; o3 (p1) import/gumroad via r1, free, external
 * reference GUM-77, Bob, 2026-03-01T23:59:59Z; o2 (p2) managed checkout fully
 * refunded, Ann, 2026-02-15T00:00Z; o1 (p1) managed checkout paid with serial
 * s1, external reference CHK-555, Ann, 2026-01-10T10:00Z. Order references
 * are PB-1001..PB-1006.
 */
export function seedShop(ctx: () => TestContext, extra: Pick<NonNullable<Parameters<typeof seedWorkspace>[1]>, 'members'> = {}) {
  return seedWorkspace(ctx(), {
    ...extra,
    customers: [
      { key: 'ann', email: 'ann.lee@buyers.test', firstName: 'Ann', lastName: 'Lee' },
      { key: 'bob', email: 'bob.stone@buyers.test', firstName: 'Bob', lastName: 'Stone' },
      { key: 'cara', email: 'cara.diaz@buyers.test', firstName: 'Cara', lastName: 'Diaz' },
    ],
    resellers: [
      { key: 'r1', name: 'Alpha Store' },
      { key: 'r2', name: 'Beta Market', kind: 'marketplace' },
      { key: 'r3', name: 'Gamma Bundle', kind: 'bundle' },
    ],
    serials: [{ key: 's1', product: 'p1', customer: 'ann', order: 'o1' }],
    orders: [
      { key: 'o1', customer: 'ann', reference: 'PB-1001', externalReference: 'CHK-555', purchasedAt: '2026-01-10T10:00:00.000Z', items: [{ product: 'p1', priceCents: 4999, salePriceCents: 3999, serial: 's1' }] },
      { key: 'o2', customer: 'ann', reference: 'PB-1002', purchasedAt: '2026-02-15T00:00:00.000Z', items: [{ product: 'p2', priceCents: 2500, refundedCents: 2500 }] },
      {
        key: 'o3', customer: 'bob', reference: 'PB-1003', externalReference: 'GUM-77', channel: 'import', status: 'imported', provider: 'gumroad', reseller: 'r1',
        purchasedAt: '2026-03-01T23:59:59.000Z', items: [{ product: 'p1', priceCents: 1500, salePriceCents: 0 }],
      },
      {
        key: 'o4', customer: 'bob', reference: 'PB-1004', channel: 'external_store', provider: 'paddle', reseller: 'r2',
        purchasedAt: '2026-03-02T00:00:00.000Z', items: [{ product: 'p3', priceCents: 9900, salePriceCents: 7900, refundedCents: 900 }],
      },
      { key: 'o5', customer: 'cara', reference: 'PB-1005', channel: 'manual_grant', status: 'granted', purchasedAt: '2026-04-20T12:30:00.000Z', items: [{ product: 'p2', priceCents: 0, recordType: 'grant' }] },
      {
        key: 'o6', customer: 'cara', reference: 'PB-1006', status: 'pending', purchasedAt: '2026-05-05T08:00:00.000Z',
        items: [{ product: 'p1', priceCents: 4999 }, { product: 'p3', priceCents: 1200, recordType: 'subscription' }],
      },
    ],
  });
}

/** The seven rows of seedShop, newest first. */
export const SHOP_ORDER = ['o6#1', 'o6#0', 'o5', 'o4', 'o3', 'o2', 'o1'];
