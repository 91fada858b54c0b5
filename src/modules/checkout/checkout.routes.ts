import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CheckoutErrors } from './checkout.errors.js';
import { CheckoutEventAnswer, CheckoutEventBody } from './checkout.schemas.js';
import type { CheckoutEvents } from './checkout.service.js';
import { SIGNATURE_HEADER, verifyCheckoutSignature } from './checkout.signature.js';

/**
 * `POST /api/checkout/events`: the managed checkout reports captured sales and refunds (beyond the
 * contract). Registered only when CHECKOUT_WEBHOOK_SECRET is set. The signature is checked on the
 * raw body before anything is parsed or recorded.
 */
export const checkoutRoutes: FastifyPluginAsyncTypebox<{ events: CheckoutEvents; secrets: string[] }> = async (app, { events, secrets }) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const raw = body as string;
    const check = verifyCheckoutSignature(request.headers[SIGNATURE_HEADER] as string | undefined, raw, secrets);
    if (!check.ok) {
      request.log.warn({ reason: check.reason }, 'checkout event refused: bad signature');
      done(new AppError(CheckoutErrors.WEBHOOK_SIGNATURE_INVALID, `Signature check failed: ${check.reason}`), undefined);
      return;
    }
    try {
      done(null, JSON.parse(raw));
    } catch {
      done(new AppError(CommonErrors.VALIDATION_FAILED, 'The body is not valid JSON', { errors: [{ path: 'body', message: 'is not valid JSON' }] }), undefined);
    }
  });

  app.post(
    '/api/checkout/events',
    {
      config: { policy: { auth: 'public' } },
      schema: {
        tags: ['checkout'],
        summary: 'Report a captured sale or a refund from the managed checkout (signed)',
        description:
          'Authenticated by `Patchbay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with CHECKOUT_WEBHOOK_SECRET (several v1 values allowed during a rotation; 5-minute tolerance). Idempotent by event `id`.',
        headers: { type: 'object', properties: { [SIGNATURE_HEADER]: { type: 'string' } } },
        body: CheckoutEventBody,
        response: { 200: CheckoutEventAnswer, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => events.handle(request.body),
  );
};
