import { defineErrors } from '../../platform/http/errors.js';

export const LicensingErrors = defineErrors({
  LICENSE_NOT_FOUND: { status: 404, title: 'No such serial for this product' },
  MACHINE_LIMIT_EXCEEDED: { status: 422, title: 'Every seat of this serial is in use' },
  LICENSE_SUSPENDED: { status: 422, title: 'The serial is suspended' },
  LICENSE_REVOKED: { status: 422, title: 'The serial was revoked' },
  LICENSE_DEACTIVATED: { status: 422, title: 'The serial is deactivated' },
  LICENSE_EXPIRED: { status: 422, title: 'The serial has expired' },
  LICENSE_NOT_ACTIVE_YET: { status: 422, title: 'The serial is not active yet' },
});
