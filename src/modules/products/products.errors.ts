import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const productErrorSpecs = {
  EXTERNAL_FILE: { status: 409, title: 'The file is hosted elsewhere; use its external URL', description: 'a private link for a file hosted elsewhere; the body names its `externalUrl`' },
} as const satisfies Record<string, ErrorSpec>;
export const ProductErrors = defineErrors(productErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof productErrorSpecs> {}
}
