import { Type } from '@sinclair/typebox';
import { PermanentJobError } from '../../platform/jobs/runner.js';
import { customerPortalUrl } from '../../platform/links/customer-portal-url.js';
import { composeEmail } from '../../platform/mail/compose.js';
import type { LinkTokenKind } from '../../platform/mail/link-tokens.js';
import { defineEmail, linkTokenForEmail } from '../../platform/mail/mail.js';
import { keysForEmail } from './licenses.repo.js';
import * as sessions from './sessions.repo.js';

/** A sign-in link works once, for this long. */
export const PORTAL_SIGN_IN_TTL_MINUTES = 15;

export const PORTAL_SIGN_IN_TOKEN: LinkTokenKind = { purpose: 'customer portal sign-in', prefix: 'pcl_' };

/** The buyer's sign-in link; its token is derived again from the link's row when the e-mail is sent. */
export const CUSTOMER_PORTAL_SIGN_IN_EMAIL = defineEmail({
  name: 'customer_portal_sign_in',
  payload: Type.Object({ signInLinkId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ signInLinkId }, ctx) {
    const found = linkTokenForEmail(ctx, PORTAL_SIGN_IN_TOKEN, await sessions.signInLinkForEmail(ctx.db, signInLinkId), 'sign-in link');
    if ('skip' in found) return found;
    const { link, token } = found;
    if (link.status !== 'active' || !link.customer_portal_enabled) return { skip: 'the customer was removed or the portal turned off' };
    const portal = customerPortalUrl(ctx.urls.publicBaseUrl, { id: link.workspace_id, slug: link.slug });
    return composeEmail({
      to: link.email,
      subject: `Sign in to your ${link.workspace_name} purchases`,
      brand: link.workspace_name,
      preview: `Your sign-in link works once, for ${PORTAL_SIGN_IN_TTL_MINUTES} minutes.`,
      heading: 'Sign in to your purchases',
      paragraphs: [
        `Use this link within ${PORTAL_SIGN_IN_TTL_MINUTES} minutes to see your orders, license keys, devices and downloads from ${link.workspace_name}. It works once.`,
      ],
      // The token travels in the fragment: it never reaches a server log or a Referer header.
      action: { label: 'Sign in', url: `${portal}/sign-in#token=${token}` },
      footer: ['If you did not ask for this, ignore this e-mail: nobody can sign in without the link.'],
    });
  },
});

/** "Resend my keys": the buyer's license keys of this workspace, read when the e-mail is sent. */
export const CUSTOMER_PORTAL_KEYS_EMAIL = defineEmail({
  name: 'customer_portal_keys',
  payload: Type.Object({ customerId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ customerId }, ctx) {
    if (ctx.workspaceId === null) throw new PermanentJobError('a customer portal e-mail belongs to a workspace');
    const customer = await sessions.customerProfile(ctx.db, ctx.workspaceId, customerId);
    if (!customer || customer.status !== 'active') return { skip: 'the customer was removed' };
    const keys = await keysForEmail(ctx.db, ctx.workspaceId, customer.account_id);
    const portal = customerPortalUrl(ctx.urls.publicBaseUrl, { id: ctx.workspaceId, slug: customer.slug });
    return composeEmail({
      to: customer.email,
      subject: `Your ${customer.workspace_name} license keys`,
      brand: customer.workspace_name,
      preview: keys.length > 0 ? `${keys.length} license key${keys.length === 1 ? '' : 's'}, as you asked.` : 'You have no license keys yet.',
      heading: 'Your license keys',
      paragraphs:
        keys.length > 0
          ? ['Here are your license keys, as you asked. Keep them for reinstalling your plugins.']
          : [`You have no license keys from ${customer.workspace_name} at the moment.`],
      details: keys.map((k) => ({ label: k.status === 'suspended' ? `${k.product} (suspended)` : k.product, value: k.code })),
      ...(customer.customer_portal_enabled ? { action: { label: 'Open your purchases', url: portal } } : {}),
      footer: ['You get this e-mail because someone signed in to your purchases asked for it.'],
    });
  },
});
