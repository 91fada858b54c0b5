import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const checkoutErrorSpecs = {
  WEBHOOK_SIGNATURE_INVALID: { status: 400, title: 'The Patchbay-Signature header is missing, malformed, stale or does not match', description: '`POST /api/checkout/events` without a valid `Patchbay-Signature` (missing, malformed, older than 5 minutes, or matching no configured secret); nothing is recorded' },
  CHECKOUT_EVENT_TIME_OUT_OF_RANGE: { status: 400, title: 'The event time is too far from the time it was signed', description: 'a checkout event whose `created` is more than 30 days before or 5 minutes after its signature time `t`; nothing is recorded' },
  CHECKOUT_CURRENCY_UNKNOWN: { status: 400, title: 'The currency is not a current ISO 4217 code', description: 'a `sale.captured` event whose `currency` is not a current ISO 4217 code (`xxx`, `abc`); nothing is recorded' },
  CHECKOUT_EVENT_ID_REUSED: { status: 409, title: 'This event id was already used for a different event', description: 'a checkout event reuses the `id` of an earlier event with a different body; the earlier event stands and nothing is recorded (the same body again answers 200 `replayed`)' },
  CHECKOUT_CURRENCY_MISMATCH: { status: 422, title: 'The sale is not in the product’s currency', description: 'a `sale.captured` item names a product priced in another currency; there is no conversion rule, so nothing is recorded' },
} as const satisfies Record<string, ErrorSpec>;
export const CheckoutErrors = defineErrors(checkoutErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof checkoutErrorSpecs> {}
}
