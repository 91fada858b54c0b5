import type { Readable } from 'node:stream';
import { writeAudit } from '../../platform/audit/audit.repo.js';
import { canSeeProduct, hasPermission, type Scope } from '../../platform/auth/scope.js';
import { csvDocument, csvStream } from '../../platform/csv/stream.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { enqueueJobs } from '../../platform/jobs/jobs.repo.js';
import type { PurchaseChannel, PurchaseRecordType, PurchaseStatus } from '../../platform/db/schema.js';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { PageAnchorCache } from '../../platform/paging/page-anchors.js';
import { pagedList } from '../../platform/paging/paged-list.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { ImportErrors, type RowError } from '../../platform/import/errors.js';
import type { RawImport } from '../../platform/import/import-request.js';
import type { ProgressReporter } from '../../platform/import/import-runner.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { upsertCustomers } from '../customers/customers.service.js';
import { ProductMapping } from '../products/product-mapping.js';
import { listVisibleProducts, ProductResolver } from '../products/products.service.js';
import { assignSerials, issueSerials, lockSerialWrites, lookupSerialCodes, NO_TERMS } from '../serials/serials.service.js';
import { parsePurchaseFilter } from './purchases.filters.js';
import { PURCHASE_IMPORT_COLUMNS, validatePurchaseRow, type ValidPurchaseRow } from './purchases.import.js';
import * as repo from './purchases.repo.js';
import { visibleResellers, workspaceResellerIds } from '../resellers/resellers.service.js';
import { CHANNELS, RECORD_TYPES, REFUND_STATUSES, type PurchaseListQuery, type PurchaseRow } from './purchases.schemas.js';

const EXPORT_BATCH = 2_000;
const deepPageAnchors = new PageAnchorCache<repo.ListAnchor>(1_000);
const WRITE_BATCH = 5_000;

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

export async function listPurchases(db: Db, scope: Scope, query: PurchaseListQuery) {
  const filter = parsePurchaseFilter(query);
  const list = await pagedList(deepPageAnchors, scope.workspaceId, query, {
    unfiltered: repo.isUnfiltered(scope, filter),
    stats: async () => {
      const stats = await repo.purchaseStats(db, scope);
      return { total: stats.items, version: stats.version };
    },
    anchors: (every) => repo.pageAnchors(db, scope, every),
    rows: (page) => repo.listPurchases(db, scope, filter, page),
    count: () => repo.countPurchases(db, scope, filter),
  });
  const mayRefund = hasPermission(scope, 'purchases.refund');
  const rows = list.rows.map((r) => toPurchaseRow(r, mayRefund));
  return { ...list, rows, canRefund: rows.some((r) => r.can_refund) };
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

const byEmailThenRow = (a: ValidPurchaseRow, b: ValidPurchaseRow) =>
  a.emailNormalized < b.emailNormalized ? -1 : a.emailNormalized > b.emailNormalized ? 1 : a.row - b.row;

/**
 * Historical and external purchases. Creates customers (no marketing consent,
 * no e-mail), orders, items and entitlements, and assigns or creates serials.
 * Valid rows are written in one transaction; rows whose serial cannot be
 * assigned are reported and write nothing. Re-importing the same rows creates
 * nothing twice: an item's natural key is external reference + product + customer.
 */
/** Announced after purchases collected elsewhere (imports) are recorded; the partner ledger estimates their shares. */
export const PURCHASES_RECORDED_JOB = 'purchases.recorded';

export async function importPurchases(db: Executor, scope: Scope, input: RawImport, progress?: ProgressReporter) {
  if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
  const resolver = await ProductResolver.load(db, scope);
  const mapping = ProductMapping.parse(resolver, input.productMappings);
  const resellers = await workspaceResellerIds(db, scope);
  const now = new Date();

  const errors: RowError[] = [];
  const valid: ValidPurchaseRow[] = [];
  const serialOwner = new Map<string, ValidPurchaseRow>();
  input.rows.forEach((raw, index) => {
    const result = validatePurchaseRow(raw, index + 1, mapping, resellers, now);
    if (!result.ok) return void errors.push(...result.errors);
    const row = result.value;
    if (row.serial) {
      const first = serialOwner.get(row.serial.key);
      if (first && (first.emailNormalized !== row.emailNormalized || first.productId !== row.productId)) {
        errors.push({ row: row.row, field: 'serialCode', code: 'DUPLICATE_IN_FILE', message: `the same serial is on row ${first.row} for another customer or product` });
        return;
      }
      if (!first) serialOwner.set(row.serial.key, row);
    }
    valid.push(row);
  });

  const outcome = await inTransaction(db, async (tx) => {
    let inserted = 0;
    let accepted = 0;
    // Sorted so concurrent imports lock shared rows in one order.
    const sorted = [...valid].sort(byEmailThenRow);
    for (let i = 0; i < sorted.length; i += WRITE_BATCH) {
      progress?.(i);
      const batch = sorted.slice(i, i + WRITE_BATCH);

      // Serials first: a row whose serial cannot be assigned writes nothing at all.
      const keys = [...new Set(batch.flatMap((r) => (r.serial ? [r.serial.key] : [])))];
      if (keys.length > 0) await lockSerialWrites(tx, scope);
      const serials = await lookupSerialCodes(tx, scope, keys);
      const rows = batch.filter((r) => {
        if (!r.serial) return true;
        if (serials.taken.has(r.serial.key)) {
          errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_CODE_TAKEN', message: 'this code is already in use' });
          return false;
        }
        const mine = serials.mine.get(r.serial.key);
        // A serial of a product outside the caller's assignment is reported like a foreign code: no hint that it exists here.
        if (mine && !canSeeProduct(scope, mine.product_id)) {
          errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_CODE_TAKEN', message: 'this code is already in use' });
          return false;
        }
        if (mine && mine.product_id !== r.productId) {
          errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_PRODUCT_MISMATCH', message: 'this serial belongs to another product' });
          return false;
        }
        if (mine && mine.status !== 'available' && mine.customer_id === null) {
          errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_NOT_AVAILABLE', message: `this serial is ${mine.status}` });
          return false;
        }
        // An import never moves a serial away from the customer who holds it.
        if (mine && mine.customer_email !== null && mine.customer_email !== r.emailNormalized) {
          errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_ASSIGNED', message: 'this serial belongs to another customer' });
          return false;
        }
        return true;
      });
      if (rows.length === 0) continue;

      const { accountIds } = await upsertCustomers(
        tx,
        scope,
        rows.map((r) => ({ email: r.email, emailNormalized: r.emailNormalized, firstName: r.firstName, lastName: r.lastName, productIds: [r.productId], marketingConsent: false })),
        'purchase-import',
      );
      const customerOf = (r: ValidPurchaseRow) => accountIds.get(r.emailNormalized)!;

      // Rows whose purchase was imported before change nothing, not even their serial.
      const known = await repo.existingImportItems(
        tx,
        scope,
        rows.map((r) => ({ externalReference: r.externalReference, productId: r.productId, customerId: customerOf(r) })),
      );
      const assignable = rows.filter((r) => !known.has(repo.importItemKey(r.externalReference, r.productId, customerOf(r))));

      const orderKey = (customerId: number, reference: string) => `${customerId}\u001f${reference}`;
      const orders = new Map<string, repo.NewOrder>();
      for (const r of assignable) {
        const key = orderKey(customerOf(r), r.externalReference);
        const seen = orders.get(key);
        if (seen) {
          seen.totalCents += r.salePriceCents;
          if (r.purchasedAt < seen.purchasedAt) seen.purchasedAt = r.purchasedAt;
        } else {
          orders.set(key, {
            customerId: customerOf(r),
            reference: r.externalReference,
            externalReference: r.externalReference,
            channel: 'import',
            provider: r.provider,
            status: 'imported',
            totalCents: r.salePriceCents,
            currency: r.currency,
            resellerId: r.resellerId,
            purchasedAt: r.purchasedAt,
          });
        }
      }
      const orderIds = new Map(
        (await repo.upsertOrders(tx, scope, [...orders.values()])).map((o) => [orderKey(o.customer_id, o.external_reference!), o.id]),
      );
      const orderOf = (r: ValidPurchaseRow) => orderIds.get(orderKey(customerOf(r), r.externalReference))!;

      // Serials: existing available ones are assigned, unknown codes are created as imported.
      const serialIds = new Map<string, number>();
      const toAssign: Array<{ serialId: number; customerId: number; orderId: number }> = [];
      const assigning = new Set<number>();
      const toCreate = new Map<string, ValidPurchaseRow>();
      for (const r of assignable) {
        if (!r.serial) continue;
        const mine = serials.mine.get(r.serial.key);
        if (mine) {
          serialIds.set(r.serial.key, mine.id);
          if (mine.customer_id === null && !assigning.has(mine.id)) {
            assigning.add(mine.id);
            toAssign.push({ serialId: mine.id, customerId: customerOf(r), orderId: orderOf(r) });
          }
        } else if (!toCreate.has(r.serial.key)) toCreate.set(r.serial.key, r);
      }
      const assigned = await assignSerials(tx, scope, toAssign, { action: 'assigned_by_import' });
      // The serials were read without a row lock: one that stopped being available (a grant or an
      // action in between) must not be linked to this customer's item. Nothing commits; a retry
      // sees the serial's current holder and reports the row.
      if (assigned.length !== toAssign.length) {
        throw new AppError(CommonErrors.SERIALIZATION_FAILURE, 'A serial of this import changed while it ran; retry the import');
      }
      const created = await issueSerials(
        tx,
        scope,
        [...toCreate.values()].map((r) => ({
          productId: r.productId,
          code: r.serial!.code,
          customerId: customerOf(r),
          origin: 'imported' as const,
          maxActivations: resolver.byIdOrUndefined(r.productId)!.maxActivations,
          orderId: orderOf(r),
          ...NO_TERMS,
        })),
        { action: 'imported', data: { via: 'purchase-import' } },
      );
      for (const s of created) serialIds.set(s.code_key, s.id);
      // A code skipped by the insert was taken elsewhere after the lookup; never import the row without it.
      if (created.length !== toCreate.size) {
        throw new AppError(CommonErrors.SERIALIZATION_FAILURE, 'A serial code of this import was taken while it ran; retry the import');
      }

      const items = new Map<string, repo.NewItem>();
      for (const r of assignable) {
        const key = `${orderOf(r)}\u001f${r.productId}`;
        if (items.has(key)) continue;
        items.set(key, {
          orderId: orderOf(r),
          productId: r.productId,
          customerId: customerOf(r),
          channel: 'import',
          provider: r.provider,
          resellerId: r.resellerId,
          recordType: r.salePriceCents > 0 ? 'sale' : 'free',
          status: 'imported',
          currency: r.currency,
          priceCents: r.priceCents,
          salePriceCents: r.salePriceCents,
          externalReference: r.externalReference,
          serialId: r.serial ? (serialIds.get(r.serial.key) ?? null) : null,
          purchasedAt: r.purchasedAt,
          entitlement: { source: 'import', kind: 'perpetual', endsAt: null, manualGrantId: null },
        });
      }
      inserted += (await repo.insertItems(tx, scope, [...items.values()])).length;
      await repo.refreshOrderTotals(tx, scope, [...new Set([...items.values()].map((item) => item.orderId))]);
      accepted += rows.length - assignable.length;
      accepted += assignable.length;
    }

    errors.sort((a, b) => a.row - b.row);
    const failedCount = new Set(errors.map((e) => e.row)).size;
    if (accepted === 0) {
      throw new AppError(ImportErrors.IMPORT_REJECTED, 'No row could be imported; see errors', {
        errors,
        body: { success: false, importedCount: 0, insertedCount: 0, failedCount },
      });
    }
    // Imported sales were collected elsewhere; partner programs estimate their shares after commit.
    if (inserted > 0) await enqueueJobs(tx, [{ kind: PURCHASES_RECORDED_JOB, workspaceId: scope.workspaceId, payload: { source: 'import' } }]);
    await writeAudit(tx, scope, {
      action: 'purchases.imported',
      subjectType: 'workspace',
      subjectId: scope.workspaceId,
      data: { source: input.source, rows: input.rows.length, accepted, inserted, failed: failedCount },
    });
    return { inserted, accepted, failedCount };
  });

  return {
    status: errors.length === 0 ? (201 as const) : (207 as const),
    body: { success: errors.length === 0, importedCount: outcome.accepted, insertedCount: outcome.inserted, failedCount: outcome.failedCount, errors },
  };
}

export interface RecordedItem {
  productId: number;
  priceCents: number;
  salePriceCents: number;
  refundedCents: number;
  /** When the refund was reported (default: now). */
  refundedAt?: Date | null;
  recordType?: PurchaseRecordType | undefined;
  serialId: number | null;
}

/**
 * Adds items (and their entitlements) to an order recorded elsewhere: managed
 * checkout sales arriving from the checkout, and operator fixtures. Refund
 * amounts decide each item's refund status.
 */
export async function recordOrderItems(
  tx: Tx,
  scope: Scope,
  order: { orderId: number; customerId: number; channel: PurchaseChannel; provider: string; resellerId: number | null; status: PurchaseStatus; currency: string; purchasedAt: Date; externalReference: string | null },
  items: RecordedItem[],
): Promise<number[]> {
  const created = await repo.insertItems(
    tx,
    scope,
    items.map((item) => {
      const recordType = item.recordType ?? (item.salePriceCents > 0 ? 'sale' : 'free');
      return {
        orderId: order.orderId,
        productId: item.productId,
        customerId: order.customerId,
        channel: order.channel,
        provider: order.provider,
        resellerId: order.resellerId,
        recordType,
        status: order.status,
        currency: order.currency,
        priceCents: item.priceCents,
        salePriceCents: item.salePriceCents,
        externalReference: order.externalReference,
        serialId: item.serialId,
        purchasedAt: order.purchasedAt,
        entitlement: {
          source: order.channel === 'import' ? 'import' : order.channel === 'manual_grant' ? 'grant' : 'purchase',
          kind: recordType === 'subscription' ? 'subscription' : 'perpetual',
          endsAt: null,
          manualGrantId: null,
        },
      };
    }),
  );
  await repo.setRefunds(tx, scope, created.map((c, i) => ({ itemId: c.id, refundedCents: items[i]!.refundedCents, refundedAt: items[i]!.refundedAt ?? null })));
  return created.map((c) => c.id);
}
