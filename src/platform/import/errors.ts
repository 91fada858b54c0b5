import { defineErrors, type CodesOf, type ErrorSpec } from '../http/errors.js';

const importErrorsSpecs = {
  IMPORT_EMPTY: { status: 400, title: 'The import contains no rows', description: 'the import has no rows' },
  IMPORT_TOO_LARGE: { status: 413, title: 'The import exceeds the row or size limit', description: 'more than 100,000 rows or 32 MiB in one import' },
  IMPORT_REJECTED: { status: 422, title: 'No row of the import could be accepted', description: 'no row of an import was valid; nothing was written; `errors` lists the rows' },
  INVALID_CSV: { status: 400, title: 'The uploaded file is not valid CSV', description: 'the uploaded file is not parseable CSV' },
  INVALID_PRODUCT_MAPPING: { status: 400, title: 'productMappings is invalid', description: '`productMappings` is not an object of product ids the caller can access' },
  CREDENTIALS_NOT_ALLOWED: { status: 400, title: 'productMappings must not contain credentials', description: '`productMappings` holds a credential-like key (password, secret, token, apiKey, …)' },
} as const satisfies Record<string, ErrorSpec>;
export const ImportErrors = defineErrors(importErrorsSpecs);

declare module '../http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof importErrorsSpecs> {}
}

/** The codes of import row errors (`errors[].code` of 207/422 answers and of finished import resources). */
export const ROW_ERROR_CODES = {
  REQUIRED: 'a required field is empty',
  INVALID_TYPE: 'a field has the wrong type (text where a number is needed, say)',
  INVALID_EMAIL: 'not a valid e-mail address',
  TOO_LONG: 'a text field exceeds its maximum length',
  PRODUCT_NOT_FOUND: 'the product id or name is not a product you can access (mappings applied)',
  PRODUCT_REQUIRED: 'a product-scoped member must name one of their products on every row',
  INVALID_SERIAL_CODE: 'the serial code is not 4–64 letters, digits or inner dashes',
  SERIAL_CODE_TAKEN: 'the serial code is in use elsewhere (another workspace, or a product you are not assigned to)',
  DUPLICATE_IN_FILE: 'the same serial code appears on another row for another product or customer',
  INVALID_AMOUNT: 'an amount is not a non-negative number with at most the currency’s decimals',
  INVALID_CURRENCY: 'not a three-letter currency code',
  INVALID_DATE: 'not a YYYY-MM-DD date or an RFC 3339 date-time',
  DATE_IN_FUTURE: 'a purchase date lies in the future',
  INVALID_PROVIDER: 'the provider is not a slug (letters, digits, dashes)',
  RESELLER_NOT_FOUND: 'no such reseller relationship in this workspace',
  SERIAL_PRODUCT_MISMATCH: 'the serial belongs to another product',
  SERIAL_NOT_AVAILABLE: 'the serial is suspended, deactivated or revoked',
  SERIAL_ASSIGNED: 'the serial belongs to another customer',
} as const;
export type RowErrorCode = keyof typeof ROW_ERROR_CODES;

/** One failed row: `row` is the 1-based data row (the CSV header is not counted). */
export interface RowError {
  row: number;
  field: string;
  code: RowErrorCode;
  message: string;
}

export const IMPORT_MAX_ROWS = 100_000;
export const IMPORT_MAX_BYTES = 32 * 1024 * 1024;
