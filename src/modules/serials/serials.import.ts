import { normaliseEmail } from '../customers/index.js';
import type { RowError } from '../../platform/import/errors.js';
import { readEmail, readOptionalId, readOptionalText, notAnObject, rowErrors } from '../../platform/import/fields.js';
import { serialKey } from '../../platform/ids/codes.js';
import type { ProductMapping } from '../products/index.js';

export const SERIAL_IMPORT_COLUMNS = ['serialCode', 'productId', 'productName', 'email', 'firstName', 'lastName'] as const;

export interface ValidSerialRow {
  row: number;
  code: string;
  key: string;
  productId: number;
  maxActivations: number;
  customer: { email: string; emailNormalized: string; firstName: string | null; lastName: string | null } | null;
}

const CODE = /^[A-Za-z0-9][A-Za-z0-9-]{2,62}[A-Za-z0-9]$/;

export function validateSerialRow(
  raw: Record<string, unknown>,
  row: number,
  mapping: ProductMapping,
): { ok: true; value: ValidSerialRow } | { ok: false; errors: RowError[] } {
  if ('__invalid' in raw) return notAnObject(row);
  const { errors, take } = rowErrors(row);
  // The export's `serial` column is accepted as the code too.
  const code = take('serialCode', readOptionalText(raw.serialcode ?? raw.serial, 'serialCode', 64));
  if (code === null && !errors.some((e) => e.field === 'serialCode')) {
    errors.push({ row, field: 'serialCode', code: 'REQUIRED', message: 'serialCode is required' });
  } else if (code !== null && !CODE.test(code)) {
    errors.push({ row, field: 'serialCode', code: 'INVALID_SERIAL_CODE', message: 'serialCode must be 4–64 letters, digits or inner dashes' });
  }
  const productId = take('productId', readOptionalId(raw.productid ?? raw.product_id, 'productId'));
  const productName = take('productName', readOptionalText(raw.productname ?? raw.product, 'productName', 200));
  let product: { id: number; maxActivations: number } | null = null;
  if (productId === null && productName === null) {
    if (!errors.some((e) => e.field.startsWith('product'))) errors.push({ row, field: 'productId', code: 'REQUIRED', message: 'productId or productName is required' });
  } else {
    const resolved = mapping.resolve(productId, productName);
    if (resolved.product) product = resolved.product;
    else errors.push({ row, field: resolved.field ?? 'productId', code: 'PRODUCT_NOT_FOUND', message: 'no product you can access matches this reference' });
  }
  let customer: ValidSerialRow['customer'] = null;
  const hasEmail = raw.email !== undefined && raw.email !== null && raw.email !== '';
  if (hasEmail) {
    const email = take('email', readEmail(raw.email));
    const firstName = take('firstName', readOptionalText(raw.firstname, 'firstName', 100));
    const lastName = take('lastName', readOptionalText(raw.lastname, 'lastName', 100));
    if (email) customer = { email, emailNormalized: normaliseEmail(email), firstName, lastName };
  }
  if (errors.length > 0 || code === null || product === null) return { ok: false, errors };
  return { ok: true, value: { row, code, key: serialKey(code), productId: product.id, maxActivations: product.maxActivations, customer } };
}
