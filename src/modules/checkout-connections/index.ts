// The checkout connections module's face: sales and refunds from the stores sellers already use
// (Stripe, Paddle, Lemon Squeezy), booked through the managed checkout's booking path. app.ts
// imports this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { type JobRunner, workspaceOf } from '../../platform/jobs/runner.js';
import type { ReferralVerifier } from '../checkout/index.js';
import { ReprocessWaitingJob } from './checkout-connections.jobs.js';
import { connectionRoutes } from './checkout-connections.routes.js';
import { CheckoutConnections } from './checkout-connections.service.js';
import { eventRoutes, registerRawBodyParser } from './events.routes.js';
import { ConnectionEvents } from './events.service.js';
import type { StripeApiOptions } from './provider.stripe.js';

export type { StripeApiOptions } from './provider.stripe.js';

export interface CheckoutConnectionsDeps {
  db: Db;
  runner: JobRunner;
  /** The service's key: signing secrets, API keys and failed events' bodies are sealed with it. */
  encryptionKey: Buffer;
  publicBaseUrl: string;
  /** Which referral contexts (`pb_ref`) this service signed. */
  verifyReferral: ReferralVerifier;
  /** Where Stripe's library reaches its API (default: Stripe; tests: a local server). */
  stripeApi?: StripeApiOptions | undefined;
}

export async function register(app: FastifyInstance, deps: CheckoutConnectionsDeps): Promise<void> {
  const events = new ConnectionEvents(deps.db, { encryptionKey: deps.encryptionKey, verifyReferral: deps.verifyReferral, log: app.log, stripeApi: deps.stripeApi });
  const connections = new CheckoutConnections(deps.db, deps.encryptionKey, deps.publicBaseUrl);
  deps.runner.handle(ReprocessWaitingJob, async (job) => ({ booked: await events.reprocessWaiting(workspaceOf(job), job.payload.connectionId, job.payload.eventIds) }));
  registerRoutes(app, connectionRoutes({ connections, events }));
  // Encapsulated: the provider webhook reads raw bytes, which its route alone may do.
  await app.register(async (scoped) => {
    registerRawBodyParser(scoped);
    registerRoutes(scoped, eventRoutes({ events }));
  });
}
