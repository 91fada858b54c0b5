// The recipients module's face: partners' identity outside the developer's team — sign-in links
// and partner portal sessions (the `recipient` caller kind). app.ts, the CLI and other modules
// import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import { signInLimits } from '../../platform/auth/sign-in.js';
import { recipientSessionRoutes } from './recipients.routes.js';
import { normaliseEmail, type Recipients } from './recipients.service.js';

/** Made before the policy hook is registered (it verifies recipient sessions); the routes come with `register`. */
export { Recipients, type RecipientSession } from './recipients.service.js';

/** Sign-in links one address may ask for per hour, unless configured (PARTNER_SIGN_IN_LINKS_PER_HOUR). */
export const DEFAULT_SIGN_IN_LINKS_PER_HOUR = 5;

export interface RecipientsDeps {
  recipients: Recipients;
  linksPerHour?: number | undefined;
}

export function register(app: FastifyInstance, { recipients, linksPerHour = DEFAULT_SIGN_IN_LINKS_PER_HOUR }: RecipientsDeps): void {
  const limits = signInLimits(app, { prefix: 'partner', perHour: linksPerHour, address: (req) => normaliseEmail(String((req.body as { email?: unknown } | undefined)?.email ?? '')) });
  registerRoutes(app, recipientSessionRoutes({ recipients, linksPerHour, limits }));
}
