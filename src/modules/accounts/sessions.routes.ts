import { defineRoute } from '../../platform/auth/define-route.js';
import { DEVELOPER_SESSION_COOKIE } from '../../platform/auth/policy.js';
import { clearSessionCookie, type SessionCookie, setSessionCookie, type signInLimits } from '../../platform/auth/sign-in.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { SIGN_IN_LINK_TTL_MINUTES } from './accounts.emails.js';
import { SessionEnded, SessionOpened, SessionState, SessionWorkspaceHeaders, SignInBody, SignInLinkAccepted, SignInLinkBody } from './sessions.schemas.js';
import { type ConsoleSessions, DEVELOPER_SESSION_TTL_HOURS } from './sessions.service.js';

const tags = ['console: session'];
// Every developer route reads the cookie; the partner portal's routes never see it.
const COOKIE_PATH = '/api/developer';

export interface SessionRouteDeps {
  sessions: ConsoleSessions;
  linksPerHour: number;
  limits: ReturnType<typeof signInLimits>;
}

const COOKIE: SessionCookie = { name: DEVELOPER_SESSION_COOKIE, path: COOKIE_PATH, hours: DEVELOPER_SESSION_TTL_HOURS };

export const sessionRoutes = ({ sessions, linksPerHour, limits }: SessionRouteDeps) => [
  defineRoute({
    method: 'POST',
    url: '/api/developer/session/link',
    policy: { auth: 'public' },
    preHandler: limits.link,
    schema: {
      tags,
      summary: 'E-mail a one-time console sign-in link',
      description:
        `Sends a sign-in link to \`PUBLIC_BASE_URL/console/sign-in#token=dsl_…\` (single use, valid ${SIGN_IN_LINK_TTL_MINUTES} minutes) when the address belongs to a member of some workspace. ` +
        `The answer is the same whether or not it does. At most ${linksPerHour} requests per address and ${linksPerHour * 4} per client address an hour (429 RATE_LIMITED).`,
      body: SignInLinkBody,
      response: { 202: SignInLinkAccepted, ...errorResponses(400, 429) },
    },
    handler: async ({ request, reply }) => {
      await sessions.requestSignInLink(request.body.email);
      return reply.code(202).send({ accepted: true, message: 'If the address belongs to a workspace member, a sign-in link is on its way.' });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/session',
    policy: { auth: 'public' },
    preHandler: limits.exchange,
    schema: {
      tags,
      summary: 'Sign in with a sign-in link’s token',
      description:
        'Uses the link once (of concurrent exchanges one succeeds) and opens a console session: an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) for browsers, and the same token in the body for scripts (`Authorization: Bearer pds_…`). ' +
        `Sessions last ${DEVELOPER_SESSION_TTL_HOURS} hours. Signing in verifies the address and marks pending invitations joined. An unknown, used or expired token answers 401.`,
      body: SignInBody,
      response: { 201: SessionOpened, ...errorResponses(400, 401, 429) },
    },
    handler: async ({ request, reply }) => {
      const session = await sessions.signIn(request.body.token);
      setSessionCookie(request, reply, COOKIE, session.token);
      return reply.code(201).send({ ...session, expiresAt: session.expiresAt.toISOString() });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/session',
    policy: { auth: 'developer' },
    schema: {
      tags,
      summary: 'Who is signed in, and what they may use',
      description:
        'The session’s account and workspaces, and in the selected workspace (`X-Workspace-Id`, or the only one) the owner flag, every permission held and the product assignment, so the console shows only what the member may use. ' +
        'A workspace the account is not a member of answers 403 WORKSPACE_ACCESS_DENIED.',
      headers: SessionWorkspaceHeaders,
      response: { 200: SessionState, ...errorResponses(400, 401, 403) },
    },
    handler: ({ request, developer }) => sessions.describe(developer, request.headers['x-workspace-id']),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/developer/session',
    policy: { auth: 'developer' },
    schema: {
      tags,
      summary: 'Sign out',
      description: 'Ends the session (its token stops working at once) and clears the cookie.',
      response: { 200: SessionEnded, ...errorResponses(401, 403) },
    },
    handler: async ({ reply, developer }) => {
      await sessions.signOut(developer);
      clearSessionCookie(reply, COOKIE);
      return { ended: true as const };
    },
  }),
];
