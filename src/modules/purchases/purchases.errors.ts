import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const purchaseErrorsSpecs = {
  INVALID_FILTER: { status: 400, title: 'A purchase filter value is invalid', description: 'a purchase filter is well-formed but meaningless: a calendar-invalid date, `dateTo` before `dateFrom`, an id beyond 2147483647' },
  SINGLE_PRODUCT_GRANT_REQUIRED: { status: 400, title: 'This grant type takes exactly one product', description: 'a `subscription` or `existing_serial` grant names more than one product' },
  SERIAL_PRODUCT_MISMATCH: { status: 400, title: 'The serial belongs to another product', description: 'manual grant: the serial belongs to another product than the one granted' },
  SERIAL_NOT_AVAILABLE: { status: 409, title: 'The serial is not available for assignment', description: 'manual grant: the serial is held by another customer, or suspended, deactivated or revoked' },
  GRANT_REQUEST_CONFLICT: { status: 409, title: 'grantRequestId was already used for a different grant', description: '`grantRequestId` was already used for a different grant in this workspace' },
  REFUND_EXCEEDS_PAYMENT: { status: 409, title: 'Refunds of an item cannot total more than was paid for it', description: 'a `refund.created` checkout event would make an item\'s refunds total more than was paid for it; nothing is recorded' },
} as const satisfies Record<string, ErrorSpec>;
export const PurchaseErrors = defineErrors(purchaseErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof purchaseErrorsSpecs> {}
}
