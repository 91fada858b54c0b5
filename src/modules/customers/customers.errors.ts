import { defineErrors } from '../../platform/http/errors.js';

export const CustomerErrors = defineErrors({
  CONFIRMATION_REQUIRED: { status: 400, title: 'Confirmation required' },
});
