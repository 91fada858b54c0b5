import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const payoutErrorSpecs = {
  PAYOUT_AGREEMENT_REQUIRED: { status: 403, title: 'Payout destinations need an accepted partner agreement' },
  PAYOUT_PROVIDER_NOT_CONFIGURED: { status: 503, title: 'No payout provider is configured for live mode' },
} as const satisfies Record<string, ErrorSpec>;
export const PayoutErrors = defineErrors(payoutErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof payoutErrorSpecs> {}
}
