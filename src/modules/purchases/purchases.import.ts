import { createHash } from 'node:crypto';
import type { RowError } from '../../platform/import/errors.js';
import { type FieldResult, notAnObject, readEmail, readOptionalId, readOptionalText, rowErrors } from '../../platform/import/fields.js';
import { serialKey } from '../../platform/ids/codes.js';
import { CURRENCY, parseMajorUnits } from '../../platform/money/money.js';
import { normaliseEmail } from '../customers/index.js';
import type { ProductMapping } from '../products/index.js';

/** Columns of the import template (2.6 plus the optional purchase columns). */
export const PURCHASE_IMPORT_COLUMNS = [
  'email',
  'firstName',
  'lastName',
  'productId',
  'productName',
  'serialCode',
  'price',
  'salePrice',
  'date',
  'currency',
  'externalReference',
  'provider',
  'resellerId',
] as const;

export interface ValidPurchaseRow {
  row: number;
  email: string;
  emailNormalized: string;
  firstName: string | null;
  lastName: string | null;
  productId: number;
  currency: string;
  priceCents: number;
  salePriceCents: number;
  purchasedAt: Date;
  /** Given in the file, or derived from the row's content so a re-import finds the same purchase. */
  externalReference: string;
  provider: string;
  resellerId: number | null;
  serial: { code: string; key: string } | null;
}

const SERIAL_CODE = /^[A-Za-z0-9][A-Za-z0-9-]{2,62}[A-Za-z0-9]$/;
const PROVIDER = /^[a-z0-9][a-z0-9_.-]{0,49}$/;
const DAY = 86_400_000;
const EARLIEST = Date.UTC(1990, 0, 1);

function readDate(value: unknown, now: Date): FieldResult<Date | null> {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { ok: true, value: null };
  if (typeof value !== 'string') return { ok: false, code: 'INVALID_TYPE', message: 'date must be a string' };
  const text = value.trim();
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  if (!dayOnly && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    return { ok: false, code: 'INVALID_DATE', message: 'date must be YYYY-MM-DD or an RFC 3339 date-time' };
  }
  const day = new Date(`${text.slice(0, 10)}T00:00:00.000Z`);
  const date = dayOnly ? day : new Date(text);
  if (Number.isNaN(date.getTime()) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text.slice(0, 10)) {
    return { ok: false, code: 'INVALID_DATE', message: 'date is not a valid calendar date' };
  }
  if (date.getTime() > now.getTime() + DAY) return { ok: false, code: 'DATE_IN_FUTURE', message: 'date is in the future' };
  if (date.getTime() < EARLIEST) return { ok: false, code: 'INVALID_DATE', message: 'date is before 1990' };
  return { ok: true, value: date };
}

/** A stable reference for rows that carry none, so the same row imported twice is one purchase. */
export function derivedReference(parts: Array<string | number | null>): string {
  return `auto-${createHash('sha256').update(parts.map((p) => String(p ?? '')).join('\u001f')).digest('hex').slice(0, 24)}`;
}

export function validatePurchaseRow(
  raw: Record<string, unknown>,
  row: number,
  mapping: ProductMapping,
  resellers: ReadonlySet<number>,
  now: Date,
): { ok: true; value: ValidPurchaseRow } | { ok: false; errors: RowError[] } {
  if ('__invalid' in raw) return notAnObject(row);
  const { errors, take } = rowErrors(row);
  const email = take('email', readEmail(raw.email));
  const firstName = take('firstName', readOptionalText(raw.firstname, 'firstName', 100));
  const lastName = take('lastName', readOptionalText(raw.lastname, 'lastName', 100));
  const productId = take('productId', readOptionalId(raw.productid, 'productId'));
  const productName = take('productName', readOptionalText(raw.productname ?? raw.product, 'productName', 200));

  let product: { id: number; currency: string } | null = null;
  if (productId === null && productName === null) {
    if (!errors.some((e) => e.field.startsWith('product'))) errors.push({ row, field: 'productId', code: 'REQUIRED', message: 'productId or productName is required' });
  } else {
    const resolved = mapping.resolve(productId, productName);
    if (resolved.product) product = resolved.product;
    else errors.push({ row, field: resolved.field ?? 'productId', code: 'PRODUCT_NOT_FOUND', message: 'no product you can access matches this reference' });
  }

  const code = take('serialCode', readOptionalText(raw.serialcode ?? raw.serial, 'serialCode', 64));
  if (code !== null && !SERIAL_CODE.test(code)) {
    errors.push({ row, field: 'serialCode', code: 'INVALID_SERIAL_CODE', message: 'serialCode must be 4–64 letters, digits or inner dashes' });
  }

  const currencyText = take('currency', readOptionalText(raw.currency, 'currency', 3));
  const currency = currencyText?.toLowerCase() ?? product?.currency.trim().toLowerCase() ?? 'usd';
  if (currencyText !== null && !CURRENCY.test(currency)) errors.push({ row, field: 'currency', code: 'INVALID_CURRENCY', message: 'currency must be a three-letter code' });

  const money = (field: string, value: unknown): number | null => {
    if (value === undefined || value === null || value === '') return null;
    const parsed = parseMajorUnits(value, currency);
    if (parsed.ok) return parsed.minor;
    errors.push({ row, field, code: 'INVALID_AMOUNT', message: `${field} ${parsed.message}` });
    return null;
  };
  const price = money('price', raw.price);
  const salePrice = money('salePrice', raw.saleprice);

  const date = take('date', readDate(raw.date ?? raw.purchasedat, now));
  const given = take(
    'externalReference',
    readOptionalText(raw.externalreference ?? raw.orderreference ?? raw.orderid ?? raw.reference, 'externalReference', 200),
  );
  const providerText = take('provider', readOptionalText(raw.provider ?? raw.store, 'provider', 50));
  const provider = providerText?.toLowerCase() ?? 'external';
  if (!PROVIDER.test(provider)) errors.push({ row, field: 'provider', code: 'INVALID_PROVIDER', message: 'provider must be a slug: letters, digits, . _ -' });
  const resellerId = take('resellerId', readOptionalId(raw.resellerid, 'resellerId'));
  if (resellerId !== null && !resellers.has(resellerId)) {
    errors.push({ row, field: 'resellerId', code: 'RESELLER_NOT_FOUND', message: 'no reseller of this workspace has this id' });
  }

  if (errors.length > 0 || email === null || product === null) return { ok: false, errors };
  const emailNormalized = normaliseEmail(email);
  const salePriceCents = salePrice ?? price ?? 0;
  const priceCents = price ?? salePriceCents;
  const purchasedAt = date ?? now;
  return {
    ok: true,
    value: {
      row,
      email,
      emailNormalized,
      firstName,
      lastName,
      productId: product.id,
      currency,
      priceCents,
      salePriceCents,
      purchasedAt,
      externalReference:
        given ?? derivedReference([emailNormalized, product.id, date ? date.toISOString() : null, priceCents, salePriceCents, currency, code ? serialKey(code) : null]),
      provider,
      resellerId,
      serial: code ? { code, key: serialKey(code) } : null,
    },
  };
}
