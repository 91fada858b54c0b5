import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const serialErrorsSpecs = {
  INVALID_SERIAL_TRANSITION: { status: 409, title: 'The action is not allowed from the serial’s current state' },
  SERIAL_HAS_NO_ORDER: { status: 409, title: 'The serial is not linked to an order' },
  PARTNER_POOL_REQUIRED: { status: 400, title: 'Reseller serials are managed in Partners > Licenses' },
  BILLING_NOT_ELIGIBLE: { status: 403, title: 'The workspace is not currently eligible for billing' },
  CONFLICTING_ALIASES: { status: 400, title: 'A field and its snake_case alias disagree' },
  INVALID_WINDOW: { status: 400, title: 'A date window ends before it starts' },
  SERIAL_CODE_COLLISION: { status: 409, title: 'Could not allocate unique serial codes; retry' },
} as const satisfies Record<string, ErrorSpec>;
export const SerialErrors = defineErrors(serialErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof serialErrorsSpecs> {}
}
