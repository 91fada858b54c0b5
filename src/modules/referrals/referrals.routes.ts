import type { preHandlerAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { Db } from '../../platform/db/database.js';
import { ReferralParams, ReferralQuery, ReferralRedirect, ReferralVisits, VisitsParams, VisitsQuery } from './referrals.schemas.js';
import { REFERRAL_PARAM, type ReferralLinks, recipientVisits } from './referrals.service.js';

const tags = ['partner referrals'];

export const referralRoutes = ({ db, links, limit }: { db: Db; links: ReferralLinks; limit: preHandlerAsyncHookHandler }) => [
  defineRoute({
    method: 'GET',
    url: '/api/partner-referrals/:code',
    policy: { auth: 'public' },
    // On every answer, the 404 and 429 too: nothing here may be cached or leak the link onwards.
    onRequest: async (_request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    },
    preHandler: limit,
    schema: {
      tags,
      summary: 'Follow an affiliate’s referral link',
      description:
        `Public and rate-limited per client address (429 \`RATE_LIMITED\` with Retry-After). An active affiliate agreement answers 303 to the storefront: the product’s page when \`product\` names an active product of the agreement’s workspace that has one, else the workspace’s storefront, else this service’s home page; the existing query of that address is kept and \`${REFERRAL_PARAM}\` is added, a signed value naming the agreement and the visit time that the checkout brings back with a captured sale (a click is not proof of a sale: a sale counts only within the agreement’s attribution window). The visit is recorded (durable within a second). An agreement that is not active (pending, accepted, paused or ended) answers the same 303 without \`${REFERRAL_PARAM}\` and records nothing. An unknown \`product\` is ignored. HEAD answers the same redirect and records no visit. Unknown codes, and codes of a workspace whose partner programs are off, answer 404 \`REFERRAL_NOT_FOUND\`. What a link leads to is kept by each instance of the service for up to a second: a change of the agreement’s status, its workspace’s storefront or partner programs switch, or the product is followed at once by the instance that made it and within a second by the others. Answers carry \`Cache-Control: no-store\` and \`Referrer-Policy: no-referrer\`.`,
      params: ReferralParams,
      querystring: ReferralQuery,
      response: { 303: ReferralRedirect, ...errorResponses(400, 404, 429) },
    },
    handler: async ({ request, reply }) => {
      const location = await links.resolve({
        code: request.params.code,
        productId: request.query.product ?? null,
        address: request.ip,
        userAgent: request.headers['user-agent'],
        recordVisit: request.method !== 'HEAD',
      });
      return reply.redirect(location, 303);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/partner-portal/programs/:id/referral-visits',
    policy: { auth: 'recipient' },
    schema: {
      tags: ['partner portal: programs'],
      summary: 'Visits of the signed-in partner’s referral link',
      description:
        'Counts per UTC day for the last `days` days (30 unless asked, at most 90; today included, days without visits answer 0) and all-time totals, of visits recorded when the link was followed (a HEAD request, or a link of an agreement that was not active, records none). Visits by clients that name themselves bots, crawlers or link previews are counted apart as well as in the total. Counts only: nothing of who visited is answered. Another recipient’s agreement, or one of a workspace whose partner programs are off, answers 404 `NOT_FOUND`. A visit is counted within about a second of the redirect.',
      params: VisitsParams,
      querystring: VisitsQuery,
      response: { 200: ReferralVisits, ...errorResponses(400, 401, 404) },
    },
    handler: ({ request, recipient }) => recipientVisits(db, recipient, request.params.id, request.query.days ?? 30),
  }),
];
