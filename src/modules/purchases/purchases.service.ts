import type { Readable } from 'node:stream';
import { hasPermission, type Scope } from '../../platform/auth/scope.js';
import { csvDocument, csvStream } from '../../platform/csv/stream.js';
import type { Db } from '../../platform/db/database.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { PageAnchorCache } from '../../platform/paging/page-anchors.js';
import { listEnvelopeJson, pagedList } from '../../platform/paging/paged-list.js';
import { listVisibleProducts, ProductResolver } from '../products/index.js';
import { visibleResellers } from '../resellers/index.js';
import { KnownTotals, perDatabase } from '../../platform/paging/known-totals.js';
import { type PurchaseFilter, parsePurchaseFilter } from './purchases.filters.js';
import { PURCHASE_IMPORT_COLUMNS } from './purchases.import.js';
import * as repo from './purchases.repo.js';
import { CHANNELS, RECORD_TYPES, REFUND_STATUSES, type PurchaseListQuery, type PurchaseRow } from './purchases.schemas.js';

// The purchase list and what reads like it: the export, the import template, the filter values.
// Writes live with their use case: purchases.importer.ts, purchases.grants.ts, purchases.checkout.ts.

const EXPORT_BATCH = 2_000;
const deepPageAnchorsOf = perDatabase(() => new PageAnchorCache<repo.ListAnchor>(1_000));

export function refundable(r: Pick<repo.PurchaseRecord, 'channel' | 'status' | 'refund_status' | 'sale_price_cents'>): boolean {
  return r.channel === 'managed_checkout' && r.status === 'paid' && r.refund_status !== 'full' && r.sale_price_cents > 0;
}

/** Every order item has a customer relationship (imports, grants and sales create one); a missing one is a data fault. */
function customerRef(r: Pick<repo.PurchaseRecord, 'customer_ref' | 'id'>): number {
  if (r.customer_ref === null) throw new Error(`order item ${r.id} has no customer relationship`);
  return r.customer_ref;
}

export function toPurchaseRow(r: repo.PurchaseRecord, mayRefund: boolean): PurchaseRow {
  return {
    order_id: r.order_id,
    order_item_id: r.id,
    product_id: r.product_id,
    product: r.product_name,
    customer_id: customerRef(r),
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    status: r.status,
    invoice_available: r.channel === 'managed_checkout' && r.status === 'paid',
    channel: r.channel,
    provider: r.provider,
    reseller_id: r.reseller_id,
    reseller: r.reseller_name,
    record_type: r.record_type,
    refund_status: r.refund_status,
    currency: r.currency.trim(),
    price_cents: r.price_cents,
    sale_price_cents: r.sale_price_cents,
    refunded_cents: r.refunded_cents,
    price: formatMajorUnits(r.price_cents, r.currency.trim()),
    sale_price: formatMajorUnits(r.sale_price_cents, r.currency.trim()),
    order_reference: r.order_reference,
    external_reference: r.external_reference,
    serial_id: r.serial_id,
    serial_code: r.serial_code,
    customer_portal_hidden: r.customer_portal_hidden,
    can_refund: mayRefund && refundable(r),
    purchased_at: r.purchased_at.toISOString(),
  };
}

/** Filtered and searched lists' totals at their list version: see listTotals in purchases.repo.ts and migration 0028. */
const knownTotalsOf = perDatabase(() => new KnownTotals());

function filteredTotalKey(scope: Scope, filter: PurchaseFilter): string | null {
  if (repo.isUnfiltered(scope, filter)) return null;
  const products = scope.products === 'all' ? 'all' : [...scope.products].sort((a, b) => a - b).join(',');
  return `${scope.workspaceId}|${products}|${JSON.stringify(filter)}`;
}

/** The list envelope as JSON text, its rows written by PostgreSQL (purchases.repo.ts `rowJson`, the twin of toPurchaseRow). */
export async function listPurchases(db: Db, scope: Scope, query: PurchaseListQuery): Promise<string> {
  const filter = parsePurchaseFilter(query);
  const key = filteredTotalKey(scope, filter);
  const knownTotals = knownTotalsOf(db);
  const known = knownTotals.get(key);
  const mayRefund = hasPermission(scope, 'purchases.refund');
  let canRefund = false;
  const list = await pagedList(deepPageAnchorsOf(db), scope.workspaceId, query, {
    unfiltered: repo.isUnfiltered(scope, filter),
    anchors: (every) => repo.pageAnchors(db, scope, every),
    page: async (page) => {
      const result = await repo.listPage(db, scope, filter, page, mayRefund, known);
      knownTotals.remember(key, result);
      // The page answered is the last one read.
      canRefund = result.summary === true;
      return { rows: [result.rowsJson], total: result.total, version: result.version };
    },
  });
  return listEnvelopeJson(list, { canRefund });
}

export const PURCHASE_EXPORT_COLUMNS = [
  'order_id',
  'order_item_id',
  'purchased_at',
  'customer_id',
  'email',
  'first_name',
  'last_name',
  'product_id',
  'product',
  'status',
  'channel',
  'provider',
  'reseller_id',
  'reseller',
  'record_type',
  'refund_status',
  'currency',
  'price',
  'sale_price',
  'refunded',
  'order_reference',
  'external_reference',
  'serial_code',
  'invoice_available',
];

export function exportPurchases(db: Db, scope: Scope, query: PurchaseListQuery): Readable {
  const filter = parsePurchaseFilter(query);
  async function* batches() {
    for await (const batch of repo.purchaseBatches(db, scope, filter, EXPORT_BATCH)) {
      yield batch.map((r) => {
        const currency = r.currency.trim();
        return [
          r.order_id,
          r.id,
          r.purchased_at,
          customerRef(r),
          r.email,
          r.first_name,
          r.last_name,
          r.product_id,
          r.product_name,
          r.status,
          r.channel,
          r.provider,
          r.reseller_id,
          r.reseller_name,
          r.record_type,
          r.refund_status,
          currency,
          formatMajorUnits(r.price_cents, currency),
          formatMajorUnits(r.sale_price_cents, currency),
          formatMajorUnits(r.refunded_cents, currency),
          r.order_reference,
          r.external_reference,
          r.serial_code,
          r.channel === 'managed_checkout' && r.status === 'paid',
        ];
      });
    }
  }
  return csvStream(PURCHASE_EXPORT_COLUMNS, batches());
}

/** The import template: the import's own columns and two rows that import unchanged (and create nothing twice). */
export async function purchaseTemplate(db: Db, scope: Scope): Promise<string> {
  const resolver = await ProductResolver.load(db, scope);
  const product = resolver.first;
  const currency = product?.currency.trim() ?? 'usd';
  const price = formatMajorUnits(product?.priceCents ?? 4900, currency);
  return csvDocument(
    [...PURCHASE_IMPORT_COLUMNS],
    [
      ['ann.lee@example.com', 'Ann', 'Lee', product?.id ?? '', '', '', price, price, '2024-03-15', currency, 'STORE-1001', 'external', ''],
      ['sam.ortiz@example.com', 'Sam', 'Ortiz', '', product?.name ?? '', newSerialCode('DEMO'), price, '0', '2024-06-01', currency, 'STORE-1002', 'external', ''],
    ],
  );
}

export async function filterOptions(db: Db, scope: Scope) {
  const [products, resellers, providers] = await Promise.all([
    listVisibleProducts(db, scope),
    visibleResellers(db, scope, { activeOnly: false }),
    repo.visibleProviders(db, scope),
  ]);
  return {
    products: products.map((p) => ({ id: p.id, name: p.name })),
    resellers,
    channels: [...CHANNELS],
    providers,
    refundStatuses: [...REFUND_STATUSES],
    recordTypes: [...RECORD_TYPES],
  };
}
