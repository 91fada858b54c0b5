import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const packageErrorSpecs = {
  PACKAGE_BUILD_BUSY: { status: 429, title: 'Every package build slot is busy; retry the same request shortly' },
  PACKAGE_CREDENTIAL_ROTATION_REQUIRED: { status: 409, title: 'The product credential cannot be recovered; rotate it deliberately (regenerate)' },
} as const satisfies Record<string, ErrorSpec>;
export const PackageErrors = defineErrors(packageErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof packageErrorSpecs> {}
}
