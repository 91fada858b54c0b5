import { defineErrors } from '../../platform/http/errors.js';

export const PurchaseErrors = defineErrors({
  INVALID_FILTER: { status: 400, title: 'A purchase filter value is invalid' },
  SINGLE_PRODUCT_GRANT_REQUIRED: { status: 400, title: 'This grant type takes exactly one product' },
  SERIAL_PRODUCT_MISMATCH: { status: 400, title: 'The serial belongs to another product' },
  SERIAL_NOT_AVAILABLE: { status: 409, title: 'The serial is not available for assignment' },
  GRANT_REQUEST_CONFLICT: { status: 409, title: 'grantRequestId was already used for a different grant' },
});
