import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { seal, unseal } from '../../platform/crypto/sealed.js';

// Signing follows the Standard Webhooks specification through its maintained library: the
// signature is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, and a
// receiver verifies it with the same library (docs/api/webhooks.md shows both ways).

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, the form the libraries read. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** The sealing context binds a sealed secret to its endpoint: copied to another row, it does not open. */
const context = (endpointId: number) => `webhook-endpoint:${endpointId}`;

export const sealSecret = (key: Buffer, endpointId: number, secret: string) => seal(key, Buffer.from(secret), context(endpointId));
export const openSecret = (key: Buffer, endpointId: number, sealed: string) => unseal(key, sealed, context(endpointId)).toString();

/**
 * The three Standard Webhooks headers for one attempt. While a rotated secret is still in its
 * overlap, the signature header carries both signatures (the new one first), so a receiver
 * that still holds the old secret keeps verifying until it switches.
 */
export function signatureHeaders(secrets: readonly string[], eventId: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, body)).join(' '),
  };
}
