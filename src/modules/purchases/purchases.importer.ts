import { writeAudit } from '../../platform/audit/audit.repo.js';
import { canSeeProduct, type Scope } from '../../platform/auth/scope.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { ImportErrors, type RowError } from '../../platform/import/errors.js';
import type { RawImport } from '../../platform/import/import-request.js';
import type { ProgressReporter } from '../../platform/import/import-runner.js';
import { upsertCustomers } from '../customers/index.js';
import { ProductMapping, ProductResolver } from '../products/index.js';
import { workspaceResellerIds } from '../resellers/index.js';
import { assignSerials, issueSerials, lockSerialWrites, lookupSerialCodes, NO_TERMS } from '../serials/index.js';
import { validatePurchaseRow, type ValidPurchaseRow } from './purchases.import.js';
import * as orders from './purchases.orders.repo.js';
import { PurchasesRecordedJob } from './purchases.jobs.js';
import { insertItemsAnnounced } from './purchases.items.js';

// Historical and external purchases. Creates customers (no marketing consent, no e-mail), orders,
// items and entitlements, and assigns or creates serials. Valid rows are written in one
// transaction; rows whose serial cannot be assigned are reported and write nothing. Re-importing
// the same rows creates nothing twice: an item's natural key is external reference + product +
// customer.

const WRITE_BATCH = 5_000;

const byEmailThenRow = (a: ValidPurchaseRow, b: ValidPurchaseRow) =>
  a.emailNormalized < b.emailNormalized ? -1 : a.emailNormalized > b.emailNormalized ? 1 : a.row - b.row;

type SerialLookup = Awaited<ReturnType<typeof lookupSerialCodes>>;

/** Every row checked on its own; a serial that a later row names for another customer or product is that row's error. */
function validateRows(input: RawImport, mapping: ProductMapping, resellers: ReadonlySet<number>, now: Date) {
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
  return { valid, errors };
}

/** Why a row's serial cannot go with its purchase, or null when it can (or the row names none). */
function serialRowError(scope: Scope, r: ValidPurchaseRow, serials: SerialLookup): RowError | null {
  if (!r.serial) return null;
  const error = (code: RowError['code'], message: string): RowError => ({ row: r.row, field: 'serialCode', code, message });
  if (serials.taken.has(r.serial.key)) return error('SERIAL_CODE_TAKEN', 'this code is already in use');
  const mine = serials.mine.get(r.serial.key);
  if (!mine) return null;
  // A serial of a product outside the caller's assignment is reported like a foreign code: no hint that it exists here.
  if (!canSeeProduct(scope, mine.product_id)) return error('SERIAL_CODE_TAKEN', 'this code is already in use');
  if (mine.product_id !== r.productId) return error('SERIAL_PRODUCT_MISMATCH', 'this serial belongs to another product');
  if (mine.status !== 'available' && mine.customer_id === null) return error('SERIAL_NOT_AVAILABLE', `this serial is ${mine.status}`);
  // An import never moves a serial away from the customer who holds it.
  if (mine.customer_email !== null && mine.customer_email !== r.emailNormalized) return error('SERIAL_ASSIGNED', 'this serial belongs to another customer');
  return null;
}

/** One order per customer and external reference: its total and earliest purchase time over the rows. */
function groupOrders(rows: ValidPurchaseRow[], customerOf: (r: ValidPurchaseRow) => number, orderKey: (customerId: number, reference: string) => string) {
  const grouped = new Map<string, orders.NewOrder>();
  for (const r of rows) {
    const key = orderKey(customerOf(r), r.externalReference);
    const seen = grouped.get(key);
    if (seen) {
      seen.totalCents += r.salePriceCents;
      if (r.purchasedAt < seen.purchasedAt) seen.purchasedAt = r.purchasedAt;
    } else {
      grouped.set(key, {
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
  return [...grouped.values()];
}

/**
 * The rows' serials: available ones of this workspace are assigned, unknown codes are created as
 * imported. Answers the serial id per code key.
 */
async function placeSerials(
  tx: Tx,
  scope: Scope,
  resolver: ProductResolver,
  rows: ValidPurchaseRow[],
  serials: SerialLookup,
  holder: { customerOf: (r: ValidPurchaseRow) => number; orderOf: (r: ValidPurchaseRow) => number },
): Promise<Map<string, number>> {
  const { customerOf, orderOf } = holder;
  const serialIds = new Map<string, number>();
  const toAssign: Array<{ serialId: number; customerId: number; orderId: number }> = [];
  const assigning = new Set<number>();
  const toCreate = new Map<string, ValidPurchaseRow>();
  for (const r of rows) {
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
  return serialIds;
}

/**
 * Writes one batch of valid rows (serials first: a row whose serial cannot be assigned writes
 * nothing at all, its error joins `errors`). Answers the items inserted and the rows accepted,
 * rows whose purchase was imported before included.
 */
async function writeBatch(tx: Tx, scope: Scope, resolver: ProductResolver, batch: ValidPurchaseRow[], errors: RowError[]) {
  const keys = [...new Set(batch.flatMap((r) => (r.serial ? [r.serial.key] : [])))];
  if (keys.length > 0) await lockSerialWrites(tx, scope);
  const serials = await lookupSerialCodes(tx, scope, keys);
  const rows = batch.filter((r) => {
    const error = serialRowError(scope, r, serials);
    if (error) errors.push(error);
    return error === null;
  });
  if (rows.length === 0) return { inserted: 0, accepted: 0 };

  const { accountIds, customerIds } = await upsertCustomers(
    tx,
    scope,
    rows.map((r) => ({ email: r.email, emailNormalized: r.emailNormalized, firstName: r.firstName, lastName: r.lastName, productIds: [r.productId], marketingConsent: false })),
    'purchase-import',
  );
  const customerOf = (r: ValidPurchaseRow) => accountIds.get(r.emailNormalized)!;

  // Rows whose purchase was imported before change nothing, not even their serial.
  const known = await orders.existingImportItems(
    tx,
    scope,
    rows.map((r) => ({ externalReference: r.externalReference, productId: r.productId, customerId: customerOf(r) })),
  );
  const assignable = rows.filter((r) => !known.has(orders.importItemKey(r.externalReference, r.productId, customerOf(r))));

  const orderKey = (customerId: number, reference: string) => `${customerId}\u001f${reference}`;
  const orderIds = new Map(
    (await orders.upsertOrders(tx, scope, groupOrders(assignable, customerOf, orderKey))).map((o) => [orderKey(o.customer_id, o.external_reference!), o.id]),
  );
  const orderOf = (r: ValidPurchaseRow) => orderIds.get(orderKey(customerOf(r), r.externalReference))!;
  const serialIds = await placeSerials(tx, scope, resolver, assignable, serials, { customerOf, orderOf });

  const items = new Map<string, orders.NewItem>();
  for (const r of assignable) {
    const key = `${orderOf(r)}\u001f${r.productId}`;
    if (items.has(key)) continue;
    items.set(key, {
      orderId: orderOf(r),
      productId: r.productId,
      customerId: customerOf(r),
      customerRef: customerIds.get(r.emailNormalized)!,
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
  const inserted = (await insertItemsAnnounced(tx, scope, [...items.values()])).length;
  await orders.refreshOrderTotals(tx, scope, [...new Set([...items.values()].map((item) => item.orderId))]);
  return { inserted, accepted: rows.length };
}

export async function importPurchases(db: Executor, scope: Scope, input: RawImport, progress?: ProgressReporter) {
  if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
  const resolver = await ProductResolver.load(db, scope);
  const mapping = ProductMapping.parse(resolver, input.productMappings);
  const resellers = await workspaceResellerIds(db, scope);
  const { valid, errors } = validateRows(input, mapping, resellers, new Date());

  const outcome = await inTransaction(db, async (tx) => {
    let inserted = 0;
    let accepted = 0;
    // Sorted so concurrent imports lock shared rows in one order.
    const sorted = [...valid].sort(byEmailThenRow);
    for (let i = 0; i < sorted.length; i += WRITE_BATCH) {
      progress?.(i);
      const written = await writeBatch(tx, scope, resolver, sorted.slice(i, i + WRITE_BATCH), errors);
      inserted += written.inserted;
      accepted += written.accepted;
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
    if (inserted > 0) await PurchasesRecordedJob.enqueue(tx, { source: 'import' }, { workspaceId: scope.workspaceId });
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
