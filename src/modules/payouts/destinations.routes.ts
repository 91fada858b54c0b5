import type { preHandlerAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CardAnswer, CardBody, RefreshBody, WalletAnswer, WalletBody } from './destinations.schemas.js';
import type { PayoutDestinations } from './destinations.service.js';

const tags = ['partner portal: payouts'];
/** Onboarding starts (card and wallet together) one recipient may make per hour. */
export const ONBOARDING_STARTS_PER_HOUR = 10;

const conditions =
  'Needs a verified session (403 EMAIL_NOT_VERIFIED) and an accepted agreement in a workspace with partner features on (403 PAYOUT_AGREEMENT_REQUIRED). ' +
  'One current destination per recipient and mode serves every agreement; onboarding is not a payout request.';

export interface DestinationRouteDeps {
  destinations: PayoutDestinations;
  /** Per recipient (see index.ts): onboarding starts, and readiness refreshes. */
  startLimit: preHandlerAsyncHookHandler;
  refreshLimit: preHandlerAsyncHookHandler;
}

export const destinationRoutes = ({ destinations, startLimit, refreshLimit }: DestinationRouteDeps) => [
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/programs/payouts/card-provider',
    policy: { auth: 'recipient' },
    preHandler: startLimit,
    schema: {
      tags,
      summary: 'Start or continue card-provider onboarding',
      description:
        'Answers `ready: true` for a ready card destination (nothing changes), otherwise an onboarding `url` (a new single-use link each time). A new card destination replaces the current one; ' +
        'after a destination was ever ready that is a change with a security hold (`hold_until`, PAYOUT_DESTINATION_HOLD_HOURS) and an e-mail notice. ' +
        `\`program\` (affiliate or collaborator) requires an accepted agreement of that kind and is recorded on a new destination. ${conditions} ` +
        `At most ${ONBOARDING_STARTS_PER_HOUR} onboarding starts (card and wallet) per recipient and hour (429).`,
      body: CardBody,
      response: { 200: CardAnswer, ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: ({ request, recipient }) => destinations.card(recipient, request.body),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/programs/payouts/card-provider/refresh',
    policy: { auth: 'recipient' },
    preHandler: refreshLimit,
    schema: {
      tags,
      summary: 'Current card destination readiness',
      description: `Asks the provider whether onboarding is complete; an unfinished one gets a new link. No current card destination in this mode: 404. ${conditions}`,
      body: RefreshBody,
      response: { 200: CardAnswer, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: ({ request, recipient }) => destinations.refreshCard(recipient, request.body),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/programs/payouts/wallet-provider',
    policy: { auth: 'recipient' },
    preHandler: startLimit,
    schema: {
      tags,
      summary: 'Pay to the wallet of the verified e-mail address',
      description:
        'The destination is the signed-in recipient’s verified e-mail address and nothing else: no address is accepted in the body (any other field, `email` included, is a 400), and an unverified address is 403 EMAIL_NOT_VERIFIED. ' +
        'Ready at once, with its availability time; registering the same address again changes nothing. Replacing a card destination is a change (hold and notice). ' +
        `${conditions}`,
      body: WalletBody,
      response: { 200: WalletAnswer, ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: ({ request, recipient }) => destinations.wallet(recipient, request.body),
  }),
];
