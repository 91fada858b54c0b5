import { defineRoute } from '../../platform/auth/define-route.js';
import { RECIPIENT_SESSION_COOKIE } from '../../platform/auth/policy.js';
import { clearSessionCookie, type SessionCookie, setSessionCookie, type signInLimits } from '../../platform/auth/sign-in.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { SessionAnswer, SessionEnded, SignInBody, SignInLinkAnswer, SignInLinkBody } from './recipients.schemas.js';
import { RECIPIENT_SESSION_TTL_HOURS, type Recipients, SIGN_IN_LINK_TTL_MINUTES } from './recipients.service.js';

const tags = ['partner portal: session'];
// The partner portal's routes read the cookie; the developer side never sees it.
const COOKIE: SessionCookie = { name: RECIPIENT_SESSION_COOKIE, path: '/api/partner-portal', hours: RECIPIENT_SESSION_TTL_HOURS };

export interface RecipientRouteDeps {
  recipients: Recipients;
  linksPerHour: number;
  /** Per address and per client (see index.ts). */
  limits: ReturnType<typeof signInLimits>;
}

export const recipientSessionRoutes = ({ recipients, linksPerHour, limits }: RecipientRouteDeps) => [
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/session/link',
    policy: { auth: 'public' },
    preHandler: limits.link,
    schema: {
      tags,
      summary: 'E-mail a one-time sign-in link',
      description:
        `Sends a sign-in link (single use, valid ${SIGN_IN_LINK_TTL_MINUTES} minutes) to an address that is a partner or has been invited to an agreement. ` +
        `The answer is the same whether or not the address is known. At most ${linksPerHour} links per address and hour (429 RATE_LIMITED).`,
      body: SignInLinkBody,
      response: { 202: SignInLinkAnswer, ...errorResponses(400, 429) },
    },
    handler: async ({ request, reply }) => {
      await recipients.requestSignInLink(request.body.email);
      return reply.code(202).send({ accepted: true, message: 'If the address belongs to a partner, a sign-in link is on its way.' });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/session',
    policy: { auth: 'public' },
    preHandler: limits.exchange,
    schema: {
      tags,
      summary: 'Sign in with a sign-in link’s token',
      description:
        'Uses the link once and opens a partner portal session: an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) for browsers, and the same token in the body for other clients. ' +
        `Sessions last ${RECIPIENT_SESSION_TTL_HOURS} hours. Signing in through a link verifies the e-mail address. An unknown, used or expired token answers 401.`,
      body: SignInBody,
      response: { 201: SessionAnswer, ...errorResponses(400, 401, 429) },
    },
    handler: async ({ request, reply }) => {
      const session = await recipients.signIn(request.body.token);
      setSessionCookie(request, reply, COOKIE, session.token);
      return reply.code(201).send({ token: session.token, expiresAt: session.expiresAt.toISOString(), recipient: session.recipient });
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/partner-portal/session',
    policy: { auth: 'recipient' },
    schema: {
      tags,
      summary: 'Sign out',
      description: 'Ends the session (its token stops working at once) and clears the cookie.',
      response: { 200: SessionEnded, ...errorResponses(401) },
    },
    handler: async ({ reply, recipient }) => {
      await recipients.signOut(recipient);
      clearSessionCookie(reply, COOKIE);
      return { ended: true as const };
    },
  }),
];
