import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const purchaseErrorsSpecs = {
  INVALID_FILTER: { status: 400, title: 'A purchase filter value is invalid' },
  SINGLE_PRODUCT_GRANT_REQUIRED: { status: 400, title: 'This grant type takes exactly one product' },
  SERIAL_PRODUCT_MISMATCH: { status: 400, title: 'The serial belongs to another product' },
  SERIAL_NOT_AVAILABLE: { status: 409, title: 'The serial is not available for assignment' },
  GRANT_REQUEST_CONFLICT: { status: 409, title: 'grantRequestId was already used for a different grant' },
  REFUND_EXCEEDS_PAYMENT: { status: 409, title: 'Refunds of an item cannot total more than was paid for it' },
} as const satisfies Record<string, ErrorSpec>;
export const PurchaseErrors = defineErrors(purchaseErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof purchaseErrorsSpecs> {}
}
