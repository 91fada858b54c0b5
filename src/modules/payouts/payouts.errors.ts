import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const payoutErrorSpecs = {
  PAYOUT_AGREEMENT_REQUIRED: { status: 403, title: 'Payout destinations need an accepted partner agreement', description: 'payout destinations need an accepted partner agreement (of the `program` kind when one is named)' },
  PAYOUT_PROVIDER_NOT_CONFIGURED: { status: 503, title: 'No payout provider is configured for live mode', description: '`livemode: true` with no live payout provider configured; the sandbox (`livemode: false`) always works' },
} as const satisfies Record<string, ErrorSpec>;
export const PayoutErrors = defineErrors(payoutErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof payoutErrorSpecs> {}
}
