import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { EventAnswer, EventPathParams } from './checkout-connections.schemas.js';
import type { ConnectionEvents } from './events.service.js';

/** An event is a few kilobytes; Stripe's largest objects stay well below this. */
export const EVENT_BODY_LIMIT = 512 * 1024;

/**
 * For the encapsulated instance that holds the provider webhook: every body reaches the handler as
 * the bytes that arrived, because each provider signs its raw body (JSON or not, any charset
 * parameter): the provider's library verifies them before anything is parsed.
 */
export function registerRawBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

const HEADERS = {
  type: 'object',
  properties: {
    'stripe-signature': { type: 'string', maxLength: 2048 },
    'paddle-signature': { type: 'string', maxLength: 2048 },
    'x-signature': { type: 'string', maxLength: 256 },
  },
} as const;

export const eventRoutes = ({ events }: { events: ConnectionEvents }) => [
  defineRoute({
    method: 'POST',
    url: '/api/checkout/:provider/:connectionId/events',
    policy: { auth: 'public' },
    bodyLimit: EVENT_BODY_LIMIT,
    schema: {
      tags: ['checkout connections'],
      summary: 'Receive a Stripe, Paddle or Lemon Squeezy webhook event (the connection’s webhookUrl)',
      description:
        'The URL to paste into the provider’s dashboard. The body is verified as sent with the connection’s signing secret by the provider’s library: Stripe `Stripe-Signature` (`webhooks.constructEvent`, 5 minutes’ tolerance), Paddle `Paddle-Signature` (`webhooks.unmarshal`, 5 seconds), Lemon Squeezy `X-Signature` (hex HMAC-SHA256 of the body). ' +
        'A missing or wrong signature answers 400 `CHECKOUT_CONNECTION_SIGNATURE_INVALID` and records nothing; so does a body signed with another connection’s secret. An unknown connection, or one of another provider, is 404. A disabled connection answers 409 `CHECKOUT_CONNECTION_DISABLED` (the provider retries). ' +
        'Events are idempotent by the provider’s event id: the same event again answers `replayed`, another body under a used id is 409 `CHECKOUT_CONNECTION_EVENT_ID_REUSED`. ' +
        'An event that cannot be booked (an unmapped product, an unknown customer, a refund of an unknown sale) answers 200 `failed` with the reason and books nothing; it is logged for re-processing. ' +
        `Bodies up to ${EVENT_BODY_LIMIT / 1024} KiB (413); a body that is not UTF-8 is 400 \`INVALID_UTF8\`. Held to the per-address cap of public routes (429 with Retry-After; providers retry).`,
      params: EventPathParams,
      headers: HEADERS,
      // Documents the body; it reaches the handler as bytes (any object passes), verified there.
      body: Type.Object({}, { additionalProperties: true, description: 'The provider’s event as the provider sends it (JSON, signed over its bytes)' }),
      response: { 200: EventAnswer, ...errorResponses(400, 404, 408, 409, 413, 429, 503) },
    },
    handler: ({ request }) => events.receive(request.params.provider, request.params.connectionId, request.body as unknown as Buffer, request.headers),
  }),
];
