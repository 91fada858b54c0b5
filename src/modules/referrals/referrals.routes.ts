import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { REFERRAL_PARAM, type ReferralLinks } from './referrals.service.js';

const tags = ['partner referrals'];

/** Referral link requests one client address may make per minute, unless configured. */
export const DEFAULT_REFERRALS_PER_MINUTE = 60;

export const referralRoutes: FastifyPluginAsyncTypebox<{ links: ReferralLinks; perMinute: number }> = async (app, { links, perMinute }) => {
  const limit = enforceLimits(app, [{ max: perMinute, windowMs: 60_000, key: (req) => `ref:ip:${req.ip}` }]);

  app.get(
    '/api/partner-referrals/:code',
    {
      // On every answer, the 404 and 429 too: nothing here may be cached or leak the link onwards.
      onRequest: async (_request, reply) => {
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      },
      preHandler: limit,
      config: { policy: { auth: 'public' } },
      schema: {
        tags,
        summary: 'Follow an affiliate’s referral link',
        description:
          `Public and rate-limited per client address (429 \`RATE_LIMITED\` with Retry-After). An active affiliate agreement answers 303 to the storefront: the product’s page when \`product\` names an active product of the agreement’s workspace that has one, else the workspace’s storefront, else this service’s home page; the existing query of that address is kept and \`${REFERRAL_PARAM}\` is added, a signed value naming the agreement and the visit time that the checkout brings back with a captured sale (a click is not proof of a sale: a sale counts only within the agreement’s attribution window). The visit is recorded (durable within a second). An agreement that is not active (pending, accepted, paused or ended) answers the same 303 without \`${REFERRAL_PARAM}\` and records nothing. An unknown \`product\` is ignored. HEAD answers the same redirect and records no visit. Unknown codes, and codes of a workspace whose partner programs are off, answer 404 \`REFERRAL_NOT_FOUND\`. Answers carry \`Cache-Control: no-store\` and \`Referrer-Policy: no-referrer\`.`,
        params: Type.Object({ code: Type.String({ minLength: 1, maxLength: 100, description: 'The agreement’s `referral_code`' }) }, { additionalProperties: false }),
        querystring: Type.Object(
          { product: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A product id of the agreement’s workspace: its storefront page is the destination' })) },
          { additionalProperties: false },
        ),
        response: {
          303: {
            description: `Redirect to the storefront (with \`${REFERRAL_PARAM}\` when the agreement is active)`,
            type: 'null',
            headers: {
              type: 'object',
              properties: {
                location: { type: 'string', description: `The storefront address, with \`${REFERRAL_PARAM}\` when the agreement is active` },
                'cache-control': { type: 'string', description: 'no-store' },
                'referrer-policy': { type: 'string', description: 'no-referrer' },
              },
            },
          },
          ...errorResponses(400, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const location = await links.resolve({
        code: request.params.code,
        productId: request.query.product ?? null,
        address: request.ip,
        userAgent: request.headers['user-agent'],
        recordVisit: request.method !== 'HEAD',
      });
      return reply.redirect(location, 303);
    },
  );
};
