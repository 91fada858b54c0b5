import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { requireRecipient } from '../../platform/auth/policy.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { PayoutDestinations } from './destinations.service.js';

const tags = ['partner portal: payouts'];
const HOUR = 3_600_000;
/** Onboarding starts (card and wallet together) one recipient may make per hour. */
export const ONBOARDING_STARTS_PER_HOUR = 10;

const Livemode = Type.Boolean({ description: 'false: the built-in sandbox provider; true: the configured live provider (503 PAYOUT_PROVIDER_NOT_CONFIGURED without one)' });
const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const Status = Type.Union(['onboarding', 'ready', 'replaced', 'disabled'].map((s) => Type.Literal(s)));
const hold = {
  hold_until: { ...Timestamp, description: 'Set when this destination changed a previously ready one: no transfer goes to it before this time' },
  available_at: { ...Timestamp, description: 'When transfers may go to the destination: the later of the hold and the provider’s availability (null while onboarding)' },
};

const CardAnswer = Type.Object(
  {
    provider: Type.Literal('card'),
    livemode: Type.Boolean(),
    ready: Type.Boolean(),
    url: Type.Union([Type.String(), Type.Null()], { description: 'The hosted-onboarding link while onboarding is unfinished (single use, one hour; open it privately); null when ready' }),
    status: Status,
    display: Type.String({ description: 'The masked destination, e.g. "sandbox card •••• 4242"' }),
    ...hold,
  },
  { additionalProperties: false },
);

const WalletAnswer = Type.Object(
  {
    provider: Type.Literal('wallet'),
    livemode: Type.Boolean(),
    ready: Type.Boolean(),
    destination: Type.String({ description: 'The recipient’s verified e-mail address, masked (a•••@example.com)' }),
    status: Status,
    ...hold,
  },
  { additionalProperties: false },
);

const perRecipient = (prefix: string) => (req: FastifyRequest) => `${prefix}:${req.recipient?.recipientId ?? `ip:${req.ip}`}`;

export const payoutDestinationRoutes: FastifyPluginAsyncTypebox<{ destinations: PayoutDestinations }> = async (app, { destinations }) => {
  const startLimit = enforceLimits(app, [{ max: ONBOARDING_STARTS_PER_HOUR, windowMs: HOUR, key: perRecipient('pdo') }]);
  const refreshLimit = enforceLimits(app, [{ max: ONBOARDING_STARTS_PER_HOUR * 12, windowMs: HOUR, key: perRecipient('pdr') }]);
  const conditions =
    'Needs a verified session (403 EMAIL_NOT_VERIFIED) and an accepted agreement in a workspace with partner features on (403 PAYOUT_AGREEMENT_REQUIRED). ' +
    'One current destination per recipient and mode serves every agreement; onboarding is not a payout request.';

  app.post(
    '/api/partner-portal/programs/payouts/card-provider',
    {
      preHandler: startLimit,
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags,
        summary: 'Start or continue card-provider onboarding',
        description:
          'Answers `ready: true` for a ready card destination (nothing changes), otherwise an onboarding `url` (a new single-use link each time). A new card destination replaces the current one; ' +
          'after a destination was ever ready that is a change with a security hold (`hold_until`, PAYOUT_DESTINATION_HOLD_HOURS) and an e-mail notice. ' +
          `\`program\` (affiliate or collaborator) requires an accepted agreement of that kind and is recorded on a new destination. ${conditions} ` +
          `At most ${ONBOARDING_STARTS_PER_HOUR} onboarding starts (card and wallet) per recipient and hour (429).`,
        body: Type.Object(
          { livemode: Livemode, program: Type.Optional(Type.Union([Type.Literal('affiliate'), Type.Literal('collaborator')])) },
          { additionalProperties: false },
        ),
        response: { 200: CardAnswer, ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => destinations.card(requireRecipient(request), request.body),
  );

  app.post(
    '/api/partner-portal/programs/payouts/card-provider/refresh',
    {
      preHandler: refreshLimit,
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags,
        summary: 'Current card destination readiness',
        description: `Asks the provider whether onboarding is complete; an unfinished one gets a new link. No current card destination in this mode: 404. ${conditions}`,
        body: Type.Object({ livemode: Livemode }, { additionalProperties: false }),
        response: { 200: CardAnswer, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => destinations.refreshCard(requireRecipient(request), request.body),
  );

  app.post(
    '/api/partner-portal/programs/payouts/wallet-provider',
    {
      preHandler: startLimit,
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags,
        summary: 'Pay to the wallet of the verified e-mail address',
        description:
          'The destination is the signed-in recipient’s verified e-mail address and nothing else: no address is accepted in the body (any other field, `email` included, is a 400), and an unverified address is 403 EMAIL_NOT_VERIFIED. ' +
          'Ready at once, with its availability time; registering the same address again changes nothing. Replacing a card destination is a change (hold and notice). ' +
          `${conditions}`,
        body: Type.Object(
          { livemode: Livemode, confirm_verified_email: Type.Literal(true, { description: 'Must be true: payouts go to the verified address of this account' }) },
          { additionalProperties: false },
        ),
        response: { 200: WalletAnswer, ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => destinations.wallet(requireRecipient(request), request.body),
  );
};
