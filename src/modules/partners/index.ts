// The partners module's face: partner agreements — versioned terms, invitations, the status table,
// acceptance and live consent, on the developer side and in the partner portal. app.ts, the
// operator tooling and other modules import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import type { LinkTokens } from '../../platform/mail/link-tokens.js';
import { PartnerPortal } from './partner-portal.service.js';
import { portalProgramRoutes, programRoutes } from './partners.routes.js';
import { type PartnerLimits, PartnerPrograms } from './partners.service.js';

// What other modules use: the switch every partner route asks first, the policy version the
// ledger checks consent against, the error codes the portal's payout side shares, and the event
// the ledger reacts to.
export { ensureProgramsEnabled, MANAGED_LIVE_POLICY_VERSION } from './partners.service.js';
export { PartnerErrors } from './partners.errors.js';
export { AgreementLiveJob } from './partners.jobs.js';
/** Fixtures and the demo seed make agreements in any state through the same checks as the API. */
export { seedAgreement } from './partners.service.js';
export type { PartnerPortal } from './partner-portal.service.js';

/** Invitation limits, unless configured (INVITES_PER_WORKSPACE_PER_DAY, INVITE_RESEND_COOLDOWN_SECONDS, INVITE_TTL_HOURS). */
export const DEFAULT_PARTNER_LIMITS: PartnerLimits = { invitesPerWorkspacePerDay: 200, inviteResendCooldownSeconds: 60, inviteTtlHours: 168 };

export interface Partners {
  programs: PartnerPrograms;
  /** The portal's side; the payouts module asks it for the recipient's accepted agreements. */
  portal: PartnerPortal;
}

export interface PartnersOptions {
  limits?: { [K in keyof PartnerLimits]?: number | undefined } | undefined;
  /** Mints the invitation tokens (and derives them again when the e-mail is sent). */
  tokens: LinkTokens;
  /** The partner portal front end: invitation links point there. */
  portalUrl: string;
  /** This service's public URL: referral links point there. */
  publicBaseUrl: string;
}

/** Made once, before the modules that use the portal (payouts) are registered. */
export function createPartners(db: Db, { limits, tokens, portalUrl, publicBaseUrl }: PartnersOptions): Partners {
  const settled: PartnerLimits = {
    invitesPerWorkspacePerDay: limits?.invitesPerWorkspacePerDay ?? DEFAULT_PARTNER_LIMITS.invitesPerWorkspacePerDay,
    inviteResendCooldownSeconds: limits?.inviteResendCooldownSeconds ?? DEFAULT_PARTNER_LIMITS.inviteResendCooldownSeconds,
    inviteTtlHours: limits?.inviteTtlHours ?? DEFAULT_PARTNER_LIMITS.inviteTtlHours,
  };
  const programs = new PartnerPrograms(db, settled, tokens, portalUrl, publicBaseUrl);
  return { programs, portal: new PartnerPortal(db, publicBaseUrl) };
}

export function register(app: FastifyInstance, { programs, portal }: Partners): void {
  // The invitation token is the credential of its route: guessing is limited per client address.
  const tokenLimit = enforceLimits(app, [{ max: 60, windowMs: 60_000, key: (req) => `ppi:ip:${req.ip}` }]);
  registerRoutes(app, [...programRoutes({ programs }), ...portalProgramRoutes({ portal, tokenLimit })]);
}
