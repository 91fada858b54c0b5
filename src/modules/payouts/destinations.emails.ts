import { Type } from '@sinclair/typebox';
import { defineEmail } from '../../platform/mail/mail.js';
import { destinationForNotice } from './destinations.repo.js';

/** The security notice a recipient gets when a payout destination replaces one that was ready. */
export const DESTINATION_CHANGED_EMAIL = defineEmail({
  name: 'payout_destination_changed',
  payload: Type.Object({ destinationId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ destinationId }, ctx) {
    const destination = await destinationForNotice(ctx.db, destinationId);
    if (!destination || !destination.active) return { skip: 'the recipient or the destination is gone' };
    const mode = destination.livemode ? '' : ' (sandbox)';
    return {
      to: destination.email,
      subject: 'Your Patchbay payout destination changed',
      text:
        `The payout destination of your partner account${mode} is now: ${destination.display} (${destination.provider}).\n\n` +
        (destination.hold_until ? `For your security, no payout goes to it before ${destination.hold_until.toISOString()}.\n\n` : '') +
        'If you did not make this change, sign in to the partner portal now, set your destination again and tell the developers you work with.',
    };
  },
});
