import { createHash } from 'node:crypto';
import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { newSerialCode } from '../../platform/ids/codes.js';
import { enqueueEmails, type QueuedEmail } from '../../platform/mail/mail.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { normaliseEmail } from '../customers/customers.import.js';
import { findActiveCustomer, upsertCustomers } from '../customers/customers.service.js';
import { getVisibleProductOrThrow, type ProductRef } from '../products/products.service.js';
import { assignSerials, findSerialForUpdate, findSerialRecords, issueSerials, NO_TERMS, toSerialRow } from '../serials/serials.service.js';
import { PurchaseErrors } from './purchases.errors.js';
import * as repo from './purchases.repo.js';
import type { ManualGrantBody, ManualGrantResult } from './purchases.schemas.js';
import { toPurchaseRow } from './purchases.service.js';

type GrantType = ManualGrantResult['grantType'];
type Outcome = ManualGrantResult['grants'][number];

const DAY = 86_400_000;
export const DEFAULT_SUBSCRIPTION_DAYS = 365;
const MAX_SUBSCRIPTION_DAYS = 3660;

function invalid(path: string, message: string): AppError {
  return new AppError(CommonErrors.VALIDATION_FAILED, message, { errors: [{ path: `body/${path}`, message }] });
}

interface GrantRequest {
  grantType: GrantType;
  productIds: number[];
  customer: { customerId: number } | { email: string; emailNormalized: string; firstName: string | null; lastName: string | null };
  serialId: number | null;
  accessUntil: Date | null;
  reason: string;
  note: string | null;
  sendEmails: boolean;
  grantRequestId: string | null;
}

/** Checks the combination rules the schema cannot express. */
export function normaliseGrantBody(body: ManualGrantBody, now = new Date()): GrantRequest {
  const grantType = body.grantType ?? 'perpetual';
  if (body.productId !== undefined && body.productIds !== undefined) throw invalid('productIds', 'send productId or productIds, not both');
  const productIds = body.productIds ?? (body.productId !== undefined ? [body.productId] : []);
  if (productIds.length === 0) throw invalid('productId', 'productId or productIds is required');
  if (grantType !== 'perpetual' && productIds.length !== 1) {
    throw new AppError(PurchaseErrors.SINGLE_PRODUCT_GRANT_REQUIRED, `A ${grantType} grant takes exactly one product`, {
      errors: [{ path: 'body/productIds', message: 'exactly one product' }],
    });
  }
  if (body.customerId !== undefined && body.email !== undefined) throw invalid('email', 'send customerId or email, not both');
  if (body.customerId === undefined && body.email === undefined) throw invalid('customerId', 'customerId or email is required');
  if (body.customerId !== undefined && (body.firstName !== undefined || body.lastName !== undefined)) {
    throw invalid('firstName', 'names are only taken with email (an existing customer keeps their names)');
  }
  if (grantType === 'existing_serial' && body.serialId === undefined) throw invalid('serialId', 'serialId is required for existing_serial');
  if (grantType !== 'existing_serial' && body.serialId !== undefined) throw invalid('serialId', 'serialId is only used with grantType existing_serial');
  let accessUntil: Date | null = null;
  if (body.accessUntil !== undefined) {
    if (grantType !== 'subscription') throw invalid('accessUntil', 'accessUntil is only used with grantType subscription');
    accessUntil = new Date(body.accessUntil);
    if (accessUntil <= now) throw invalid('accessUntil', 'accessUntil must be in the future');
    if (accessUntil.getTime() > now.getTime() + MAX_SUBSCRIPTION_DAYS * DAY) throw invalid('accessUntil', 'accessUntil is at most ten years ahead');
  }
  const reason = body.reason.trim();
  if (reason === '') throw invalid('reason', 'reason must not be blank');
  const email = body.email?.trim();
  return {
    grantType,
    productIds: [...new Set(productIds)],
    customer:
      email !== undefined
        ? { email, emailNormalized: normaliseEmail(email), firstName: body.firstName?.trim() || null, lastName: body.lastName?.trim() || null }
        : { customerId: body.customerId! },
    serialId: body.serialId ?? null,
    accessUntil,
    reason,
    note: body.note?.trim() || null,
    sendEmails: body.sendProductPurchaseEmails ?? false,
    grantRequestId: body.grantRequestId ?? null,
  };
}

/** What makes two requests "the same intended grant": everything but the key itself. */
export function grantRequestHash(r: GrantRequest): string {
  const canonical = {
    grantType: r.grantType,
    productIds: [...r.productIds].sort((a, b) => a - b),
    customer: 'customerId' in r.customer ? { customerId: r.customer.customerId } : { email: r.customer.emailNormalized, firstName: r.customer.firstName, lastName: r.customer.lastName },
    serialId: r.serialId,
    accessUntil: r.accessUntil?.toISOString() ?? null,
    reason: r.reason,
    note: r.note,
    sendEmails: r.sendEmails,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function productEmail(product: ProductRef, email: string, serialCode: string | null, grantType: GrantType, endsAt: Date | null): QueuedEmail {
  const lines = [
    `You now have access to ${product.name}.`,
    ...(serialCode ? ['', `Your serial: ${serialCode}`] : []),
    ...(grantType === 'subscription' && endsAt ? ['', `Access runs until ${endsAt.toISOString().slice(0, 10)}.`] : []),
    '',
    'No payment was taken for this access.',
  ];
  return { kind: 'product_purchase', recipient: email, subject: `Your access to ${product.name}`, text: lines.join('\n'), data: { productId: product.id } };
}

export interface GrantOutcomeResult {
  body: ManualGrantResult;
  replayed: boolean;
  emailsQueued: number;
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
      await repo.lockGrantRequest(tx, scope, request.grantRequestId);
      const previous = await repo.findGrantRequest(tx, scope, request.grantRequestId);
      if (previous) {
        if (previous.request_hash !== requestHash) {
          throw new AppError(PurchaseErrors.GRANT_REQUEST_CONFLICT, 'This grantRequestId was used for a different grant; use a new id for a new grant');
        }
        return { body: previous.response as ManualGrantResult, replayed: true, emailsQueued: 0 };
      }
    }

    // The customer: an existing one by id, or found or created by e-mail.
    // `customerId` is the relationship id that answers show; `accountId` joins the rows inside.
    let customer: { customerId: number; accountId: number; email: string; created: boolean };
    if ('customerId' in request.customer) {
      const found = await findActiveCustomer(tx, scope, request.customer.customerId);
      if (!found) throw notFound('Customer');
      await upsertCustomers(tx, scope, [{ email: found.email, emailNormalized: normaliseEmail(found.email), firstName: null, lastName: null, productIds: request.productIds, marketingConsent: false }], 'grant');
      customer = { ...found, created: false };
    } else {
      const c = request.customer;
      const { accountIds, customerIds, inserted } = await upsertCustomers(tx, scope, [{ ...c, productIds: request.productIds, marketingConsent: false }], 'grant');
      customer = { customerId: customerIds.get(c.emailNormalized)!, accountId: accountIds.get(c.emailNormalized)!, email: c.email, created: inserted > 0 };
    }
    // One grant at a time per customer, so two different grants cannot both see "not yet entitled".
    // '#' is outside the grantRequestId alphabet: a key such as "customer:12" must not share
    // (and deadlock on) customer 12's lock.
    await repo.lockGrantRequest(tx, scope, `#customer:${customer.accountId}`);

    const now = new Date();
    const endsAt = request.grantType === 'subscription' ? (request.accessUntil ?? new Date(now.getTime() + DEFAULT_SUBSCRIPTION_DAYS * DAY)) : null;
    const skipped = new Map<number, string>();
    let existingSerial: { id: number } | null = null;
    if (request.grantType === 'existing_serial') {
      const serial = await findSerialForUpdate(tx, scope, request.serialId!);
      if (!serial) throw notFound('Serial');
      if (serial.product_id !== products[0]!.id) throw new AppError(PurchaseErrors.SERIAL_PRODUCT_MISMATCH, `Serial ${serial.id} belongs to product ${serial.product_id}`);
      // A revoked serial is terminal: it gives its former holder no access, so it is not "already assigned".
      if (serial.customer_id === customer.accountId && serial.status !== 'revoked') skipped.set(serial.product_id, 'serial_already_assigned');
      else if (serial.status !== 'available') {
        const heldByOther = serial.customer_id !== null && serial.customer_id !== customer.accountId;
        throw new AppError(PurchaseErrors.SERIAL_NOT_AVAILABLE, `Serial ${serial.id} is ${serial.status}${heldByOther ? ' and held by another customer' : ''}`);
      }
      existingSerial = { id: serial.id };
    } else {
      for (const e of await repo.activeEntitlements(tx, scope, customer.accountId, request.productIds)) {
        const ends = e.ends_at === null ? null : new Date(e.ends_at);
        // Lasting access, or a subscription that already runs at least as long, makes this grant redundant.
        if (e.kind === 'perpetual' || ends === null || (request.grantType === 'subscription' && endsAt !== null && ends >= endsAt)) {
          skipped.set(e.product_id, 'already_entitled');
        }
      }
    }

    const grantId = await repo.insertGrant(tx, scope, {
      grantRequestId: request.grantRequestId,
      requestHash,
      grantType: request.grantType,
      customerId: customer.accountId,
      reason: request.reason,
      note: request.note,
    });
    const granting = products.filter((p) => !skipped.has(p.id));
    const itemIds: number[] = [];
    const entitlementIds: number[] = [];
    const serialIds: number[] = [];
    const outcomes = new Map<number, Outcome>(
      products.map((p) => [p.id, { productId: p.id, status: 'skipped', reason: skipped.get(p.id) ?? null, orderItemId: null, entitlementId: null, serialId: null }]),
    );
    let order: ManualGrantResult['purchases'][number] | null = null;
    const emails: QueuedEmail[] = [];

    if (granting.length > 0) {
      const currency = granting[0]!.currency.trim();
      const [created] = await repo.upsertOrders(tx, scope, [
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
      order = {
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

      const items = await repo.insertItems(
        tx,
        scope,
        granting.map((p) => ({
          orderId,
          productId: p.id,
          customerId: customer.accountId,
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
      for (const item of items) {
        outcomes.set(item.product_id, { productId: item.product_id, status: 'created', reason: null, orderItemId: item.id, entitlementId: item.entitlement_id, serialId: item.serial_id });
        itemIds.push(item.id);
        entitlementIds.push(item.entitlement_id);
        if (item.serial_id !== null) serialIds.push(item.serial_id);
      }
    }

    const itemRecords = await repo.findPurchases(tx, scope, itemIds);
    const entitlements = await repo.findEntitlements(tx, scope, entitlementIds);
    const serials = await findSerialRecords(tx, scope, serialIds);
    if (request.sendEmails && granting.length > 0) {
      const codes = new Map(serials.map((s) => [s.product_id, s.code]));
      for (const p of granting) emails.push(productEmail(p, customer.email, codes.get(p.id) ?? null, request.grantType, endsAt));
      await enqueueEmails(tx, scope, emails);
    }
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
      purchases: order ? [order] : [],
      items: itemRecords.map((r) => toPurchaseRow(r, false)),
      entitlements: entitlements.map((e) => ({
        ...e,
        starts_at: new Date(e.starts_at).toISOString(),
        ends_at: e.ends_at === null ? null : new Date(e.ends_at).toISOString(),
      })),
      serials: serials.map(toSerialRow),
      emailsQueued: emails.length,
      reason: request.reason,
    };
    await repo.saveGrantResponse(tx, scope, grantId, result);
    await writeAudit(tx, scope, {
      action: 'purchases.manual_grant',
      subjectType: 'customer',
      subjectId: customer.customerId,
      data: { grantId, grantRequestId: request.grantRequestId, grantType: request.grantType, products: request.productIds, created: createdCount, reason: request.reason },
    });
    return { body: result, replayed: false, emailsQueued: emails.length };
  });
}
