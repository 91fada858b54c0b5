import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const specs = {
  CHECKOUT_CONNECTION_SIGNATURE_INVALID: {
    status: 400,
    title: 'The provider’s signature is missing or does not match',
    description:
      '`POST /api/checkout/{provider}/{connectionId}/events` whose `Stripe-Signature`, `Paddle-Signature` or `X-Signature` is missing, malformed, stale or made with another secret than this connection’s; nothing is recorded (the provider retries)',
  },
  CHECKOUT_CONNECTION_EVENT_UNREADABLE: {
    status: 400,
    title: 'The signed body is not an event of this provider',
    description: 'a correctly signed body that is not JSON or lacks the provider’s event id and type; nothing is recorded',
  },
  CHECKOUT_CONNECTION_EVENT_ID_REUSED: {
    status: 409,
    title: 'This event id was already received with a different body',
    description: 'a provider event id this connection received before, now with another body; the first event stands and nothing is recorded (the same body again answers `replayed`)',
  },
  CHECKOUT_CONNECTION_DISABLED: {
    status: 409,
    title: 'The checkout connection is disabled',
    description: 'a correctly signed event for a connection that is switched off; nothing is recorded, and the provider’s retries are booked once it is enabled again',
  },
  CHECKOUT_CONNECTION_EVENT_NOT_FAILED: {
    status: 409,
    title: 'Only a failed event can be re-processed',
    description: '`POST …/events/{eventId}/reprocess` for an event that was recorded, replayed or ignored',
  },
} as const satisfies Record<string, ErrorSpec>;
export const ConnectionErrors = defineErrors(specs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof specs> {}
}
