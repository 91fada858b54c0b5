import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const referralErrorSpecs = {
  REFERRAL_NOT_FOUND: { status: 404, title: 'No such referral link', description: 'no affiliate agreement has this referral code (or its workspace\'s partner programs are off)' },
} as const satisfies Record<string, ErrorSpec>;
export const ReferralErrors = defineErrors(referralErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof referralErrorSpecs> {}
}
