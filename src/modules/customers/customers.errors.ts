import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const customerErrorsSpecs = {
  CONFIRMATION_REQUIRED: { status: 400, title: 'Confirmation required', description: 'customer removal without `confirm: true` / `confirmation: "yes"`' },
} as const satisfies Record<string, ErrorSpec>;
export const CustomerErrors = defineErrors(customerErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof customerErrorsSpecs> {}
}
