import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const licensingErrorsSpecs = {
  LICENSE_NOT_FOUND: { status: 404, title: 'No such serial for this product', description: 'licensing runtime: no such serial for this `productAppId` (also an unknown `productAppId`)' },
  INVALID_PRODUCT_KEY: { status: 401, title: 'The product key is not valid for this appId', description: 'licensing runtime: the `X-Product-Key` does not belong to the appId\'s product and environment, or is no longer accepted' },
  MACHINE_LIMIT_EXCEEDED: { status: 422, title: 'Every seat of this serial is in use', description: 'every seat of the serial is in use; the body has `maxActivations` and `activeActivations`' },
  LICENSE_SUSPENDED: { status: 422, title: 'The serial is suspended', description: 'activation of a suspended serial' },
  LICENSE_REVOKED: { status: 422, title: 'The serial was revoked', description: 'activation of a revoked serial' },
  LICENSE_DEACTIVATED: { status: 422, title: 'The serial is deactivated', description: 'activation of a deactivated serial' },
  LICENSE_EXPIRED: { status: 422, title: 'The serial has expired', description: 'activation of an expired serial (`expiresAt` or `activeTo` passed)' },
  LICENSE_NOT_ACTIVE_YET: { status: 422, title: 'The serial is not active yet', description: 'activation before `activeFrom`' },
} as const satisfies Record<string, ErrorSpec>;
export const LicensingErrors = defineErrors(licensingErrorsSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof licensingErrorsSpecs> {}
}
