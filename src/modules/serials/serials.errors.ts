import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const serialErrorsSpecs = {
  INVALID_SERIAL_TRANSITION: { status: 409, title: 'The action is not allowed from the serial’s current state', description: 'the serial action is not allowed from the current state; the body names `currentStatus` and `allowedActions`' },
  SERIAL_HAS_NO_ORDER: { status: 409, title: 'The serial is not linked to an order', description: 'portal hide/show on a serial that has no linked order' },
  PARTNER_POOL_REQUIRED: { status: 400, title: 'Reseller serials are managed in Partners > Licenses', description: 'serial generation with a reseller assignment field; reseller pools are managed in Partners > Licenses' },
  BILLING_NOT_ELIGIBLE: { status: 403, title: 'The workspace is not currently eligible for billing', description: 'serial generation in a workspace without current billing eligibility' },
  CONFLICTING_ALIASES: { status: 400, title: 'A field and its snake_case alias disagree', description: 'serial generation: a camelCase field and its snake_case alias have different values' },
  INVALID_WINDOW: { status: 400, title: 'A date window ends before it starts', description: 'serial generation: a promo or active window ends before it starts, or `expiresAt` is not in the future' },
  SERIAL_CODE_COLLISION: { status: 409, title: 'Could not allocate unique serial codes; retry', description: 'generation could not allocate unique codes after retries (practically never); retry' },
} as const satisfies Record<string, ErrorSpec>;
export const SerialErrors = defineErrors(serialErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof serialErrorsSpecs> {}
}
