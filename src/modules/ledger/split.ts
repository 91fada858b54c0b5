/**
 * How the money of one sale is divided, and how refunds take it back. Pure: no I/O, no
 * floating point, every amount a BigInt of minor units and every rate integer basis points.
 * The preview and the ledger both call these functions, so what a developer previews is what
 * a captured sale books.
 *
 * Rounding (documented in the README, "Split rules"):
 * - the platform share of a managed-checkout sale is ⌊proceeds × 1000 / 10000⌋;
 * - each partner share is ⌊distributable × rate / 10000⌋, taken in order (the affiliate of the
 *   attributed referral first, then collaborators by agreement id), each capped at what is left;
 * - the developer is the residual claimant and receives every rounding remainder, so the parts
 *   always sum to the proceeds exactly.
 * - refunds: the cumulative amount reversed from each party after refunds totalling R of a sale
 *   with proceeds N is the D'Hondt apportionment of R over the original parts (see
 *   `cumulativeReversal`): it sums to R exactly, never exceeds a part, grows with R, and depends
 *   only on R, so any sequence of partial refunds ends where one refund of their sum would.
 */

export const BPS = 10_000;
/** The platform's share of managed-checkout proceeds: 10 %. */
export const PLATFORM_SHARE_BPS = 1_000;

/** `managed`: collected by Patchbay's checkout, funded. `external`: collected by a reseller or store (or a historical basis), an unfunded estimate. */
export type Basis = 'managed' | 'external';

export interface SplitAgreement {
  agreementId: number;
  kind: 'affiliate' | 'collaborator';
  rateBps: number;
}

export interface SplitInput {
  subtotal: bigint;
  discount: bigint;
  basis: Basis;
  /** External basis only: the fees as the external seller reports them (managed: computed here). */
  platformFee?: bigint | undefined;
  processingFee?: bigint | undefined;
  /** The agreements that apply, the attributed affiliate (if any) first. */
  agreements: SplitAgreement[];
}

export type PartyKind = 'platform' | 'processing' | 'developer' | 'affiliate' | 'collaborator';

export interface SplitPart {
  party: PartyKind;
  agreementId: number | null;
  rateBps: number | null;
  amount: bigint;
}

export interface Split {
  basis: Basis;
  proceeds: bigint;
  platformFee: bigint;
  processingFee: bigint;
  /** What partner rates apply to: proceeds less the platform share (and, on an external basis, the seller's fees). */
  distributable: bigint;
  /** Platform, processing (only when not zero), each partner, then the developer; sums to `proceeds`. */
  parts: SplitPart[];
}

export class SplitInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly expected?: bigint,
  ) {
    super(message);
  }
}

/** ⌊a × b / c⌋ for non-negative BigInts. */
const mulDiv = (a: bigint, b: bigint, c: bigint) => (a * b) / c;

export function managedPlatformShare(proceeds: bigint): bigint {
  return mulDiv(proceeds, BigInt(PLATFORM_SHARE_BPS), BigInt(BPS));
}

export function splitSale(input: SplitInput): Split {
  const { subtotal, discount } = input;
  if (subtotal < 0n) throw new SplitInputError('subtotal_cents', 'must not be negative');
  if (discount < 0n) throw new SplitInputError('discount_cents', 'must not be negative');
  if (discount > subtotal) throw new SplitInputError('discount_cents', 'must not exceed subtotal_cents');
  const proceeds = subtotal - discount;
  let platformFee: bigint;
  let processingFee: bigint;
  if (input.basis === 'managed') {
    platformFee = managedPlatformShare(proceeds);
    processingFee = 0n;
  } else {
    platformFee = input.platformFee ?? 0n;
    processingFee = input.processingFee ?? 0n;
    if (platformFee < 0n) throw new SplitInputError('platform_fee_cents', 'must not be negative');
    if (processingFee < 0n) throw new SplitInputError('processing_fee_cents', 'must not be negative');
    if (platformFee + processingFee > proceeds) throw new SplitInputError('platform_fee_cents', 'the fees exceed the proceeds (subtotal less discount)');
  }
  const distributable = proceeds - platformFee - processingFee;
  const parts: SplitPart[] = [{ party: 'platform', agreementId: null, rateBps: null, amount: platformFee }];
  if (processingFee > 0n) parts.push({ party: 'processing', agreementId: null, rateBps: null, amount: processingFee });
  let left = distributable;
  for (const a of input.agreements) {
    if (!Number.isInteger(a.rateBps) || a.rateBps < 0 || a.rateBps > BPS) throw new SplitInputError('rate_bps', 'must be an integer from 0 to 10000');
    const wanted = mulDiv(distributable, BigInt(a.rateBps), BigInt(BPS));
    const amount = wanted < left ? wanted : left;
    left -= amount;
    parts.push({ party: a.kind, agreementId: a.agreementId, rateBps: a.rateBps, amount });
  }
  parts.push({ party: 'developer', agreementId: null, rateBps: null, amount: left });
  return { basis: input.basis, proceeds, platformFee, processingFee, distributable, parts };
}

/**
 * How much of each part has been reversed once refunds total `refunded` of a sale whose parts
 * sum to `net`: the D'Hondt (highest averages) apportionment of `refunded` over the parts, ties
 * to the earlier part. Every part gets at least its lower quota ⌊part × refunded / net⌋, so only
 * fewer than `parts.length` units are placed one by one.
 */
export function cumulativeReversal(parts: readonly bigint[], refunded: bigint): bigint[] {
  const net = parts.reduce((s, p) => s + p, 0n);
  if (parts.some((p) => p < 0n)) throw new RangeError('parts must not be negative');
  if (refunded < 0n || refunded > net) throw new RangeError('refunded must be between 0 and the sum of the parts');
  if (refunded === 0n) return parts.map(() => 0n);
  const taken = parts.map((p) => mulDiv(p, refunded, net));
  let remaining = refunded - taken.reduce((s, t) => s + t, 0n);
  while (remaining > 0n) {
    // The next seat goes to the highest average part / (taken + 1) among parts not yet used up.
    let best = -1;
    for (let i = 0; i < parts.length; i++) {
      if (taken[i]! >= parts[i]!) continue;
      if (best < 0 || parts[i]! * (taken[best]! + 1n) > parts[best]! * (taken[i]! + 1n)) best = i;
    }
    taken[best] = taken[best]! + 1n;
    remaining -= 1n;
  }
  return taken;
}

/** What one refund reverses from each part: the cumulative target after it, less what earlier refunds reversed. */
export function reversalStep(parts: readonly bigint[], refundedBefore: bigint, refundedAfter: bigint): bigint[] {
  if (refundedAfter < refundedBefore) throw new RangeError('refunds only accumulate');
  const before = cumulativeReversal(parts, refundedBefore);
  const after = cumulativeReversal(parts, refundedAfter);
  return after.map((a, i) => a - before[i]!);
}

/** A partner's balances in one agreement and currency: `recovery` is what they owe after reversals that outran their payable balance. */
export interface PartnerBuckets {
  pending: bigint;
  payable: bigint;
  recovery: bigint;
}

/** Where a new partner share goes: accrue as pending until live; once live, pay off any recovery first. */
export function creditMoves(b: PartnerBuckets, amount: bigint, live: boolean): { pending: bigint; payable: bigint; recovery: bigint } {
  if (amount < 0n) throw new RangeError('a credit is not negative');
  if (!live) return { pending: amount, payable: 0n, recovery: 0n };
  const recovered = amount < b.recovery ? amount : b.recovery;
  return { pending: 0n, payable: amount - recovered, recovery: recovered };
}

/** Where a reversal is taken from: pending first, then payable; what neither covers becomes a recovery the partner owes. */
export function debitMoves(b: PartnerBuckets, amount: bigint): { pending: bigint; payable: bigint; recovery: bigint } {
  if (amount < 0n) throw new RangeError('a debit is not negative');
  const fromPending = amount < b.pending ? amount : b.pending;
  const rest = amount - fromPending;
  const fromPayable = rest < b.payable ? rest : b.payable;
  return { pending: fromPending, payable: fromPayable, recovery: rest - fromPayable };
}

/** Applies credit (+) or debit (−) moves to buckets. */
export function applyMoves(b: PartnerBuckets, moves: { pending: bigint; payable: bigint; recovery: bigint }, sign: 1n | -1n): PartnerBuckets {
  return sign === 1n
    ? { pending: b.pending + moves.pending, payable: b.payable + moves.payable, recovery: b.recovery - moves.recovery }
    : { pending: b.pending - moves.pending, payable: b.payable - moves.payable, recovery: b.recovery + moves.recovery };
}
