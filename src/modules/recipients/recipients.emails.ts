import { Type } from '@sinclair/typebox';
import type { LinkTokenKind } from '../../platform/mail/link-tokens.js';
import { defineEmail, linkTokenForEmail } from '../../platform/mail/mail.js';
import * as repo from './recipients.repo.js';

/** A sign-in link works once, for this long. */
export const SIGN_IN_LINK_TTL_MINUTES = 15;

export const SIGN_IN_TOKEN: LinkTokenKind = { purpose: 'partner portal sign-in', prefix: 'psl_' };

/** The partner portal sign-in link; the token is derived again from the link's row when the e-mail is sent. */
export const PARTNER_SIGN_IN_EMAIL = defineEmail({
  name: 'partner_sign_in',
  payload: Type.Object({ signInLinkId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ signInLinkId }, ctx) {
    const found = linkTokenForEmail(ctx, SIGN_IN_TOKEN, await repo.signInLinkForEmail(ctx.db, signInLinkId), 'sign-in link');
    if ('skip' in found) return found;
    return {
      to: found.link.email,
      subject: 'Your Patchbay partner portal sign-in link',
      text: `Sign in to the partner portal within ${SIGN_IN_LINK_TTL_MINUTES} minutes (the link works once):\n\n${ctx.urls.portalUrl}/sign-in#token=${found.token}\n\nIf you did not ask for this, ignore this e-mail.`,
    };
  },
});
