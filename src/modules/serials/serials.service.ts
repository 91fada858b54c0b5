import type { Readable } from 'node:stream';
import type { RecordAccess } from '../../platform/auth/define-route.js';
import { canSeeProduct, type Scope } from '../../platform/auth/scope.js';
import { csvDocument, csvStream } from '../../platform/csv/stream.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction, type Tx } from '../../platform/db/transaction.js';
import { parseDateRange } from '../../platform/http/date-range.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { perDatabase } from '../../platform/paging/known-totals.js';
import { PageAnchorCache } from '../../platform/paging/page-anchors.js';
import { pagedList, pageWindow } from '../../platform/paging/paged-list.js';
import { newSerialCode, newSerialCodes } from '../../platform/ids/codes.js';
import { ImportErrors, type RowError } from '../../platform/import/errors.js';
import type { RawImport } from '../../platform/import/import-request.js';
import type { ProgressReporter } from '../../platform/import/import-runner.js';
import { upsertCustomers } from '../customers/index.js';
import { visibleResellers } from '../resellers/index.js';
import { getVisibleProductOrThrow, ProductMapping, ProductResolver } from '../products/index.js';
import { SerialErrors } from './serials.errors.js';
import { announceSerialChanges } from './serials.changes.js';
import { normaliseGenerateBody } from './serials.generate.js';
import { SERIAL_IMPORT_COLUMNS, validateSerialRow, type ValidSerialRow } from './serials.import.js';
import { remainingActivations, transition, type SerialAction } from './serials.lifecycle.js';
import * as repo from './serials.repo.js';
import type { ActionBody, AvailableQuery, GenerateBody, SerialListQuery, SerialRow } from './serials.schemas.js';
import { emitWebhookEvent, emitWebhookEvents } from '../webhooks/index.js';

const deepPageAnchorsOf = perDatabase(() => new PageAnchorCache(1_000));

// The index cleanup is an optimisation; autovacuum does the same work later if it fails.
const ignoreCleanupFailure = () => undefined;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toSerialRow(r: repo.SerialRecord): SerialRow {
  return {
    id: r.id,
    serial: r.code,
    product_id: r.product_id,
    product: r.product_name,
    customer_id: r.customer_ref,
    status: r.status,
    redeemed: r.redeemed_at !== null,
    revoked: r.status === 'revoked',
    active_activation_count: r.active_activation_count,
    max_activations: r.max_activations,
    remaining_activations: remainingActivations(r.status, r.max_activations, r.active_activation_count),
    origin: r.origin,
    expires_at: iso(r.expires_at),
    promo_price: r.promo_price_cents,
    promo_start: iso(r.promo_start),
    promo_expires: iso(r.promo_expires),
    active_from: iso(r.active_from),
    active_to: iso(r.active_to),
    batch_tag: r.batch_tag,
    notes: r.notes,
    order_id: r.order_id,
    redeemed_at: iso(r.redeemed_at),
    created_at: r.created_at.toISOString(),
  };
}

function toFilter(query: SerialListQuery): repo.SerialFilter {
  const window = parseDateRange(query.dateRange);
  return { search: query.search?.trim() || undefined, productId: query.productId, status: query.status, from: window.from, to: window.to };
}

export async function listSerials(db: Db, scope: Scope, query: SerialListQuery) {
  const filter = toFilter(query);
  const list = await pagedList(deepPageAnchorsOf(db), scope.workspaceId, query, {
    unfiltered: repo.isUnfiltered(scope, filter),
    anchors: (every) => repo.pageAnchors(db, scope, every),
    page: (page) => repo.listPage(db, scope, filter, page),
  });
  return { ...list, rows: list.rows.map(toSerialRow) };
}

export const SERIAL_EXPORT_COLUMNS = [
  'id', 'serial', 'product_id', 'product', 'customer_id', 'status', 'redeemed', 'revoked', 'active_activation_count',
  'max_activations', 'remaining_activations', 'origin', 'expires_at', 'batch_tag', 'order_id', 'created_at',
];

export function exportSerials(db: Db, scope: Scope, query: SerialListQuery): Readable {
  const filter = toFilter(query);
  async function* batches() {
    for await (const batch of repo.serialBatches(db, scope, filter, 5_000)) {
      yield batch.map((r) => {
        const s = toSerialRow(r);
        return [s.id, s.serial, s.product_id, s.product, s.customer_id, s.status, s.redeemed, s.revoked, s.active_activation_count,
          s.max_activations, s.remaining_activations, s.origin, s.expires_at, s.batch_tag, s.order_id, s.created_at];
      });
    }
  }
  return csvStream(SERIAL_EXPORT_COLUMNS, batches());
}

export async function serialTemplate(db: Db, scope: Scope): Promise<string> {
  const resolver = await ProductResolver.load(db, scope);
  const product = resolver.first;
  // Fresh random codes, so the template imports unchanged however often it is used.
  return csvDocument(
    [...SERIAL_IMPORT_COLUMNS],
    [
      [newSerialCode('DEMO'), product?.id ?? '', '', '', '', ''],
      [newSerialCode('DEMO'), '', product?.name ?? '', 'ann.lee@example.com', 'Ann', 'Lee'],
    ],
  );
}

class CodeRaceLost extends Error {}

async function writeSerialImport(
  tx: Tx,
  scope: Scope,
  byKey: Map<string, ValidSerialRow>,
  accepted: ValidSerialRow[],
  validationErrors: readonly RowError[],
  progress?: ProgressReporter,
) {
  const errors = [...validationErrors];
  await repo.lockSerialWrites(tx, scope);
  const unique = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  const taken = new Set<string>();
  let inserted = 0;
  for (let i = 0; i < unique.length; i += 5_000) {
    const batch = unique.slice(i, i + 5_000);
    const existing = await repo.classifyExistingKeys(tx, scope, batch.map((r) => r.key));
    existing.taken.forEach((k) => taken.add(k));
    // A code of a product outside the caller's assignment is answered exactly like a code of
    // another workspace, and left untouched: the import must not reveal that it exists here.
    for (const [key, productId] of existing.ours) if (!canSeeProduct(scope, productId)) taken.add(key);
    // Existing codes of this workspace (of products the caller can see) are accepted and left as they are.
    const fresh = batch.filter((r) => !existing.ours.has(r.key) && !existing.taken.has(r.key));
    const { accountIds } = await upsertCustomers(
      tx,
      scope,
      fresh.filter((r) => r.customer).map((r) => ({ ...r.customer!, productIds: [r.productId], marketingConsent: false })),
      'serial-import',
    );
    const created = await repo.insertSerials(
      tx,
      scope,
      fresh.map((r) => ({
        productId: r.productId,
        code: r.code,
        customerId: r.customer ? accountIds.get(r.customer.emailNormalized)! : null,
        origin: 'imported',
        maxActivations: r.maxActivations,
        ...repo.NO_TERMS,
      })),
      { action: 'imported' },
    );
    inserted += created.length;
    progress?.(Math.min(i + 5_000, unique.length));
    // Writers of this workspace hold the lock, so a code skipped by the insert was just taken by another workspace.
    if (created.length !== fresh.length) throw new CodeRaceLost();
  }
  // Decided inside the transaction: an import with no accepted row writes nothing at all.
  // A code held elsewhere is a row error; nothing was written for that row.
  for (const r of accepted) {
    if (taken.has(r.key)) errors.push({ row: r.row, field: 'serialCode', code: 'SERIAL_CODE_TAKEN', message: 'this code is already in use' });
  }
  errors.sort((a, b) => a.row - b.row);
  const importedCount = accepted.filter((r) => !taken.has(r.key)).length;
  const failedCount = new Set(errors.map((e) => e.row)).size;
  if (importedCount === 0) {
    throw new AppError(ImportErrors.IMPORT_REJECTED, 'No row could be imported; see errors', {
      errors,
      body: { success: false, importedCount: 0, insertedCount: 0, failedCount },
    });
  }
  return { inserted, importedCount, failedCount, errors };
}

export async function importSerials(db: Db, scope: Scope, input: RawImport, progress?: ProgressReporter) {
  if (input.rows.length === 0) throw new AppError(ImportErrors.IMPORT_EMPTY, 'The import contains no rows');
  const resolver = await ProductResolver.load(db, scope);
  const mapping = ProductMapping.parse(resolver, input.productMappings);
  const errors: RowError[] = [];
  const byKey = new Map<string, ValidSerialRow>();
  const accepted: ValidSerialRow[] = [];
  input.rows.forEach((raw, index) => {
    const result = validateSerialRow(raw, index + 1, mapping);
    if (!result.ok) return void errors.push(...result.errors);
    const seen = byKey.get(result.value.key);
    const otherCustomer = seen && result.value.customer && seen.customer?.emailNormalized !== result.value.customer.emailNormalized;
    if (seen && (seen.productId !== result.value.productId || otherCustomer)) {
      errors.push({ row: index + 1, field: 'serialCode', code: 'DUPLICATE_IN_FILE', message: `the same code appears on row ${seen.row} for another product or customer` });
      return;
    }
    if (!seen) byKey.set(result.value.key, result.value);
    accepted.push(result.value);
  });

  // A code that another workspace inserts between our lookup and our insert makes the whole
  // attempt start again (nothing of it commits), so the row is reported as taken without having
  // created anything for it (a customer relationship, say). Such races are rare; three attempts.
  for (let attempt = 1; ; attempt += 1) {
    try {
      const outcome = await inTransaction(db, (tx) => writeSerialImport(tx, scope, byKey, accepted, errors, progress));
      if (outcome.inserted > 0) repo.cleanCodeIndexSoon(db, ignoreCleanupFailure);
      const ok = outcome.errors.length === 0;
      return {
        status: ok ? (201 as const) : (207 as const),
        body: { success: ok, importedCount: outcome.importedCount, insertedCount: outcome.inserted, failedCount: outcome.failedCount, errors: outcome.errors },
      };
    } catch (error) {
      if (!(error instanceof CodeRaceLost)) throw error;
      if (attempt >= 3) throw new AppError(CommonErrors.SERIALIZATION_FAILURE, 'Serial codes of this import were taken while it ran; retry the import');
    }
  }
}

export async function availableByProduct(db: Db, scope: Scope, query: AvailableQuery) {
  const filter = { ...toFilter(query), status: 'available' as const };
  const { page, pageSize, offset } = pageWindow(query);
  const [products, promos, { rows, total }] = await Promise.all([
    repo.availabilityByProduct(db, scope, query.productId),
    repo.runningPromos(db, scope, query.productId, new Date()),
    repo.listPage(db, scope, filter, { limit: pageSize, offset }),
  ]);
  return {
    products,
    promos: promos.map((p) => ({ ...p, promoPrice: p.promoPrice ?? 0, promoStart: iso(p.promoStart), promoExpires: iso(p.promoExpires) })),
    rows: rows.map(toSerialRow),
    total,
    page,
    pageSize,
  };
}

export async function listResellers(db: Db, scope: Scope) {
  return { resellers: await visibleResellers(db, scope, { activeOnly: true }) };
}

/**
 * Generates the serials and answers the 201 body as JSON text (GenerateResult): the serials' JSON is written by
 * PostgreSQL in the insert statement.
 */
export async function generateSerialsJson(db: Db, scope: Scope, body: GenerateBody): Promise<string> {
  const settings = normaliseGenerateBody(body);
  const product = await getVisibleProductOrThrow(db, scope, settings.productId);
  if (!(await repo.workspaceBillingEligible(db, scope))) {
    throw new AppError(SerialErrors.BILLING_NOT_ELIGIBLE, 'Serial generation needs current billing eligibility for this workspace');
  }
  const { productId: _productId, quantity: _quantity, prefix: _prefix, ...terms } = settings;
  const event = { action: 'generated', data: settings.batchTag ? { batchTag: settings.batchTag } : {} };
  const created = await inTransaction(db, async (tx) => {
    const ids: number[] = [];
    const parts: string[] = [];
    // Codes carry 125 random bits; a collision is astronomically rare, but the
    // unique key makes a retry safe rather than a failure.
    for (let attempt = 0; attempt < 3 && ids.length < settings.quantity; attempt++) {
      const rows = newSerialCodes(settings.quantity - ids.length, settings.prefix).map((code) => ({
        productId: product.id,
        code,
        customerId: null,
        origin: 'generated' as const,
        maxActivations: product.maxActivations,
        ...terms,
      }));
      const inserted = await repo.insertSerialsJson(tx, scope, product.name, rows, event);
      ids.push(...inserted.ids);
      if (inserted.ids.length > 0) parts.push(inserted.rowsJson.slice(1, -1));
    }
    if (ids.length < settings.quantity) throw new AppError(SerialErrors.SERIAL_CODE_COLLISION, 'Could not allocate unique serial codes; retry');
    await emitWebhookEvent(tx, scope.workspaceId, 'serial.generated', { product_id: product.id, count: ids.length, serial_ids: ids, batch_tag: settings.batchTag });
    return { count: ids.length, serialsJson: `[${parts.join(',')}]` };
  });
  repo.cleanCodeIndexSoon(db, ignoreCleanupFailure);
  const message = `Generated ${created.count} serial${created.count === 1 ? '' : 's'} for ${product.name}. Generated serials are inventory: no customer, order or ownership was created.`;
  const head = JSON.stringify({ message, count: created.count, product: { id: product.id, name: product.name } });
  return `${head.slice(0, -1)},"serials":${created.serialsJson}}`;
}

/** `generateSerialsJson` as an object (the operator CLI prints it). */
export async function generateSerials(db: Db, scope: Scope, body: GenerateBody): Promise<{ message: string; count: number; product: { id: number; name: string }; serials: SerialRow[] }> {
  return JSON.parse(await generateSerialsJson(db, scope, body)) as { message: string; count: number; product: { id: number; name: string }; serials: SerialRow[] };
}

/** The serial if the caller may see it (else 404), then the route's record permission (else 403). */
export async function visibleSerialOrThrow(db: Db, scope: Scope, record: RecordAccess, serialId: number) {
  const serial = await repo.findSerial(db, scope, serialId);
  if (!serial) throw notFound('Serial');
  record.require();
  return serial;
}

/** Who moved a serial, and why: the audit trail's actor and reason. */
interface TransitionCause {
  actorType: 'developer' | 'system';
  actorAccountId: number | null;
  reason: string | null;
  note: string | null;
  data?: Record<string, unknown>;
}

/**
 * One lifecycle step of a serial the caller has locked: audited and announced to webhooks. The
 * action routes and the refund revocation take this one path. Answers the refusal (with the
 * actions allowed) or the number of devices released.
 */
async function applyTransition(tx: Tx, scope: Scope, serial: repo.SerialRecord, action: SerialAction, cause: TransitionCause) {
  const result = transition({ status: serial.status, redeemedAt: serial.redeemed_at, customerId: serial.customer_id }, action);
  if (!result.ok) return result;
  const released = result.releasesDevices ? await repo.releaseActivations(tx, scope, serial.id, action) : 0;
  await repo.updateStatus(tx, scope, serial.id, { status: result.to, redeemNow: result.redeems, resetActivations: result.releasesDevices });
  announceSerialChanges(tx, scope.workspaceId, [serial.id]);
  await repo.recordEvents(tx, scope.workspaceId, [
    {
      serialId: serial.id,
      action,
      actorType: cause.actorType,
      actorAccountId: cause.actorAccountId,
      reason: cause.reason,
      note: cause.note,
      beforeStatus: serial.status,
      afterStatus: result.to,
      data: { deactivatedActivations: released, ...cause.data },
    },
  ]);
  await emitWebhookEvent(tx, scope.workspaceId, 'serial.status_changed', { serial_id: serial.id, product_id: serial.product_id, action, previous_status: serial.status, status: result.to, released_activations: released, reason: cause.reason });
  return { ok: true as const, released };
}

export async function applyAction(db: Db, scope: Scope, record: RecordAccess, serialId: number, action: SerialAction, body: ActionBody | undefined) {
  await visibleSerialOrThrow(db, scope, record, serialId);
  return inTransaction(db, async (tx) => {
    const serial = await repo.findSerial(tx, scope, serialId, true);
    if (!serial) throw notFound('Serial');
    const result = await applyTransition(tx, scope, serial, action, { actorType: 'developer', actorAccountId: scope.accountId, reason: body?.reason ?? null, note: body?.note ?? null });
    if (!result.ok) {
      throw new AppError(
        SerialErrors.INVALID_SERIAL_TRANSITION,
        `Cannot ${action} a serial that is ${serial.status}. Allowed: ${result.allowedActions.join(', ') || 'none (terminal state)'}`,
        { body: { currentStatus: serial.status, allowedActions: result.allowedActions } },
      );
    }
    const after = await repo.findSerial(tx, scope, serialId);
    return { serial: toSerialRow(after!), deactivatedActivations: result.released };
  });
}

/**
 * Revokes the serials sold with fully refunded order items, in the refund's transaction: their
 * devices are released and validation answers REVOKED from then on. Audited as a `revoke` by the
 * system with reason `refund`; a serial already revoked stays as it is. Answers the serials revoked.
 */
export async function revokeSerialsForRefund(tx: Tx, scope: Scope, sold: ReadonlyArray<{ serialId: number; orderItemId: number }>): Promise<number[]> {
  const revoked: number[] = [];
  // In id order, so two refunds that share serials lock them in one order.
  for (const { serialId, orderItemId } of [...sold].sort((a, b) => a.serialId - b.serialId)) {
    const serial = await repo.findSerial(tx, scope, serialId, true);
    if (!serial || serial.status === 'revoked') continue;
    const result = await applyTransition(tx, scope, serial, 'revoke', { actorType: 'system', actorAccountId: null, reason: 'refund', note: null, data: { orderItemId } });
    if (result.ok) revoked.push(serialId);
  }
  return revoked;
}

export async function setPortalVisibility(db: Db, scope: Scope, record: RecordAccess, serialId: number, hidden: boolean, body: ActionBody | undefined) {
  const serial = await visibleSerialOrThrow(db, scope, record, serialId);
  if (serial.order_id === null) throw new AppError(SerialErrors.SERIAL_HAS_NO_ORDER, 'This serial has no linked order to hide or show');
  const orderId = serial.order_id;
  await inTransaction(db, async (tx) => {
    // Presentation only: ownership, payment and refund state are not touched.
    await repo.setOrderHidden(tx, scope, orderId, hidden);
    await repo.recordEvents(tx, scope.workspaceId, [
      {
        serialId,
        action: hidden ? 'customer_portal_order.hidden' : 'customer_portal_order.shown',
        actorType: 'developer',
        actorAccountId: scope.accountId,
        reason: body?.reason ?? null,
        note: body?.note ?? null,
        beforeStatus: serial.status,
        afterStatus: serial.status,
        data: { orderId },
      },
    ]);
  });
  return { serialId: serial.id, serial: serial.code, orderId, customerPortalHidden: hidden };
}

export async function listSerialEvents(
  db: Db,
  scope: Scope,
  record: RecordAccess,
  serialId: number,
  query: { page?: number | undefined; limit?: number | undefined },
) {
  await visibleSerialOrThrow(db, scope, record, serialId);
  const { page, pageSize, offset } = pageWindow(query);
  const { rows, total } = await repo.listEvents(db, scope, serialId, { limit: pageSize, offset });
  return {
    rows: rows.map((r) => ({ ...r, id: Number(r.id), data: (r.data ?? {}) as Record<string, unknown>, created_at: r.created_at.toISOString() })),
    total,
    page,
    pageSize,
  };
}

// Used by other modules (purchase imports, manual grants) inside their transactions.

export type { NewSerial, SerialAssignment, SerialEventInput, SerialRecord } from './serials.repo.js';
export { NO_TERMS } from './serials.repo.js';

/** Creates serials (skipping codes that exist anywhere) with their audit events. */
export const issueSerials = (tx: Tx, scope: Scope, rows: repo.NewSerial[], event: { action: string; data?: Record<string, unknown> }) =>
  repo.insertSerials(tx, scope, rows, event);

/** Assigns available serials to customers; returns the ids that changed. */
export async function assignSerials(tx: Tx, scope: Scope, rows: repo.SerialAssignment[], event: { action: string; reason?: string | null; note?: string | null }) {
  const assigned = await repo.assignSerials(tx, scope, rows, event);
  await emitWebhookEvents(tx, scope.workspaceId, 'serial.assigned', assigned.map((a) => ({ serial_id: a.id, product_id: a.product_id, customer_id: a.customer_ref, order_id: a.order_id, via: event.action })));
  return assigned.map((a) => a.id);
}

/** Serialises serial-code writers of the caller's workspace until the transaction ends. */
export const lockSerialWrites = (tx: Tx, scope: Scope) => repo.lockSerialWrites(tx, scope);

/** For each code key: this workspace's serial, or "taken" when another workspace holds it. */
export async function lookupSerialCodes(tx: Tx, scope: Scope, keys: string[]) {
  const mine = await repo.serialsByKey(tx, scope, keys);
  const classified = await repo.classifyExistingKeys(tx, scope, keys);
  return { mine: new Map(mine.map((s) => [s.code_key, s])), taken: classified.taken };
}

export const findSerialRecords = (db: Executor, scope: Scope, ids: number[]) => repo.findSerials(db, scope, ids);

export const findSerialForUpdate = (tx: Tx, scope: Scope, serialId: number) => repo.findSerial(tx, scope, serialId, true);

/** Appends to serials' audit trails in the caller's transaction (the plugin runtime's seat events). */
export const recordSerialEvents = (tx: Executor, workspaceId: number, events: repo.SerialEventInput[]) => repo.recordEvents(tx, workspaceId, events);
