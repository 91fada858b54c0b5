import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { enqueueEmails } from '../../platform/mail/mail.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { findActiveCustomer, normaliseEmail, upsertCustomers } from '../customers/index.js';
import { getVisibleProductOrThrow, type ProductRef } from '../products/index.js';
import { assignSerials, findSerialForUpdate, findSerialRecords, issueSerials, NO_TERMS, toSerialRow } from '../serials/index.js';
import { PRODUCT_GRANT_EMAIL } from './purchases.emails.js';
import { PurchaseErrors } from './purchases.errors.js';
import { grantEndsAt, type GrantRequest, grantRequestHash, normaliseGrantBody } from './purchases.grant-request.js';
import * as grants from './purchases.grants.repo.js';
import * as orders from './purchases.orders.repo.js';
import * as repo from './purchases.repo.js';
import type { ManualGrantBody, ManualGrantResult } from './purchases.schemas.js';
import { toPurchaseRow } from './purchases.service.js';
import { insertItemsAnnounced } from './purchases.items.js';

type Outcome = ManualGrantResult['grants'][number];

/** `customerId` is the relationship id that answers show; `accountId` joins the rows inside. */
interface GrantCustomer {
  customerId: number;
  accountId: number;
  email: string;
  created: boolean;
}

export interface GrantOutcomeResult {
  body: ManualGrantResult;
  replayed: boolean;
  emailsQueued: number;
}

/** The customer: an existing one by id, or found or created by e-mail; linked to the granted products either way. */
async function grantCustomer(tx: Tx, scope: Scope, request: GrantRequest): Promise<GrantCustomer> {
  if ('customerId' in request.customer) {
    const found = await findActiveCustomer(tx, scope, request.customer.customerId);
    if (!found) throw notFound('Customer');
    await upsertCustomers(tx, scope, [{ email: found.email, emailNormalized: normaliseEmail(found.email), firstName: null, lastName: null, productIds: request.productIds, marketingConsent: false }], 'grant');
    return { ...found, created: false };
  }
  const c = request.customer;
  const { accountIds, customerIds, inserted } = await upsertCustomers(tx, scope, [{ ...c, productIds: request.productIds, marketingConsent: false }], 'grant');
  return { customerId: customerIds.get(c.emailNormalized)!, accountId: accountIds.get(c.emailNormalized)!, email: c.email, created: inserted > 0 };
}

/**
 * The products the customer needs nothing for (with why), and for an `existing_serial` grant the
 * serial, locked and checked. Run under the customer's grant lock.
 */
async function grantSkips(tx: Tx, scope: Scope, request: GrantRequest, product: ProductRef, customer: GrantCustomer, endsAt: Date | null) {
  const skipped = new Map<number, string>();
  if (request.grantType === 'existing_serial') {
    const serial = await findSerialForUpdate(tx, scope, request.serialId!);
    if (!serial) throw notFound('Serial');
    if (serial.product_id !== product.id) throw new AppError(PurchaseErrors.SERIAL_PRODUCT_MISMATCH, `Serial ${serial.id} belongs to product ${serial.product_id}`);
    // A revoked serial is terminal: it gives its former holder no access, so it is not "already assigned".
    if (serial.customer_id === customer.accountId && serial.status !== 'revoked') skipped.set(serial.product_id, 'serial_already_assigned');
    else if (serial.status !== 'available') {
      const heldByOther = serial.customer_id !== null && serial.customer_id !== customer.accountId;
      throw new AppError(PurchaseErrors.SERIAL_NOT_AVAILABLE, `Serial ${serial.id} is ${serial.status}${heldByOther ? ' and held by another customer' : ''}`);
    }
    return { skipped, existingSerial: { id: serial.id } };
  }
  for (const e of await grants.activeEntitlements(tx, scope, customer.accountId, request.productIds)) {
    const ends = e.ends_at === null ? null : new Date(e.ends_at);
    // Lasting access, or a subscription that already runs at least as long, makes this grant redundant.
    if (e.kind === 'perpetual' || ends === null || (request.grantType === 'subscription' && endsAt !== null && ends >= endsAt)) {
      skipped.set(e.product_id, 'already_entitled');
    }
  }
  return { skipped, existingSerial: null };
}

/**
 * The grant's order, a serial per product (or the existing one assigned) and the items with their
 * entitlements. Answers the order as the result shows it and the items written.
 */
async function writeGrantOrder(
  tx: Tx,
  scope: Scope,
  grant: { id: number; request: GrantRequest; customer: GrantCustomer; endsAt: Date | null; now: Date },
  granting: ProductRef[],
  existingSerial: { id: number } | null,
) {
  const { id: grantId, request, customer, endsAt, now } = grant;
  const currency = granting[0]!.currency.trim();
  const [created] = await orders.upsertOrders(tx, scope, [
    {
      customerId: customer.accountId,
      reference: `GRANT-${grantId}`,
      externalReference: request.grantRequestId,
      channel: 'manual_grant',
      provider: 'manual',
      status: 'granted',
      totalCents: 0,
      currency,
      resellerId: null,
      purchasedAt: now,
    },
  ]);
  const orderId = created!.id;
  const order: ManualGrantResult['purchases'][number] = {
    order_id: orderId,
    reference: `GRANT-${grantId}`,
    channel: 'manual_grant',
    status: 'granted',
    customer_id: customer.customerId,
    currency,
    total_cents: 0,
    grant_request_id: request.grantRequestId,
    purchased_at: now.toISOString(),
  };

  const serialOf = new Map<number, { id: number; code: string | null }>();
  if (existingSerial) {
    const assigned = await assignSerials(tx, scope, [{ serialId: existingSerial.id, customerId: customer.accountId, orderId }], {
      action: 'assigned_by_grant',
      reason: request.reason,
      note: request.note,
    });
    if (assigned.length === 0) throw new AppError(PurchaseErrors.SERIAL_NOT_AVAILABLE, `Serial ${existingSerial.id} is no longer available`);
    serialOf.set(granting[0]!.id, { id: existingSerial.id, code: null });
  } else {
    const issued = await issueSerials(
      tx,
      scope,
      granting.map((p) => ({
        productId: p.id,
        code: newSerialCode(),
        customerId: customer.accountId,
        origin: 'granted' as const,
        maxActivations: p.maxActivations,
        orderId,
        ...NO_TERMS,
        expiresAt: endsAt,
      })),
      { action: 'granted', data: { grantId, reason: request.reason } },
    );
    if (issued.length !== granting.length) throw new Error('A generated serial code collided; the grant was not written');
    for (const s of issued) serialOf.set(s.product_id, { id: s.id, code: s.code });
  }

  const items = await insertItemsAnnounced(
    tx,
    scope,
    granting.map((p) => ({
      orderId,
      productId: p.id,
      customerId: customer.accountId,
      customerRef: customer.customerId,
      channel: 'manual_grant',
      provider: 'manual',
      resellerId: null,
      recordType: request.grantType === 'subscription' ? 'subscription' : 'grant',
      status: 'granted',
      currency: p.currency.trim(),
      priceCents: p.priceCents,
      salePriceCents: 0,
      externalReference: null,
      serialId: serialOf.get(p.id)?.id ?? null,
      purchasedAt: now,
      entitlement: { source: 'grant', kind: request.grantType === 'subscription' ? 'subscription' : 'perpetual', endsAt, manualGrantId: grantId },
    })),
  );
  return { order, items };
}

/**
 * Grants access without payment. Never charges, refunds or authorises billing.
 * With a grantRequestId the call is idempotent: requests sharing a key are
 * serialised by a transaction lock, the first answer is stored with the grant,
 * and a repeat returns it unchanged.
 */
export async function grantAccess(db: Db, scope: Scope, body: ManualGrantBody): Promise<GrantOutcomeResult> {
  const request = normaliseGrantBody(body);
  const products: ProductRef[] = [];
  for (const id of request.productIds) products.push(await getVisibleProductOrThrow(db, scope, id));
  const requestHash = grantRequestHash(request);

  return inTransaction(db, async (tx) => {
    if (request.grantRequestId) {
      await grants.lockGrantRequest(tx, scope, request.grantRequestId);
      const previous = await grants.findGrantRequest(tx, scope, request.grantRequestId);
      if (previous) {
        if (previous.request_hash !== requestHash) {
          throw new AppError(PurchaseErrors.GRANT_REQUEST_CONFLICT, 'This grantRequestId was used for a different grant; use a new id for a new grant');
        }
        return { body: previous.response as ManualGrantResult, replayed: true, emailsQueued: 0 };
      }
    }

    const customer = await grantCustomer(tx, scope, request);
    // One grant at a time per customer, so two different grants cannot both see "not yet entitled".
    // '#' is outside the grantRequestId alphabet: a key such as "customer:12" must not share
    // (and deadlock on) customer 12's lock.
    await grants.lockGrantRequest(tx, scope, `#customer:${customer.accountId}`);

    const now = new Date();
    const endsAt = grantEndsAt(request, now);
    const { skipped, existingSerial } = await grantSkips(tx, scope, request, products[0]!, customer, endsAt);

    const grantId = await grants.insertGrant(tx, scope, {
      grantRequestId: request.grantRequestId,
      requestHash,
      grantType: request.grantType,
      customerId: customer.accountId,
      reason: request.reason,
      note: request.note,
    });
    const granting = products.filter((p) => !skipped.has(p.id));
    const outcomes = new Map<number, Outcome>(
      products.map((p) => [p.id, { productId: p.id, status: 'skipped', reason: skipped.get(p.id) ?? null, orderItemId: null, entitlementId: null, serialId: null }]),
    );
    const written = granting.length > 0 ? await writeGrantOrder(tx, scope, { id: grantId, request, customer, endsAt, now }, granting, existingSerial) : null;
    const items = written?.items ?? [];
    for (const item of items) {
      outcomes.set(item.product_id, { productId: item.product_id, status: 'created', reason: null, orderItemId: item.id, entitlementId: item.entitlement_id, serialId: item.serial_id });
    }
    const itemIds = items.map((item) => item.id);

    const itemRecords = await repo.findPurchases(tx, scope, itemIds);
    const entitlements = await grants.findEntitlements(tx, scope, items.map((item) => item.entitlement_id));
    const serials = await findSerialRecords(tx, scope, items.flatMap((item) => (item.serial_id === null ? [] : [item.serial_id])));
    const emailsQueued = request.sendEmails ? (await enqueueEmails(tx, scope, PRODUCT_GRANT_EMAIL, itemIds.map((orderItemId) => ({ orderItemId })))).length : 0;
    const createdCount = itemIds.length;
    const result: ManualGrantResult = {
      success: true,
      grantType: request.grantType,
      grantId,
      grantRequestId: request.grantRequestId,
      count: products.length,
      createdCount,
      skippedCount: products.length - createdCount,
      created: createdCount > 0,
      customer: { customer_id: customer.customerId, email: customer.email, created: customer.created },
      grants: products.map((p) => outcomes.get(p.id)!),
      products: products.map((p) => ({ id: p.id, name: p.name, price: formatMajorUnits(p.priceCents, p.currency.trim()) })),
      purchases: written ? [written.order] : [],
      items: itemRecords.map((r) => toPurchaseRow(r, false)),
      entitlements: entitlements.map((e) => ({
        ...e,
        starts_at: new Date(e.starts_at).toISOString(),
        ends_at: e.ends_at === null ? null : new Date(e.ends_at).toISOString(),
      })),
      serials: serials.map(toSerialRow),
      emailsQueued,
      reason: request.reason,
    };
    await grants.saveGrantResponse(tx, scope, grantId, result);
    await writeAudit(tx, scope, {
      action: 'purchases.manual_grant',
      subjectType: 'customer',
      subjectId: customer.customerId,
      data: { grantId, grantRequestId: request.grantRequestId, grantType: request.grantType, products: request.productIds, created: createdCount, reason: request.reason },
    });
    return { body: result, replayed: false, emailsQueued };
  });
}
