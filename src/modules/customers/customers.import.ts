import type { Scope } from '../../platform/auth/scope.js';
import { type RowError, IMPORT_MAX_BYTES } from '../../platform/import/errors.js';
import { readEmail, readOptionalBoolean, readOptionalId, readOptionalText, notAnObject, rowErrors } from '../../platform/import/fields.js';
import type { ProductMapping } from '../products/index.js';

export { IMPORT_MAX_BYTES };

/** Columns of the import template; the import also accepts snake_case and spaced variants. */
export const IMPORT_COLUMNS = ['email', 'firstName', 'lastName', 'productId', 'productName', 'marketingConsent'] as const;

/** What a customer upsert needs: one validated row of an import, or a customer named by another module. */
export interface CustomerUpsert {
  email: string;
  emailNormalized: string;
  firstName: string | null;
  lastName: string | null;
  productIds: number[];
  marketingConsent: boolean;
}

export interface ValidCustomerRow extends CustomerUpsert {
  row: number;
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/**
 * Validates one raw row (keys already normalised). Returns the clean row or
 * every field error of that row, so a caller can fix a file in one pass.
 */
export function validateCustomerRow(
  raw: Record<string, unknown>,
  row: number,
  scope: Scope,
  mapping: ProductMapping,
): { ok: true; value: ValidCustomerRow } | { ok: false; errors: RowError[] } {
  if ('__invalid' in raw) return notAnObject(row);
  const { errors, take } = rowErrors(row);
  const email = take('email', readEmail(raw.email));
  const firstName = take('firstName', readOptionalText(raw.firstname, 'firstName', 100));
  const lastName = take('lastName', readOptionalText(raw.lastname, 'lastName', 100));
  const productId = take('productId', readOptionalId(raw.productid, 'productId'));
  const productName = take('productName', readOptionalText(raw.productname, 'productName', 200));
  const marketingConsent = take('marketingConsent', readOptionalBoolean(raw.marketingconsent, 'marketingConsent'));
  // The export writes linked product names as "A; B": accept them back.
  const productList = take('products', readOptionalText(raw.products, 'products', 2000));

  const productIds: number[] = [];
  if (productId !== null || productName !== null) {
    const resolved = mapping.resolve(productId, productName);
    if (resolved.product) productIds.push(resolved.product.id);
    else errors.push({ row, field: resolved.field ?? 'productId', code: 'PRODUCT_NOT_FOUND', message: 'no product you can access matches this reference' });
  }
  if (productList) {
    for (const name of productList.split(';').map((s) => s.trim()).filter(Boolean)) {
      const resolved = mapping.resolve(null, name);
      if (resolved.product) productIds.push(resolved.product.id);
      else errors.push({ row, field: 'products', code: 'PRODUCT_NOT_FOUND', message: `no product you can access is named "${name}"` });
    }
  }
  if (scope.products !== 'all' && productIds.length === 0 && errors.length === 0) {
    errors.push({
      row,
      field: 'productId',
      code: 'PRODUCT_REQUIRED',
      message: 'your access is limited to some products: every row must name one of them',
    });
  }
  if (errors.length > 0 || email === null) return { ok: false, errors };
  return {
    ok: true,
    value: {
      row,
      email,
      emailNormalized: normaliseEmail(email),
      firstName,
      lastName,
      productIds: [...new Set(productIds)],
      marketingConsent: marketingConsent ?? false,
    },
  };
}
