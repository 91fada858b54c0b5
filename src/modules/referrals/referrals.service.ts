import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import type { RecipientScope } from '../../platform/auth/scope.js';
import { AppError, notFound as recordNotFound } from '../../platform/http/errors.js';
import { ReferralCache, type ReferralCacheOptions } from './referral-cache.js';
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

/** What a link resolves to, as the redirect needs it: nothing left to read or parse per click. */
interface Link {
  agreementId: number;
  workspaceId: number;
  productId: number | null;
  active: boolean;
  /** Not active: the whole address. Active: the address up to the signed context's value… */
  before: string;
  /** …and what follows that value (the rest of the query, the fragment). */
  after: string;
}

// Stands in for the signed value while an address is laid out once; random per process, so no storefront URL holds it.
const MARK = randomBytes(16).toString('hex');

/**
 * Public referral links of affiliate agreements. A link of an active agreement redirects to the
 * storefront with a signed referral context and records the visit (in a batch, after the answer);
 * a link of an agreement that is not active redirects without either; an unknown code, and every
 * code of a workspace whose partner features are off, is a 404.
 *
 * What a link resolves to is kept per instance for a second (ReferralCache): a click costs two
 * HMACs and no database read. `forget()` drops it all when this instance commits a change to an
 * agreement, a workspace or a product; another instance's change is seen within the second.
 */
export class ReferralLinks {
  private readonly addressKey: Buffer;
  private readonly cache: ReferralCache<Link>;

  constructor(
    private readonly db: Db,
    private readonly signer: ReferralContextSigner,
    private readonly visits: ReferralVisitBuffer,
    /** The key-encryption key: visits keep a keyed hash of the address, derived from it. */
    secret: Buffer,
    private readonly publicBaseUrl: string,
    cache: ReferralCacheOptions = {},
  ) {
    this.addressKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'patchbay referral visit addresses v1', 32));
    this.cache = new ReferralCache(async (code, productId) => {
      const target = await repo.referralTarget(this.db, code, productId);
      return target && this.link(target);
    }, cache);
  }

  /** The URL to redirect to. */
  async resolve(request: ReferralRequest, now = new Date()): Promise<string> {
    if (!CODE.test(request.code)) throw notFound();
    const cached = this.cache.get(request.code, request.productId);
    const link = cached instanceof Promise ? await cached : cached;
    if (!link) throw notFound();
    if (!link.active) return link.before;
    const ref = this.signer.sign({ agreementId: link.agreementId, workspaceId: link.workspaceId, visitedAt: now });
    if (request.recordVisit) {
      this.visits.record({
        workspaceId: link.workspaceId,
        agreementId: link.agreementId,
        productId: link.productId,
        visitedAt: now,
        addressHash: createHmac('sha256', this.addressKey).update(request.address).digest('base64url'),
        userAgentClass: userAgentClass(request.userAgent),
      });
    }
    return link.before + ref + link.after;
  }

  /** Drops every resolved link: the next click of each reads it again. */
  forget(): void {
    this.cache.clear();
  }

  /** The address laid out once: URLSearchParams serialises a base64url value as it is, so only the value varies. */
  private link(target: repo.ReferralTarget): Link {
    const destination = this.destination(target);
    const ids = { agreementId: target.agreement_id, workspaceId: target.workspace_id, productId: target.product_id };
    if (target.status !== 'active') return { ...ids, active: false, before: destination.toString(), after: '' };
    destination.searchParams.set(REFERRAL_PARAM, MARK);
    const address = destination.toString();
    const at = address.indexOf(MARK);
    return { ...ids, active: true, before: address.slice(0, at), after: address.slice(at + MARK.length) };
  }

  /** The product's storefront page, else the workspace's storefront, else this service's home page. */
  private destination(target: repo.ReferralTarget): URL {
    return httpUrl(target.product_url) ?? httpUrl(target.workspace_url) ?? new URL(`${this.publicBaseUrl}/`);
  }
}

const notFound = () => new AppError(ReferralErrors.REFERRAL_NOT_FOUND, 'No such referral link');

const DAY_MS = 86_400_000;

/**
 * The partner portal's view of a referral link's visits: per-day counts for the last `days` UTC days
 * (today included, zero-filled) and all-time totals. Counts only: a visit's hashed address and
 * client class stay for attribution and are never answered. Another recipient's agreement, or one
 * of a workspace whose partner programs are off, is not found.
 */
export async function recipientVisits(db: Db, recipient: RecipientScope, agreementId: number, days: number, now = new Date()) {
  const agreement = await repo.recipientAgreement(db, recipient.recipientId, agreementId);
  if (!agreement) throw recordNotFound('Agreement');
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const since = new Date(today - (days - 1) * DAY_MS);
  const counts = await repo.visitCounts(db, agreement.workspace_id, agreement.id, since);
  const byDay = new Map(counts.days.map((d) => [d.day, d]));
  const daily = Array.from({ length: days }, (_, i) => {
    const date = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    const d = byDay.get(date);
    return { date, visits: d?.visits ?? 0, bot_visits: d?.bot_visits ?? 0 };
  });
  return {
    agreement_id: agreement.id,
    days,
    total_visits: counts.total,
    last_visit_at: counts.last?.toISOString() ?? null,
    period_visits: daily.reduce((t, d) => t + d.visits, 0),
    period_bot_visits: daily.reduce((t, d) => t + d.bot_visits, 0),
    daily,
  };
}
