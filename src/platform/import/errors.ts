import { defineErrors } from '../http/errors.js';

export const ImportErrors = defineErrors({
  IMPORT_EMPTY: { status: 400, title: 'The import contains no rows' },
  IMPORT_TOO_LARGE: { status: 413, title: 'The import exceeds the row or size limit' },
  IMPORT_REJECTED: { status: 422, title: 'No row of the import could be accepted' },
  INVALID_CSV: { status: 400, title: 'The uploaded file is not valid CSV' },
  INVALID_PRODUCT_MAPPING: { status: 400, title: 'productMappings is invalid' },
  CREDENTIALS_NOT_ALLOWED: { status: 400, title: 'productMappings must not contain credentials' },
});

/** One failed row: `row` is the 1-based data row (the CSV header is not counted). */
export interface RowError {
  row: number;
  field: string;
  code: string;
  message: string;
}

export const IMPORT_MAX_ROWS = 100_000;
export const IMPORT_MAX_BYTES = 32 * 1024 * 1024;
