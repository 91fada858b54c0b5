import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const packageErrorSpecs = {
  PACKAGE_BUILD_BUSY: { status: 429, title: 'Every package build slot is busy; retry the same request shortly', description: 'every package build slot is busy; retry the same request after `Retry-After`' },
  PACKAGE_CREDENTIAL_ROTATION_REQUIRED: { status: 409, title: 'The product credential cannot be recovered; rotate it deliberately (regenerate)', description: 'the product key a package must embed cannot be recovered (`rotationRequired: true`); regenerate to rotate it deliberately' },
} as const satisfies Record<string, ErrorSpec>;
export const PackageErrors = defineErrors(packageErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof packageErrorSpecs> {}
}
