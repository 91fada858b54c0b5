import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const licensingErrorsSpecs = {
  LICENSE_NOT_FOUND: { status: 404, title: 'No such serial for this product' },
  INVALID_PRODUCT_KEY: { status: 401, title: 'The product key is not valid for this appId' },
  MACHINE_LIMIT_EXCEEDED: { status: 422, title: 'Every seat of this serial is in use' },
  LICENSE_SUSPENDED: { status: 422, title: 'The serial is suspended' },
  LICENSE_REVOKED: { status: 422, title: 'The serial was revoked' },
  LICENSE_DEACTIVATED: { status: 422, title: 'The serial is deactivated' },
  LICENSE_EXPIRED: { status: 422, title: 'The serial has expired' },
  LICENSE_NOT_ACTIVE_YET: { status: 422, title: 'The serial is not active yet' },
} as const satisfies Record<string, ErrorSpec>;
export const LicensingErrors = defineErrors(licensingErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof licensingErrorsSpecs> {}
}
