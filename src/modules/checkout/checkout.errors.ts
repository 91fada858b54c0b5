import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const checkoutErrorSpecs = {
  WEBHOOK_SIGNATURE_INVALID: { status: 400, title: 'The Patchbay-Signature header is missing, malformed, stale or does not match' },
} as const satisfies Record<string, ErrorSpec>;
export const CheckoutErrors = defineErrors(checkoutErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof checkoutErrorSpecs> {}
}
