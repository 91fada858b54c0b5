import { Type } from '@sinclair/typebox';
import type { LinkTokenKind } from '../../platform/mail/link-tokens.js';
import { defineEmail, type EmailContext, linkTokenForEmail } from '../../platform/mail/mail.js';
import * as repo from './sessions.repo.js';

/** An e-mailed sign-in link works once, for this long. */
export const SIGN_IN_LINK_TTL_MINUTES = 15;
/** The link in an invitation works once, for this long (a new one is a sign-in link away). */
export const INVITATION_LINK_TTL_HOURS = 72;

export const CONSOLE_SIGN_IN_TOKEN: LinkTokenKind = { purpose: 'developer console sign-in', prefix: 'dsl_' };

/** Where a console sign-in link leads: the token travels in the fragment, so no server, log or Referer sees it. */
export const consoleSignInUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/console/sign-in#token=${token}`;

const LinkRef = Type.Object({ signInLinkId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

/** The link's token, derived again from its row at send time, and its console URL; or why the e-mail no longer applies. */
async function linkOf(signInLinkId: number, ctx: EmailContext) {
  const found = linkTokenForEmail(ctx, CONSOLE_SIGN_IN_TOKEN, await repo.signInLinkForEmail(ctx.db, signInLinkId), 'sign-in link');
  return 'skip' in found ? found : { link: found.link, url: consoleSignInUrl(ctx.urls.publicBaseUrl, found.token) };
}

export const DEVELOPER_SIGN_IN_EMAIL = defineEmail({
  name: 'developer_sign_in',
  payload: LinkRef,
  async render({ signInLinkId }, ctx) {
    const found = await linkOf(signInLinkId, ctx);
    if ('skip' in found) return found;
    return {
      to: found.link.email,
      subject: 'Your Patchbay console sign-in link',
      text: `Sign in to the Patchbay console within ${SIGN_IN_LINK_TTL_MINUTES} minutes (the link works once):\n\n${found.url}\n\nIf you did not ask for this, ignore this e-mail.`,
    };
  },
});

export const MEMBER_INVITATION_EMAIL = defineEmail({
  name: 'member_invitation',
  payload: LinkRef,
  async render({ signInLinkId }, ctx) {
    const found = await linkOf(signInLinkId, ctx);
    if ('skip' in found) return found;
    const { link, url } = found;
    if (link.member_account_id === null) return { skip: 'the invitation was withdrawn (the member was removed)' };
    const who = link.inviter_email ? `${link.inviter_email} invited you` : 'You were invited';
    return {
      to: link.email,
      subject: `You were invited to ${link.workspace_name} on Patchbay`,
      text:
        `${who} to the workspace "${link.workspace_name}" on Patchbay.\n\n` +
        `Sign in to the console within ${INVITATION_LINK_TTL_HOURS} hours (the link works once):\n\n${url}\n\n` +
        `Later, ask for a new sign-in link at ${ctx.urls.publicBaseUrl}/console/sign-in with this address.`,
    };
  },
});
