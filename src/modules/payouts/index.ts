// The payouts module's face: where a recipient's payouts go — the provider interface, the built-in
// sandbox card and wallet, payout destinations with their security hold, and the sandbox's hosted
// onboarding page. Moving money is the ledger's; it reaches providers and destinations through
// this file. app.ts, the operator tooling and other modules import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { destinationRoutes, ONBOARDING_STARTS_PER_HOUR } from './destinations.routes.js';
import { DEFAULT_DESTINATION_HOLD_HOURS, PayoutDestinations, type RecipientAgreements } from './destinations.service.js';
import type { PayoutProviders } from './providers.js';
import { sandboxOnboardingRoutes } from './sandbox-onboarding.routes.js';
import { payoutProviders, SandboxCardProvider, SandboxWalletProvider } from './sandbox-provider.js';

// What the ledger uses: providers by kind and mode, the key a transfer is submitted with, the
// provider's confirmation it handles, and the current destination a transfer goes to.
export type { PayoutProvider, PayoutProviders, ProviderKind, ProviderTransfer } from './providers.js';
export { transferIdempotencyKey } from './providers.js';
export { ProviderConfirmJob } from './payouts.jobs.js';
export { currentDestination, currentDestinations, type DestinationRecord } from './destinations.repo.js';
export type { RecipientAgreements } from './destinations.service.js';
/** How long transfers wait after a destination change, unless configured (PAYOUT_DESTINATION_HOLD_HOURS). */
export { DEFAULT_DESTINATION_HOLD_HOURS };

const HOUR = 3_600_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** Payout providers by kind and mode (the payout run submits transfers through them). */
    payoutProviders: PayoutProviders;
  }
}

export interface Payouts {
  /** The configured providers first, then the built-in sandbox for test mode (live mode has no default). */
  providers: PayoutProviders;
  /** The sandbox card provider, whose hosted onboarding page this service serves. */
  sandboxCard: SandboxCardProvider;
}

/** Made once: the destinations' routes, the ledger's payout runs and the CLI use the same providers. */
export function createPayouts(db: Db, { publicBaseUrl, configured }: { publicBaseUrl: string; configured?: PayoutProviders | undefined }): Payouts {
  const sandboxCard = new SandboxCardProvider(db, publicBaseUrl);
  return { providers: payoutProviders({ card: sandboxCard, wallet: new SandboxWalletProvider(db) }, configured), sandboxCard };
}

export interface PayoutsDeps {
  db: Db;
  payouts: Payouts;
  /** The recipient's accepted agreements (the partners module's portal): onboarding needs one. */
  agreements: RecipientAgreements;
  holdHours?: number | undefined;
}

export async function register(app: FastifyInstance, { db, payouts, agreements, holdHours = DEFAULT_DESTINATION_HOLD_HOURS }: PayoutsDeps): Promise<void> {
  app.decorate('payoutProviders', payouts.providers);
  const destinations = new PayoutDestinations(db, payouts.providers, payouts.sandboxCard, agreements, { holdHours });
  const perRecipient = (prefix: string) => (req: { recipient: { recipientId: number } | null; ip: string }) => `${prefix}:${req.recipient?.recipientId ?? `ip:${req.ip}`}`;
  registerRoutes(
    app,
    destinationRoutes({
      destinations,
      startLimit: enforceLimits(app, [{ max: ONBOARDING_STARTS_PER_HOUR, windowMs: HOUR, key: perRecipient('pdo') }]),
      refreshLimit: enforceLimits(app, [{ max: ONBOARDING_STARTS_PER_HOUR * 12, windowMs: HOUR, key: perRecipient('pdr') }]),
    }),
  );
  // Encapsulated: browsers post the onboarding page's form urlencoded, and only these routes accept that.
  await app.register(async (scoped) => {
    scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, _body, done) => done(null, {}));
    const limit = enforceLimits(scoped, [{ max: 60, windowMs: 60_000, key: (req) => `pso:ip:${req.ip}` }]);
    registerRoutes(scoped, sandboxOnboardingRoutes({ destinations, limit }));
  });
}
