import { AppError, CommonErrors, type FieldError } from '../../platform/http/errors.js';
import { SerialErrors } from './serials.errors.js';
import type { SerialTerms } from './serials.repo.js';
import type { GenerateBody } from './serials.schemas.js';

export interface GenerateSettings extends SerialTerms {
  productId: number;
  quantity: number;
  prefix: string | null;
}

const ALIASES = [
  ['productId', 'product_id'],
  ['expiresAt', 'expires_at'],
  ['promoPrice', 'promo_price'],
  ['promoStart', 'promo_start'],
  ['promoExpires', 'promo_expires'],
  ['activeFrom', 'active_from'],
  ['activeTo', 'active_to'],
  ['batchTag', 'batch_tag'],
] as const;

/** Any of these on the ordinary generation route means a reseller pool was intended. */
const RESELLER_FIELDS = [
  'resellerId', 'reseller_id', 'reseller', 'resellerRelationshipId', 'reseller_relationship_id', 'relationshipId',
  'relationship_id', 'partnerId', 'partner_id', 'pool', 'poolId', 'pool_id', 'resellerPool', 'reseller_pool',
];

const sameValue = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' && !Number.isNaN(Date.parse(a)) && !Number.isNaN(Date.parse(b))
    ? Date.parse(a) === Date.parse(b)
    : a === b;

/**
 * Merges camelCase fields with their snake_case aliases and checks the
 * settings that the schema cannot: aliases that disagree, reseller fields,
 * windows that end before they start.
 */
export function normaliseGenerateBody(body: GenerateBody, now = new Date()): GenerateSettings {
  const raw = body as Record<string, unknown>;
  const reseller = RESELLER_FIELDS.filter((f) => raw[f] !== undefined && raw[f] !== null);
  if (reseller.length > 0) {
    throw new AppError(
      SerialErrors.PARTNER_POOL_REQUIRED,
      `Reseller assignment (${reseller.join(', ')}) is not accepted here; reseller serial pools are managed in Partners > Licenses`,
    );
  }
  const merged: Record<string, unknown> = {};
  const conflicts: FieldError[] = [];
  for (const [camel, snake] of ALIASES) {
    const a = raw[camel];
    const b = raw[snake];
    if (a !== undefined && b !== undefined && !sameValue(a, b)) conflicts.push({ path: `body/${snake}`, message: `disagrees with ${camel}` });
    merged[camel] = a !== undefined ? a : b;
  }
  if (conflicts.length > 0) throw new AppError(SerialErrors.CONFLICTING_ALIASES, 'A field and its snake_case alias have different values', { errors: conflicts });
  if (merged.productId === undefined) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'productId is required', { errors: [{ path: 'body/productId', message: 'is required' }] });
  }
  const date = (v: unknown) => (typeof v === 'string' ? new Date(v) : null);
  const settings: GenerateSettings = {
    productId: merged.productId as number,
    quantity: body.quantity ?? 1,
    prefix: body.prefix ? body.prefix.toUpperCase() : null,
    expiresAt: date(merged.expiresAt),
    promoPriceCents: (merged.promoPrice as number | null | undefined) ?? null,
    promoStart: date(merged.promoStart),
    promoExpires: date(merged.promoExpires),
    activeFrom: date(merged.activeFrom),
    activeTo: date(merged.activeTo),
    batchTag: (merged.batchTag as string | undefined)?.trim() || null,
    notes: body.notes?.trim() || null,
  };
  const windows: FieldError[] = [];
  if (settings.promoStart && settings.promoExpires && settings.promoExpires <= settings.promoStart) {
    windows.push({ path: 'body/promoExpires', message: 'must be after promoStart' });
  }
  if (settings.activeFrom && settings.activeTo && settings.activeTo <= settings.activeFrom) {
    windows.push({ path: 'body/activeTo', message: 'must be after activeFrom' });
  }
  if (settings.expiresAt && settings.expiresAt <= now) windows.push({ path: 'body/expiresAt', message: 'must be in the future' });
  if (settings.expiresAt && settings.activeFrom && settings.expiresAt <= settings.activeFrom) {
    windows.push({ path: 'body/expiresAt', message: 'must be after activeFrom' });
  }
  if (windows.length > 0) throw new AppError(SerialErrors.INVALID_WINDOW, 'A date window ends before it starts', { errors: windows });
  if (settings.promoPriceCents === null && (settings.promoStart || settings.promoExpires)) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'A promo window needs promoPrice', {
      errors: [{ path: 'body/promoPrice', message: 'is required with promoStart or promoExpires' }],
    });
  }
  return settings;
}
