import { Type } from '@sinclair/typebox';

// Schemas of the partner portal's payout destination routes.

const Livemode = Type.Boolean({ description: 'false: the built-in sandbox provider; true: the configured live provider (503 PAYOUT_PROVIDER_NOT_CONFIGURED without one)' });
const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const Status = Type.Union(['onboarding', 'ready', 'replaced', 'disabled'].map((s) => Type.Literal(s)));
const hold = {
  hold_until: { ...Timestamp, description: 'Set when this destination changed a previously ready one: no transfer goes to it before this time' },
  available_at: { ...Timestamp, description: 'When transfers may go to the destination: the later of the hold and the provider’s availability (null while onboarding)' },
};

export const CardAnswer = Type.Object(
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

export const WalletAnswer = Type.Object(
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

export const CardBody = Type.Object(
  { livemode: Livemode, program: Type.Optional(Type.Union([Type.Literal('affiliate'), Type.Literal('collaborator')])) },
  { additionalProperties: false },
);
export const RefreshBody = Type.Object({ livemode: Livemode }, { additionalProperties: false });
export const WalletBody = Type.Object(
  { livemode: Livemode, confirm_verified_email: Type.Literal(true, { description: 'Must be true: payouts go to the verified address of this account' }) },
  { additionalProperties: false },
);
