import type { Readable } from 'node:stream';
import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { RecordAccess } from '../../platform/auth/define-route.js';
import type { Scope } from '../../platform/auth/scope.js';
import { csvDocument, csvStream } from '../../platform/csv/stream.js';
import { copyClientOf } from '../../platform/db/copy-in.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { parseDateRange } from '../../platform/http/date-range.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { PageAnchorCache } from '../../platform/paging/page-anchors.js';
import { KnownTotals, perDatabase } from '../../platform/paging/known-totals.js';
import { listEnvelopeJson, pagedList } from '../../platform/paging/paged-list.js';
import { ImportErrors, type RowError } from '../../platform/import/errors.js';
import type { RawImport } from '../../platform/import/import-request.js';
import type { ImportOutcome, ProgressReporter } from '../../platform/import/import-runner.js';
import type { ImportResult } from '../../platform/import/import-schemas.js';
import { listVisibleProducts, ProductMapping, ProductResolver } from '../products/index.js';
import { type CustomerUpsert, IMPORT_COLUMNS, validateCustomerRow, type ValidCustomerRow } from './customers.import.js';
import * as repo from './customers.repo.js';
import { CustomerErrors } from './customers.errors.js';
import type { CustomerListQuery, CustomerRow, RemoveCustomerBody, RemoveCustomerResult } from './customers.schemas.js';
import { emitWebhookEvent, emitWebhookEvents, wantsWebhookEvents } from '../webhooks/index.js';

const EXPORT_BATCH = 2_000;
const WRITE_BATCH = 5_000;
/** Staged rows written per set-based statement (a large import's progress moves by this much). */
const STAGED_RANGE = 20_000;

function toFilter(query: CustomerListQuery): repo.CustomerFilter {
  const window = parseDateRange(query.dateRange);
  return { search: query.search?.trim() || undefined, productId: query.productId, from: window.from, to: window.to };
}

function toRow(r: repo.CustomerRecord): CustomerRow {
  return {
    id: r.id,
    // The relationship id, never the global account id: a vendor must learn nothing about a
    // person's relationships with other vendors (an older account id would tell them there are some).
    customer_id: r.id,
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    status: r.status,
    email_verification_status: r.email_verified ? 'verified' : 'unverified',
    product_ids: r.product_ids,
    created_at: r.created_at.toISOString(),
  };
}

/** Searched and date-filtered lists' totals at their list version: see listTotals in customers.repo.ts. */
const knownTotalsOf = perDatabase(() => new KnownTotals());

const knownTotalKey = (scope: Scope, filter: repo.CustomerFilter) =>
  repo.isUnfiltered(scope, filter) || !repo.versionFollows(scope, filter) ? null : `${scope.workspaceId}|${JSON.stringify(filter)}`;

/**
 * The list's answer as JSON text (CustomerList): PostgreSQL writes the rows (repo.listPage), this adds the
 * envelope. The route sends it as it is.
 */
export async function listCustomers(db: Db, scope: Scope, query: CustomerListQuery): Promise<string> {
  const filter = toFilter(query);
  const key = knownTotalKey(scope, filter);
  const knownTotals = knownTotalsOf(db);
  const known = knownTotals.get(key);
  const list = await pagedList(deepPageAnchorsOf(db), scope.workspaceId, query, {
    unfiltered: repo.isUnfiltered(scope, filter),
    anchors: (every) => repo.pageAnchors(db, scope, every),
    page: async (page) => {
      const result = await repo.listPage(db, scope, filter, page, known);
      knownTotals.remember(key, result);
      return { rows: [result.rowsJson], total: result.total, version: result.version };
    },
  });
  return listEnvelopeJson(list);
}

const deepPageAnchorsOf = perDatabase(() => new PageAnchorCache(1_000));

export const EXPORT_COLUMNS = [
  'id',
  'customer_id',
  'email',
  'first_name',
  'last_name',
  'status',
  'email_verification_status',
  'products',
  'created_at',
];

export function exportCustomers(db: Db, scope: Scope, query: CustomerListQuery): Readable {
  const filter = toFilter(query);
  async function* batches() {
    // Product names are resolved here from one lookup instead of a subquery per row.
    const names = new Map((await listVisibleProducts(db, scope)).map((p) => [p.id, p.name]));
    for await (const batch of repo.customerBatches(db, scope, filter, EXPORT_BATCH)) {
      yield batch.map((r) => {
        const row = toRow(r);
        const products = r.product_ids.map((id) => names.get(id) ?? '').filter(Boolean).sort().join('; ');
        return [row.id, row.customer_id, row.email, row.first_name, row.last_name, row.status, row.email_verification_status, products, row.created_at];
      });
    }
  }
  return csvStream(EXPORT_COLUMNS, batches());
}

/** The export's query for COPY on PostgreSQL: the same rows and cells as `exportCustomers`. */
export const exportCustomersQuery = (db: Db, scope: Scope, query: CustomerListQuery) => repo.exportQuery(db, scope, toFilter(query));

/** The import template: the import's own columns and two rows that import unchanged. */
export async function importTemplate(db: Db, scope: Scope): Promise<string> {
  const resolver = await ProductResolver.load(db, scope);
  const product = resolver.first;
  return csvDocument(
    [...IMPORT_COLUMNS],
    [
      ['ann.lee@example.com', 'Ann', 'Lee', product?.id ?? '', '', 'true'],
      ['sam.ortiz@example.com', 'Sam', 'Ortiz', '', product?.name ?? '', 'false'],
    ],
  );
}

/**
 * One row per normalised e-mail: later rows refine names and add products, any consent counts. Sorted by e-mail so
 * that concurrent imports lock shared rows in the same order and cannot deadlock.
 */
function mergeByEmail(rows: CustomerUpsert[]): CustomerUpsert[] {
  const merged = new Map<string, CustomerUpsert>();
  for (const row of rows) {
    const seen = merged.get(row.emailNormalized);
    if (!seen) merged.set(row.emailNormalized, { ...row, productIds: [...row.productIds] });
    else {
      seen.firstName = row.firstName ?? seen.firstName;
      seen.lastName = row.lastName ?? seen.lastName;
      seen.productIds.push(...row.productIds);
      seen.marketingConsent ||= row.marketingConsent;
    }
  }
  return [...merged.values()].sort((x, y) => (x.emailNormalized < y.emailNormalized ? -1 : x.emailNormalized > y.emailNormalized ? 1 : 0));
}

/**
 * The import's writes on PostgreSQL when they span more than one batch: the merged rows COPY into a staging table,
 * then set-based statements write STAGED_RANGE rows at a time (progress after each range). Null on the embedded
 * database, which keeps the statement path (`upsertCustomers`). The same rows, rules, events and counts as that path.
 */
async function upsertStaged(tx: Tx, scope: Scope, rows: CustomerUpsert[], source: string, progress?: ProgressReporter): Promise<{ inserted: number } | null> {
  if (rows.length <= WRITE_BATCH) return null;
  const unique = mergeByEmail(rows);
  if (unique.length <= WRITE_BATCH) return null;
  const client = await copyClientOf(tx);
  if (!client) return null;
  for (const r of unique) r.productIds = [...new Set(r.productIds)];
  await repo.stageImport(tx, client, unique);
  const events = await wantsWebhookEvents(tx, scope.workspaceId, 'customer.created');
  let inserted = 0;
  for (let from = 0; from < unique.length; from += STAGED_RANGE) {
    const to = Math.min(from + STAGED_RANGE, unique.length);
    const activated = await repo.mergeStaged(tx, scope, from, to, source);
    inserted += activated;
    if (events && activated > 0) {
      const made = await repo.stagedActivations(tx, from, to);
      await emitWebhookEvents(tx, scope.workspaceId, 'customer.created', made.map((r) => ({ ...r, source })));
    }
    progress?.(to);
  }
  return { inserted };
}

/**
 * Creates or refreshes customer relationships inside the caller's transaction
 * (used by the customer import and by other modules that assign customers,
 * such as serial import). One relationship per e-mail; later rows refine names
 * and add products. Returns, per normalised e-mail, the account id (for joins
 * inside services) and the relationship id (the `customer_id` answers show),
 * and how many relationships became active.
 */
export async function upsertCustomers(
  tx: Tx,
  scope: Scope,
  rows: CustomerUpsert[],
  source: string,
  progress?: ProgressReporter,
): Promise<{ accountIds: Map<string, number>; customerIds: Map<string, number>; inserted: number }> {
  const unique = mergeByEmail(rows);
  const accountIds = new Map<string, number>();
  const customerIds = new Map<string, number>();
  let inserted = 0;
  for (let i = 0; i < unique.length; i += WRITE_BATCH) {
    const batch = unique.slice(i, i + WRITE_BATCH);
    const accounts = await repo.ensureAccounts(tx, scope, batch.map((r) => r.email), batch.map((r) => r.emailNormalized));
    const rels = batch.map((r) => ({ accountId: accounts.get(r.emailNormalized)!, email: r.email, firstName: r.firstName, lastName: r.lastName }));
    const { ids, activated, activatedIds } = await repo.upsertRelationships(tx, scope, rels, source);
    inserted += activated;
    await emitWebhookEvents(tx, scope.workspaceId, 'customer.created', rels.filter((r) => activatedIds.has(ids.get(r.accountId)!)).map((r) => ({ customer_id: ids.get(r.accountId)!, email: r.email, first_name: r.firstName, last_name: r.lastName, source })));
    const linkCustomers: number[] = [];
    const linkProducts: number[] = [];
    const consenting: number[] = [];
    for (const r of batch) {
      const accountId = accounts.get(r.emailNormalized)!;
      accountIds.set(r.emailNormalized, accountId);
      const customerId = ids.get(accountId)!;
      customerIds.set(r.emailNormalized, customerId);
      for (const productId of new Set(r.productIds)) {
        linkCustomers.push(customerId);
        linkProducts.push(productId);
      }
      if (r.marketingConsent) consenting.push(accountId);
    }
    await repo.linkProducts(tx, scope, linkCustomers, linkProducts);
    await repo.recordConsents(tx, scope, consenting, source);
    progress?.(Math.min(i + WRITE_BATCH, unique.length));
  }
  return { accountIds, customerIds, inserted };
}

/**
 * All-or-nothing per import: rows are validated first; the valid ones are then
 * written in one transaction, in batches. A row that fails validation is
 * reported, never half-written; an infrastructure failure commits nothing.
 */
export async function importCustomers(db: Executor, scope: Scope, input: RawImport, progress?: ProgressReporter): Promise<ImportOutcome> {
  if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
  const resolver = await ProductResolver.load(db, scope);
  const mapping = ProductMapping.parse(resolver, input.productMappings);

  const errors: RowError[] = [];
  const valid: ValidCustomerRow[] = [];
  input.rows.forEach((raw, index) => {
    const result = validateCustomerRow(raw, index + 1, scope, mapping);
    if (result.ok) valid.push(result.value);
    else errors.push(...result.errors);
  });
  const failedRows = new Set(errors.map((e) => e.row)).size;
  if (valid.length === 0) {
    throw new AppError(ImportErrors.IMPORT_REJECTED, 'No row could be imported; see errors', {
      errors,
      body: { success: false, importedCount: 0, insertedCount: 0, failedCount: failedRows },
    });
  }

  const { inserted } = await inTransaction(db, async (tx) => {
    const result = (await upsertStaged(tx, scope, valid, 'import', progress)) ?? (await upsertCustomers(tx, scope, valid, 'import', progress));
    await writeAudit(tx, scope, {
      action: 'customers.imported',
      subjectType: 'workspace',
      subjectId: scope.workspaceId,
      data: { source: input.source, rows: input.rows.length, accepted: valid.length, inserted: result.inserted, failed: failedRows },
    });
    return result;
  });

  const body: ImportResult = {
    success: errors.length === 0,
    importedCount: valid.length,
    insertedCount: inserted,
    failedCount: failedRows,
    errors,
  };
  return { status: errors.length === 0 ? 201 : 207, body };
}

/**
 * An active customer relationship the caller can see, by the `customer_id` the API shows
 * (the relationship id). `accountId` is for joins inside the service, never for answers.
 */
export async function findActiveCustomer(db: Executor, scope: Scope, customerId: number) {
  const row = await repo.findById(db, scope, customerId);
  return row && row.status === 'active' ? { customerId: row.id, accountId: row.account_id, email: row.email } : undefined;
}

const YES = /^\s*yes\s*$/i;

/** `record` is the route's `customers.manage`, asked once the relationship is known to be visible. */
export async function removeCustomer(
  db: Db,
  scope: Scope,
  record: RecordAccess,
  customerId: number,
  body: RemoveCustomerBody | undefined,
): Promise<RemoveCustomerResult> {
  const existing = await repo.findById(db, scope, customerId);
  if (!existing) throw notFound('Customer');
  record.require();
  const confirmed = body?.confirm === true || (typeof body?.confirmation === 'string' && YES.test(body.confirmation));
  if (!confirmed) {
    throw new AppError(CustomerErrors.CONFIRMATION_REQUIRED, 'Send "confirm": true or "confirmation": "yes" to remove this customer relationship');
  }

  return inTransaction(db, async (tx) => {
    const row = await repo.findById(tx, scope, customerId, true);
    if (!row) throw notFound('Customer');
    const base = { ok: true, customer_id: row.id, developer_customer_id: row.id };
    if (row.status === 'removed') {
      return { ...base, alreadyRemoved: true, already_removed: true, message: 'The customer relationship was already removed' };
    }
    await repo.markRemoved(tx, scope, row.id, body?.reason?.trim() || null);
    const marketing = await repo.deleteMarketingRecords(tx, scope, row.account_id);
    await emitWebhookEvent(tx, scope.workspaceId, 'customer.removed', { customer_id: row.id, email: row.email, reason: body?.reason?.trim() || null });
    await writeAudit(tx, scope, {
      action: 'customer.removed',
      subjectType: 'customer',
      subjectId: row.id,
      data: { developerCustomerId: row.id, reason: body?.reason ?? null, marketingRecordsDeleted: marketing },
    });
    return {
      ...base,
      alreadyRemoved: false,
      already_removed: false,
      message: 'Customer relationship removed. The customer account, purchases and financial records are kept.',
    };
  });
}
