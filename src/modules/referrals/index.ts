// The referrals module's face: affiliates' public referral links, the signed referral context
// (`pb_ref`) they hand the storefront, and the visits they record. app.ts and other modules import
// this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import { onCommittedChange } from '../../platform/db/committed-changes.js';
import type { Db } from '../../platform/db/database.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { type ReferralContext, ReferralContextSigner } from './referral-context.js';
import { ReferralVisitBuffer } from './referral-visits.js';
import { referralRoutes } from './referrals.routes.js';
import { ReferralLinks } from './referrals.service.js';

/** The ledger counts a referred sale only within the agreement's attribution window. */
export { type ReferralContext, withinAttributionWindow } from './referral-context.js';

/** Referral link requests one client address may make per minute, unless configured (REFERRALS_PER_MINUTE). */
export const DEFAULT_REFERRALS_PER_MINUTE = 60;

export interface ReferralsDeps {
  db: Db;
  /** The service's key-encryption key: the referral context's MAC key and the visit address key are derived from it. */
  secret: Buffer;
  /** Where this service is reached: a link without a storefront redirects to its home page. */
  publicBaseUrl: string;
  perMinute?: number | undefined;
}

export interface Referrals {
  /** Which referral contexts this service signed: the checkout attributes a sale only to one of them. */
  verifyContext(value: string): ReferralContext | null;
}

// The tables a link's answer is read from (referralTarget): a change to any of them here drops the resolved links.
const LINK_TABLES = new Set(['partner_agreements', 'workspaces', 'products']);

export function register(app: FastifyInstance, { db, secret, publicBaseUrl, perMinute = DEFAULT_REFERRALS_PER_MINUTE }: ReferralsDeps): Referrals {
  const signer = new ReferralContextSigner([secret]);
  // Visits are written in batches; the last one before the database closes.
  const visits = new ReferralVisitBuffer(db, app.log);
  const links = new ReferralLinks(db, signer, visits, secret, publicBaseUrl);
  // A status change made on this instance (an agreement paused or ended, partner programs off, a product or storefront
  // changed) is answered only after this ran; other instances see it when their entry expires (REFERRAL_CACHE_MS).
  const stopListening = onCommittedChange((change) => {
    if (LINK_TABLES.has(change.table)) links.forget();
  });
  app.addHook('onClose', async () => {
    stopListening();
    await visits.stop();
  });
  const limit = enforceLimits(app, [{ max: perMinute, windowMs: 60_000, key: (req) => `ref:ip:${req.ip}` }]);
  registerRoutes(app, referralRoutes({ db, links, limit }));
  return { verifyContext: (value) => signer.verify(value) };
}
