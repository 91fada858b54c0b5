import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What a referral redirect hands the storefront (`pb_ref`) and a later captured sale brings back. */
export interface ReferralContext {
  agreementId: number;
  workspaceId: number;
  visitedAt: Date;
}

const VERSION = 1;
// version (1) + agreement id (4) + workspace id (4) + visit time in ms (6)
const PAYLOAD_BYTES = 15;
// HMAC-SHA256 cut to 128 bits: forging one still takes 2^128 guesses, and the value stays short in a URL.
const MAC_BYTES = 16;
const VALUE = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil(((PAYLOAD_BYTES + MAC_BYTES) * 4) / 3)}}$`);
const MAX_ID = 0xffff_ffff;
const MAX_MS = 2 ** 48 - 1;
const DAY_SECONDS = 86_400;

/**
 * Signs and checks `pb_ref`: base64url of a compact payload (agreement, workspace, visit time)
 * followed by its HMAC-SHA256. The secrets are the service's key-encryption keys; the MAC key is
 * derived from each with a label of its own, so every instance sharing the key accepts the others'
 * values and no other signature of the service can stand in for one.
 */
export class ReferralContextSigner {
  private readonly keys: Buffer[];

  /** The first secret signs; every one verifies (a rotation window). */
  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error('ReferralContextSigner needs a key');
    this.keys = keys.map((k) => Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), 'patchbay referral context v1', 32)));
  }

  private mac(key: Buffer, payload: Buffer): Buffer {
    return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  }

  sign(ctx: ReferralContext): string {
    const ms = ctx.visitedAt.getTime();
    if (!validId(ctx.agreementId) || !validId(ctx.workspaceId) || !Number.isInteger(ms) || ms < 0 || ms > MAX_MS) {
      throw new RangeError('The referral context is out of range');
    }
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    payload.writeUInt8(VERSION, 0);
    payload.writeUInt32BE(ctx.agreementId, 1);
    payload.writeUInt32BE(ctx.workspaceId, 5);
    payload.writeUIntBE(ms, 9, 6);
    return Buffer.concat([payload, this.mac(this.keys[0]!, payload)]).toString('base64url');
  }

  /** null when the value is malformed, was changed, or was signed with a key this signer does not hold. */
  verify(value: string): ReferralContext | null {
    if (typeof value !== 'string' || !VALUE.test(value)) return null;
    const raw = Buffer.from(value, 'base64url');
    // Only the canonical spelling: another string that decodes to the same bytes is not this value.
    if (raw.length !== PAYLOAD_BYTES + MAC_BYTES || raw.toString('base64url') !== value) return null;
    const payload = raw.subarray(0, PAYLOAD_BYTES);
    const given = raw.subarray(PAYLOAD_BYTES);
    // Every key is tried, so the time taken does not say which one matched.
    let valid = false;
    for (const key of this.keys) valid = timingSafeEqual(this.mac(key, payload), given) || valid;
    if (!valid || payload.readUInt8(0) !== VERSION) return null;
    const agreementId = payload.readUInt32BE(1);
    const workspaceId = payload.readUInt32BE(5);
    if (!validId(agreementId) || !validId(workspaceId)) return null;
    return { agreementId, workspaceId, visitedAt: new Date(payload.readUIntBE(9, 6)) };
  }
}

const validId = (id: number) => Number.isInteger(id) && id >= 1 && id <= MAX_ID;

/**
 * How far a reported sale time may precede the visit and still count: the checkout's clock and
 * this service's clock are different machines' clocks.
 */
export const ATTRIBUTION_CLOCK_SKEW_SECONDS = 300;

/**
 * A sale counts for a visit when it comes no earlier than the clock-skew tolerance before the visit
 * and no later than `windowDays` after it. Compared in whole seconds, the checkout's granularity
 * (`created` is Unix seconds while a visit is stamped in milliseconds): a sale in the same second as
 * the click is the click's.
 */
export function withinAttributionWindow(ctx: Pick<ReferralContext, 'visitedAt'>, saleAt: Date, windowDays: number): boolean {
  const visit = Math.floor(ctx.visitedAt.getTime() / 1000);
  const sale = Math.floor(saleAt.getTime() / 1000);
  if (!Number.isFinite(visit) || !Number.isFinite(sale) || !(windowDays >= 0)) return false;
  return sale >= visit - ATTRIBUTION_CLOCK_SKEW_SECONDS && sale <= visit + windowDays * DAY_SECONDS;
}
