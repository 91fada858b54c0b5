import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { invalidUtf8 } from '../../platform/http/json-body.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CheckoutErrors } from './checkout.errors.js';
import { CheckoutEventAnswer, CheckoutEventBody, SignatureHeaders } from './checkout.schemas.js';
import type { CheckoutEvents } from './checkout.service.js';
import { SIGNATURE_HEADER, verifyCheckoutSignature } from './checkout.signature.js';

/**
 * The webhook's own bound, per instance: events booked at once on their own (sales go in group
 * bookings, one at a time, up to 64 sales each), and how many more may wait for a turn. More at
 * once would only take the database pool from the licensing runtime.
 */
export interface CheckoutEventBound {
  concurrency: number;
  waiting: number;
}
export const DEFAULT_CHECKOUT_EVENT_BOUND: CheckoutEventBound = { concurrency: 4, waiting: 500 };

/** An event is a few kilobytes (at most 100 items); this bounds what the waiting events hold. */
const BODY_LIMIT = 256 * 1024;

/** The signature time of each verified request, from the body parser to the handler. */
export type SignedAt = WeakMap<FastifyRequest, number>;

/**
 * The webhook's JSON parser, for the encapsulated instance that holds its route: the signature is
 * checked over the body's bytes as they arrived, before anything is decoded, parsed or recorded;
 * a signed body that is not UTF-8 is then refused as such (400 INVALID_UTF8), never decoded with
 * U+FFFD into a body that no longer matches its signature.
 */
export function registerSignedBodyParser(app: FastifyInstance, secrets: readonly string[], signedAt: SignedAt): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    const check = verifyCheckoutSignature(request.headers[SIGNATURE_HEADER] as string | undefined, raw, secrets);
    if (!check.ok) {
      request.log.warn({ reason: check.reason }, 'checkout event refused: bad signature');
      done(new AppError(CheckoutErrors.WEBHOOK_SIGNATURE_INVALID, `Signature check failed: ${check.reason}`), undefined);
      return;
    }
    if (!isUtf8(raw)) {
      done(invalidUtf8(raw), undefined);
      return;
    }
    signedAt.set(request, check.signedAt);
    try {
      done(null, JSON.parse(raw.toString('utf8')));
    } catch {
      done(new AppError(CommonErrors.VALIDATION_FAILED, 'The body is not valid JSON', { errors: [{ path: 'body', message: 'is not valid JSON' }] }), undefined);
    }
  });
}

/**
 * `POST /api/checkout/events`: the managed checkout reports captured sales and refunds (beyond the
 * contract). Registered only when CHECKOUT_WEBHOOK_SECRET is set, beside registerSignedBodyParser.
 */
export const checkoutRoutes = ({ events, signedAt, bound }: { events: CheckoutEvents; signedAt: SignedAt; bound: CheckoutEventBound }) => {
  return [
    defineRoute({
      method: 'POST',
      url: '/api/checkout/events',
      policy: { auth: 'public' },
      // Authenticated by its signature, so not held to the per-address cap meant for anonymous callers: its own bound applies.
      config: { ownInflightBound: true },
      bodyLimit: BODY_LIMIT,
      schema: {
        tags: ['checkout'],
        summary: 'Report a captured sale or a refund from the managed checkout (signed)',
        description:
          'Authenticated by `Patchbay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with CHECKOUT_WEBHOOK_SECRET (several v1 values allowed during a rotation; 5-minute tolerance), computed over the body\'s bytes as sent; a signed body that is not UTF-8 answers 400 `INVALID_UTF8`. ' +
          'Idempotent by event `id`: the same event again answers `replayed`; another body under a used id is 409 `CHECKOUT_EVENT_ID_REUSED`. ' +
          '`created` must lie between 30 days before and 5 minutes after the signature time (400 `CHECKOUT_EVENT_TIME_OUT_OF_RANGE`). ' +
          'A sale\'s `currency` must be a current ISO 4217 code (400 `CHECKOUT_CURRENCY_UNKNOWN`) and each product\'s currency (422 `CHECKOUT_CURRENCY_MISMATCH`: there is no conversion rule). ' +
          `Not counted in the per-address cap of public routes: each instance books sales in groups (those that arrive while a group is booked go together in the next) and other events at most ${bound.concurrency} at once, and admits ${bound.concurrency + bound.waiting} unanswered events in all; beyond that 429 \`RATE_LIMITED\` with Retry-After. Bodies up to ${BODY_LIMIT / 1024} KiB (413), sent within the body timeout (408).`,
        headers: SignatureHeaders,
        body: CheckoutEventBody,
        response: { 200: CheckoutEventAnswer, ...errorResponses(400, 404, 408, 409, 413, 415, 422, 429, 503) },
      },
      handler: async ({ request }) => {
        if (events.inFlight >= bound.concurrency + bound.waiting) {
          throw new AppError(CommonErrors.RATE_LIMITED, `This instance has ${bound.concurrency + bound.waiting} checkout events in hand; retry after Retry-After`, {
            headers: { 'retry-after': '1' },
          });
        }
        return events.handle(request.body, signedAt.get(request)!);
      },
    }),
  ];
};
