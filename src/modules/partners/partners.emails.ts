import { Type } from '@sinclair/typebox';
import { PermanentJobError } from '../../platform/jobs/runner.js';
import type { LinkTokenKind } from '../../platform/mail/link-tokens.js';
import { defineEmail, linkTokenForEmail } from '../../platform/mail/mail.js';
import * as repo from './partners.repo.js';

// Invitation tokens have no prefix: links already handed out and the portal expect 43 characters.
export const INVITATION_TOKEN: LinkTokenKind = { purpose: 'partner invitation', prefix: '' };

/** The partner invitation e-mail; the token is derived again from the invitation's row when it is sent. */
export const PARTNER_INVITATION_EMAIL = defineEmail({
  name: 'partner_invitation',
  payload: Type.Object({ invitationId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ invitationId }, ctx) {
    if (ctx.workspaceId === null) throw new PermanentJobError('an invitation e-mail belongs to a workspace');
    const invitation = await repo.invitationForEmail(ctx.db, ctx.workspaceId, invitationId);
    if (invitation && invitation.status !== 'pending') return { skip: `the invitation is ${invitation.status}` };
    const found = linkTokenForEmail(ctx, INVITATION_TOKEN, invitation, 'invitation');
    if ('skip' in found) return found;
    const { name, email, expires_at: expiresAt } = found.link;
    // The token travels in the URL fragment, which browsers never send to a server or a referrer.
    return {
      to: email,
      subject: `You are invited to a partner program: ${name}`,
      text:
        `You have been invited to "${name}". Review the terms and accept them here (the link expires ${expiresAt.toISOString()}):\n\n` +
        `${ctx.urls.portalUrl}/invitations#token=${found.token}\n\nAccepting the terms is not consent to live payments; that is a separate step.`,
    };
  },
});
