import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { INVITATION_LINK_TTL_HOURS } from './accounts.emails.js';
import { ChangeMemberBody, InviteMemberBody, MemberIdParams, MemberList, MemberListQuery, MemberRemoved, MemberRow } from './members.schemas.js';
import type { Members } from './members.service.js';

const tags = ['console: team'];
// The team is managed by people: an API token (a script) may not invite, change or remove members.
const policy = { auth: 'account', permission: 'members.manage', apiTokens: false } as const;
const LIMITS =
  'A member grants only permissions and products they hold themselves (403 GRANT_EXCEEDS_OWN_ACCESS), and changes or removes only members whose access is within their own; the owner cannot be removed or changed (409 OWNER_PROTECTED).';

export const memberRoutes = ({ members }: { members: Members }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/members',
    policy,
    schema: {
      tags,
      summary: 'The workspace’s members',
      description: 'Paged, the owner first, then in the order they were invited. `products` is `all` or the assigned product ids.',
      querystring: MemberListQuery,
      response: { 200: MemberList, ...errorResponses(400, 401, 403) },
    },
    handler: ({ request, scope }) => members.list(scope, request.query),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/members',
    policy,
    schema: {
      tags,
      summary: 'Invite a teammate',
      description:
        `Makes the address a member with these permissions and products (the account is created if the address has none) and e-mails a console sign-in link valid ${INVITATION_LINK_TTL_HOURS} hours; \`joined_at\` stays null until the member signs in. ` +
        `An address that already is a member answers 409 MEMBER_EXISTS; a product id outside the caller's assignment 422 UNKNOWN_PRODUCT. ${LIMITS} Audited.`,
      body: InviteMemberBody,
      response: { 201: MemberRow, ...errorResponses(400, 401, 403, 409, 422) },
    },
    handler: async ({ request, reply, scope }) => reply.code(201).send(await members.invite(scope, request.body)),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/members/:memberId',
    policy,
    schema: {
      tags,
      summary: 'Change a member’s permissions or products',
      description: `What is sent replaces what the member had (\`products: "all"\` or a list of ids). Takes effect on the member's next request, whatever credential they use. ${LIMITS} Audited.`,
      params: MemberIdParams,
      body: ChangeMemberBody,
      response: { 200: MemberRow, ...errorResponses(400, 401, 403, 404, 409, 422) },
    },
    handler: ({ request, scope }) => members.update(scope, request.params.memberId, request.body),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/developer/members/:memberId',
    policy,
    schema: {
      tags,
      summary: 'Remove a member',
      description: `Removes the membership with its product assignment and the member's API tokens; their JWTs and console sessions stop reaching this workspace at once (the account and its other workspaces stay). ${LIMITS} Audited.`,
      params: MemberIdParams,
      response: { 200: MemberRemoved, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, scope }) => members.remove(scope, request.params.memberId),
  }),
];
