import { createHash } from 'node:crypto';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { normaliseEmail } from '../customers/index.js';
import { PurchaseErrors } from './purchases.errors.js';
import type { ManualGrantBody, ManualGrantResult } from './purchases.schemas.js';

// A manual grant's request: the body checked against the rules its schema cannot express, and
// the hash that tells a repeated grantRequestId whether it asks for the same grant.

type GrantType = ManualGrantResult['grantType'];

const DAY = 86_400_000;
export const DEFAULT_SUBSCRIPTION_DAYS = 365;
const MAX_SUBSCRIPTION_DAYS = 3660;

function invalid(path: string, message: string): AppError {
  return new AppError(CommonErrors.VALIDATION_FAILED, message, { errors: [{ path: `body/${path}`, message }] });
}

export interface GrantRequest {
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

/** When the access ends: a subscription's `accessUntil`, by default a year from now; other grants never end. */
export function grantEndsAt(r: GrantRequest, now: Date): Date | null {
  return r.grantType === 'subscription' ? (r.accessUntil ?? new Date(now.getTime() + DEFAULT_SUBSCRIPTION_DAYS * DAY)) : null;
}
