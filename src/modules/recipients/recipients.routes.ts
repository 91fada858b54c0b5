import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { RECIPIENT_SESSION_COOKIE, requireRecipient } from '../../platform/auth/policy.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { normaliseEmail, RECIPIENT_SESSION_TTL_HOURS, type Recipients, SIGN_IN_LINK_TTL_MINUTES } from './recipients.service.js';

const tags = ['partner portal: session'];
const MINUTE = 60_000;

const SessionAnswer = Type.Object(
  {
    token: Type.String({ description: 'Bearer token for non-browser clients (`Authorization: Bearer pps_…`); browsers use the HttpOnly cookie set with this answer' }),
    expiresAt: Type.String({ format: 'date-time' }),
    recipient: Type.Object({ id: Type.Integer(), email: Type.String(), emailVerified: Type.Boolean() }),
  },
  { additionalProperties: false },
);

export const recipientSessionRoutes: FastifyPluginAsyncTypebox<{ recipients: Recipients; linksPerHour: number }> = async (app, { recipients, linksPerHour }) => {
  const linkLimits = enforceLimits(app, [
    { max: linksPerHour, windowMs: 60 * MINUTE, key: (req) => `psl:email:${normaliseEmail(String((req.body as { email?: unknown } | undefined)?.email ?? ''))}` },
    { max: linksPerHour * 4, windowMs: 60 * MINUTE, key: (req) => `psl:ip:${req.ip}` },
  ]);
  const signInLimit = enforceLimits(app, [{ max: 30, windowMs: MINUTE, key: (req) => `pss:ip:${req.ip}` }]);

  app.post(
    '/api/partner-portal/session/link',
    {
      preHandler: linkLimits,
      config: { policy: { auth: 'public' } },
      schema: {
        tags,
        summary: 'E-mail a one-time sign-in link',
        description:
          `Sends a sign-in link (single use, valid ${SIGN_IN_LINK_TTL_MINUTES} minutes) to an address that is a partner or has been invited to an agreement. ` +
          `The answer is the same whether or not the address is known. At most ${linksPerHour} links per address and hour (429 RATE_LIMITED).`,
        body: Type.Object({ email: Type.String({ format: 'email', maxLength: 254 }) }, { additionalProperties: false }),
        response: { 202: Type.Object({ accepted: Type.Literal(true), message: Type.String() }), ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      await recipients.requestSignInLink(request.body.email);
      return reply.code(202).send({ accepted: true, message: 'If the address belongs to a partner, a sign-in link is on its way.' });
    },
  );

  app.post(
    '/api/partner-portal/session',
    {
      preHandler: signInLimit,
      config: { policy: { auth: 'public' } },
      schema: {
        tags,
        summary: 'Sign in with a sign-in link’s token',
        description:
          'Uses the link once and opens a partner portal session: an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) for browsers, and the same token in the body for other clients. ' +
          `Sessions last ${RECIPIENT_SESSION_TTL_HOURS} hours. Signing in through a link verifies the e-mail address. An unknown, used or expired token answers 401.`,
        body: Type.Object({ token: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
        response: { 201: SessionAnswer, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const session = await recipients.signIn(request.body.token);
      reply.setCookie(RECIPIENT_SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
        path: '/api/partner-portal',
        maxAge: RECIPIENT_SESSION_TTL_HOURS * 3600,
      });
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ token: session.token, expiresAt: session.expiresAt.toISOString(), recipient: session.recipient });
    },
  );

  app.delete(
    '/api/partner-portal/session',
    {
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags,
        summary: 'Sign out',
        description: 'Ends the session (its token stops working at once) and clears the cookie.',
        response: { 200: Type.Object({ ended: Type.Literal(true) }), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      await recipients.signOut(requireRecipient(request));
      reply.clearCookie(RECIPIENT_SESSION_COOKIE, { path: '/api/partner-portal' });
      return { ended: true as const };
    },
  );
};
