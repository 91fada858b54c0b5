import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { PartnerErrors } from '../partners/index.js';
import { getVisibleProductOrThrow } from '../products/index.js';
import * as repo from './ledger.repo.js';
import { cumulativeReversal, managedPlatformShare, splitSale, SplitInputError, type Basis } from './split.js';

export interface PreviewInput {
  product_id: number;
  subtotal_cents: number;
  discount_cents: number;
  platform_fee_cents?: number | undefined;
  processing_fee_cents?: number | undefined;
  affiliate_agreement_id?: number | undefined;
  currency: string;
  collection_provider?: string | undefined;
  cumulative_refund_product_cents?: number | undefined;
}

const invalid = (field: string, message: string, body: Record<string, unknown> = {}) =>
  new AppError(CommonErrors.VALIDATION_FAILED, `${field} ${message}`, { errors: [{ path: `body/${field}`, message }], body });

/**
 * What a sale would book, computed by the same split rules as the ledger, from the agreements'
 * accepted terms. Writes nothing and pays nothing (`payable: false`).
 */
export async function previewSplit(db: Db, scope: Scope, input: PreviewInput) {
  await getVisibleProductOrThrow(db, scope, input.product_id);
  const provider = input.collection_provider ?? 'managed';
  const basis: Basis = provider === 'managed' ? 'managed' : 'external';
  const subtotal = BigInt(input.subtotal_cents);
  const discount = BigInt(input.discount_cents);
  if (discount > subtotal) throw invalid('discount_cents', 'must not exceed subtotal_cents');
  const proceeds = subtotal - discount;
  if (basis === 'managed') {
    // The managed checkout's fees are the policy's, not the caller's: a different figure is a mistake to point out.
    const expected = managedPlatformShare(proceeds);
    if (input.platform_fee_cents !== undefined && BigInt(input.platform_fee_cents) !== expected) {
      throw invalid('platform_fee_cents', `must be ${expected} (10% of proceeds ${proceeds}) for the managed checkout, or omitted`, { expected_platform_fee_cents: Number(expected) });
    }
    if (input.processing_fee_cents !== undefined && input.processing_fee_cents !== 0) {
      throw invalid('processing_fee_cents', 'must be 0 for the managed checkout (processing is not deducted a second time), or omitted', { expected_processing_fee_cents: 0 });
    }
  }
  if (input.cumulative_refund_product_cents !== undefined && BigInt(input.cumulative_refund_product_cents) > proceeds) {
    throw invalid('cumulative_refund_product_cents', `must not exceed the proceeds (${proceeds})`);
  }
  if (input.affiliate_agreement_id !== undefined) {
    const a = await repo.findAgreementForPreview(db, scope.workspaceId, input.affiliate_agreement_id);
    if (!a) throw notFound('Agreement');
    if (a.kind !== 'affiliate') throw invalid('affiliate_agreement_id', 'names a collaborator agreement; collaborators apply to their products without a referral');
    if (a.status === 'ended') throw new AppError(PartnerErrors.AGREEMENT_ENDED, 'An ended agreement shares in no new sales');
    if (a.status === 'pending') throw new AppError(PartnerErrors.AGREEMENT_NOT_ACCEPTED, 'The recipient has not accepted this agreement yet; it has no terms in force');
  }
  const agreements = await repo.agreementsForSale(db, scope.workspaceId, input.product_id, input.affiliate_agreement_id ?? null, new Date(), false);
  const sharing = agreements
    .filter((a) => basis === 'managed' || a.include_reseller_sales)
    .sort((a, b) => (a.kind === b.kind ? a.id - b.id : a.kind === 'affiliate' ? -1 : 1));
  let split;
  try {
    split = splitSale({
      subtotal,
      discount,
      basis,
      platformFee: input.platform_fee_cents === undefined ? undefined : BigInt(input.platform_fee_cents),
      processingFee: input.processing_fee_cents === undefined ? undefined : BigInt(input.processing_fee_cents),
      agreements: sharing.map((a) => ({ agreementId: a.id, kind: a.kind, rateBps: a.product_rate_bps ?? a.rate_bps })),
    });
  } catch (e) {
    if (e instanceof SplitInputError) throw invalid(e.field, e.message);
    throw e;
  }
  const refunded = BigInt(input.cumulative_refund_product_cents ?? 0);
  const reversed = cumulativeReversal(split.parts.map((p) => p.amount), refunded);
  const n = (v: bigint) => Number(v);
  const parts = split.parts.map((p, i) => {
    const agreement = p.agreementId === null ? null : sharing.find((a) => a.id === p.agreementId)!;
    return {
      party: p.party,
      agreement_id: p.agreementId,
      rate_bps: p.rateBps,
      amount_cents: n(p.amount),
      // Partner shares of an external collection are estimates: the money never passed through Patchbay.
      funded: basis === 'managed',
      reversed_cents: n(reversed[i]!),
      net_cents: n(p.amount - reversed[i]!),
      ...(agreement ? { status: agreement.status, live: agreement.live } : {}),
    };
  });
  const partnerParts = parts.filter((p) => p.agreement_id !== null);
  return {
    mode: 'preview' as const,
    payable: false as const,
    currency: input.currency.toLowerCase(),
    collection_provider: provider,
    basis,
    allocation: {
      proceeds_cents: n(split.proceeds),
      platform_fee_cents: n(split.platformFee),
      processing_fee_cents: n(split.processingFee),
      distributable_cents: n(split.distributable),
      parts,
      funded_partner_cents: basis === 'managed' ? partnerParts.reduce((s, p) => s + p.amount_cents, 0) : 0,
      unfunded_estimate_cents: basis === 'external' ? partnerParts.reduce((s, p) => s + p.amount_cents, 0) : 0,
      rounding: 'Platform share and partner shares round down; the developer, as residual claimant, receives every remainder. Refunds reverse the saved shares by D’Hondt apportionment.',
    },
    refund: input.cumulative_refund_product_cents === undefined ? null : { cumulative_refund_product_cents: n(refunded), reversed: parts.map((p) => ({ party: p.party, agreement_id: p.agreement_id, amount_cents: p.reversed_cents })) },
    payoutPlan: partnerParts.map((p) => ({
      agreement_id: p.agreement_id!,
      party: p.party,
      amount_cents: p.net_cents,
      funded: p.funded,
      // When the money would become payable to the partner after a real sale.
      when: !p.funded ? ('never: an unfunded external estimate' as const) : p.live ? ('payable after capture' as const) : ('pending until the agreement is active and both parties gave live consent' as const),
    })),
  };
}
