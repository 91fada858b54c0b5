// The checkout module's face: the managed checkout's signed event webhook. app.ts imports this file
// only; the route exists when at least one webhook secret is configured.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { type CheckoutEventBound, checkoutRoutes, DEFAULT_CHECKOUT_EVENT_BOUND, registerSignedBodyParser, type SignedAt } from './checkout.routes.js';
import type { ReferralVerifier } from './checkout.booking.js';
import { CheckoutEvents } from './checkout.service.js';

export { type CheckoutEventBound, DEFAULT_CHECKOUT_EVENT_BOUND } from './checkout.routes.js';
export { signCheckoutPayload } from './checkout.signature.js';
/** The booking path a connected store's sales and refunds share with the managed checkout. */
export { bookExternalRefund, bookSale, type BookedSale, type ReferralVerifier, type SaleToBook } from './checkout.booking.js';

export interface CheckoutDeps {
  db: Db;
  /** CHECKOUT_WEBHOOK_SECRET values: any of them verifies an event. */
  secrets: readonly string[];
  /** Which referral contexts (`pb_ref`) this service signed. */
  verifyReferral: ReferralVerifier;
  bound?: CheckoutEventBound | undefined;
}

export async function register(app: FastifyInstance, { db, secrets, verifyReferral, bound = DEFAULT_CHECKOUT_EVENT_BOUND }: CheckoutDeps): Promise<void> {
  // Encapsulated: the webhook's own body parser (signature over the raw bytes) applies to its route only.
  await app.register(async (scoped) => {
    const signedAt: SignedAt = new WeakMap();
    registerSignedBodyParser(scoped, secrets, signedAt);
    registerRoutes(scoped, checkoutRoutes({ events: new CheckoutEvents(db, verifyReferral, app.log, bound.concurrency), signedAt, bound }));
  });
}
