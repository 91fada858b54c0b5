import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `Patchbay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. Several `v1`
 * values may be sent while a secret is rotated; one matching any configured secret is enough. The
 * HMAC covers the body's bytes as sent (a string is its UTF-8 bytes), never a decoding of them.
 */
export const SIGNATURE_HEADER = 'patchbay-signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const hmac = (secret: string, t: number, rawBody: string | Uint8Array) => createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();

export function signCheckoutPayload(secret: string, rawBody: string | Uint8Array, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac(secret, unixSeconds, rawBody).toString('hex')}`;
}

/** `signedAt`: the header's `t`, the checkout's clock when it signed (Unix seconds). */
export type SignatureCheck = { ok: true; signedAt: number } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

export function verifyCheckoutSignature(header: string | undefined, rawBody: string | Uint8Array, secrets: readonly string[], nowMs = Date.now()): SignatureCheck {
  if (!header) return { ok: false, reason: 'missing' };
  let t: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return { ok: false, reason: 'malformed' };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || t !== null) return { ok: false, reason: 'malformed' };
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return { ok: false, reason: 'malformed' };
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (t === null || signatures.length === 0 || signatures.length > 8) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowMs / 1000 - t) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'stale' };
  for (const secret of secrets) {
    const expected = hmac(secret, t, rawBody);
    if (signatures.some((s) => timingSafeEqual(s, expected))) return { ok: true, signedAt: t };
  }
  return { ok: false, reason: 'mismatch' };
}
