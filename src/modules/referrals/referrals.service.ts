import { createHmac, hkdfSync } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/errors.js';
import type { ReferralContextSigner } from './referral-context.js';
import { type ReferralVisitBuffer, userAgentClass } from './referral-visits.js';
import { ReferralErrors } from './referrals.errors.js';
import * as repo from './referrals.repo.js';

/** The query parameter that carries the signed referral context to the storefront. */
export const REFERRAL_PARAM = 'pb_ref';
/** Codes are 24 random bytes in base64url; anything else cannot be one and costs no query. */
const CODE = /^[A-Za-z0-9_-]{32}$/;

export interface ReferralRequest {
  code: string;
  productId: number | null;
  address: string;
  userAgent: string | undefined;
  /** false for HEAD: the same answer, no visit. */
  recordVisit: boolean;
}

const httpUrl = (value: string | null): URL | null => {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
};

/**
 * Public referral links of affiliate agreements. A link of an active agreement redirects to the
 * storefront with a signed referral context and records the visit (in a batch, after the answer);
 * a link of an agreement that is not active redirects without either; an unknown code, and every
 * code of a workspace whose partner features are off, is a 404.
 */
export class ReferralLinks {
  private readonly addressKey: Buffer;

  constructor(
    private readonly db: Db,
    private readonly signer: ReferralContextSigner,
    private readonly visits: ReferralVisitBuffer,
    /** The key-encryption key: visits keep a keyed hash of the address, derived from it. */
    secret: Buffer,
    private readonly publicBaseUrl: string,
  ) {
    this.addressKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'patchbay referral visit addresses v1', 32));
  }

  /** The URL to redirect to. */
  async resolve(request: ReferralRequest, now = new Date()): Promise<string> {
    if (!CODE.test(request.code)) throw notFound();
    const target = await repo.referralTarget(this.db, request.code, request.productId);
    if (!target) throw notFound();
    const destination = this.destination(target);
    if (target.status !== 'active') return destination.toString();
    destination.searchParams.set(REFERRAL_PARAM, this.signer.sign({ agreementId: target.agreement_id, workspaceId: target.workspace_id, visitedAt: now }));
    if (request.recordVisit) {
      this.visits.record({
        workspaceId: target.workspace_id,
        agreementId: target.agreement_id,
        productId: target.product_id,
        visitedAt: now,
        addressHash: createHmac('sha256', this.addressKey).update(request.address).digest('base64url'),
        userAgentClass: userAgentClass(request.userAgent),
      });
    }
    return destination.toString();
  }

  /** The product's storefront page, else the workspace's storefront, else this service's home page. */
  private destination(target: repo.ReferralTarget): URL {
    return httpUrl(target.product_url) ?? httpUrl(target.workspace_url) ?? new URL(`${this.publicBaseUrl}/`);
  }
}

const notFound = () => new AppError(ReferralErrors.REFERRAL_NOT_FOUND, 'No such referral link');
