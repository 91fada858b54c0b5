import type { preHandlerAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { PartnerPortal } from './partner-portal.service.js';
import {
  AcceptAnswer,
  AcceptBody,
  Agreement,
  AgreementList,
  ConsentAnswer,
  ConsentBody,
  CreateAnswer,
  CreateBody,
  IdParams,
  InvitationTokenParams,
  InvitationView,
  InviteAnswer,
  InviteBody,
  PatchBody,
  PortalProgramList,
  ReviseAnswer,
  StatusBody,
} from './partners.schemas.js';
import { MANAGED_LIVE_POLICY_VERSION, type PartnerPrograms } from './partners.service.js';

const devTags = ['partner programs'];
const portalTags = ['partner portal: programs'];
const view = { auth: 'account', permission: 'partners.view', allProducts: true } as const;
const manage = { auth: 'account', permission: 'partners.manage', allProducts: true } as const;

/** The developer side: agreements, their terms, invitations and the owner's live consent. */
export const programRoutes = ({ programs }: { programs: PartnerPrograms }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/partners/programs',
    policy: view,
    schema: {
      tags: devTags,
      summary: 'Partner program agreements of the workspace',
      description: 'Newest first, each with its status, accepted and proposed terms (every version kept), invitation state and consent state.',
      response: { 200: AgreementList, ...errorResponses(401, 403, 404) },
    },
    handler: async ({ scope }) => ({ programs: await programs.list(scope) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/partners/programs',
    policy: manage,
    schema: {
      tags: devTags,
      summary: 'Propose an agreement and invite its recipient',
      description:
        'Creates the agreement (status `pending` until the recipient accepts), its first terms (`terms_version` 1) and an invitation. Products must be the workspace’s (404) and active (409 PRODUCT_NOT_ELIGIBLE); collaborator rates on one product cannot exceed 10000 bps together (409 COLLABORATOR_CAPACITY_EXCEEDED, naming the product). `effective_from` cannot be in the past. Invitation limits apply (429).',
      body: CreateBody,
      response: { 201: CreateAnswer, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async ({ request, reply, scope }) => reply.code(201).send(await programs.create(scope, request.body, request.ip)),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/partners/programs/:id',
    policy: manage,
    schema: {
      tags: devTags,
      summary: 'Revise the proposal',
      description:
        'Changed terms make a new `terms_version` and a new invitation to it (older links stop working); the accepted terms stay in force until the recipient accepts the revision. Every version stays readable in `terms_history`. `name` alone changes no terms. An ended agreement answers 409 AGREEMENT_ENDED.',
      params: IdParams,
      body: PatchBody,
      response: { 200: ReviseAnswer, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: ({ request, scope }) => programs.revise(scope, request.params.id, request.body),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/partners/programs/:id/status',
    policy: manage,
    schema: {
      tags: devTags,
      summary: 'Change the agreement status',
      description:
        'Per the status table: `active` needs an acceptance (409 AGREEMENT_NOT_ACCEPTED); active ↔ paused; active or paused → ended; an ended agreement cannot be resumed (409 AGREEMENT_ENDED). The same status again changes nothing. Every change is audited with its actor.',
      params: IdParams,
      body: StatusBody,
      response: { 200: Agreement, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, scope }) => programs.setStatus(scope, request.params.id, request.body.status),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/partners/programs/:id/invite',
    policy: manage,
    schema: {
      tags: devTags,
      summary: 'Send a replacement invitation',
      description:
        'A new invitation to the current proposal; older pending links stop working. Limits: a resend cooldown per agreement (429 INVITE_COOLDOWN) and a daily number per workspace (429 INVITE_LIMIT_REACHED), both with Retry-After.',
      params: IdParams,
      body: InviteBody,
      response: { 200: InviteAnswer, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: ({ request, scope }) => programs.reinvite(scope, request.params.id, request.body?.send_email ?? true),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/partners/programs/:id/live-consent',
    policy: view,
    schema: {
      tags: devTags,
      summary: 'Developer owner’s live consent',
      description: `Only the workspace owner (a teammate, even with \`*\`, gets 403 OWNER_CONSENT_REQUIRED). \`terms_version\` must be the accepted one and \`policy_version\` ${MANAGED_LIVE_POLICY_VERSION} (409 otherwise, naming the current ones). Live terms are consented when both parties consented to the same versions; consent records are append-only.`,
      params: IdParams,
      body: ConsentBody,
      response: { 200: ConsentAnswer, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, scope }) => programs.developerConsent(scope, request.params.id, request.body, request.ip),
  }),
];

/** The partner portal's side: the recipient's agreements, invitations (the token is the credential) and live consent. */
export const portalProgramRoutes = ({ portal, tokenLimit }: { portal: PartnerPortal; tokenLimit: preHandlerAsyncHookHandler }) => [
  defineRoute({
    method: 'GET',
    url: '/api/partner-portal/programs',
    policy: { auth: 'recipient' },
    schema: {
      tags: portalTags,
      summary: 'The signed-in recipient’s agreements',
      description: 'Across workspaces; agreements of workspaces whose partner features are off are not listed.',
      response: { 200: PortalProgramList, ...errorResponses(401) },
    },
    handler: async ({ recipient }) => ({ programs: await portal.list(recipient) }),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/partner-portal/programs/invitations/:token',
    policy: { auth: 'public' },
    preHandler: tokenLimit,
    schema: {
      tags: portalTags,
      summary: 'An invitation and its displayed terms',
      description:
        'The token (from the invitation link’s fragment) is the credential. Unknown, revoked and expired tokens answer the same 404. Answers carry `Cache-Control: no-store` and `Referrer-Policy: no-referrer`; the token is never logged.',
      params: InvitationTokenParams,
      response: { 200: InvitationView, ...errorResponses(404, 429) },
    },
    handler: ({ request, reply }) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      return portal.invitation(request.params.token);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/programs/invitations/accept',
    policy: { auth: 'recipient' },
    schema: {
      tags: portalTags,
      summary: 'Accept an invitation’s terms',
      description:
        'Needs a session whose verified e-mail is the invited one (403 otherwise). `preview_terms_version` and `payout_policy_version` must be the invitation’s (409 naming the current ones). Concurrent accepts make one acceptance. Acceptance is not live payment consent.',
      body: AcceptBody,
      response: { 200: AcceptAnswer, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, reply, recipient }) => {
      reply.header('cache-control', 'no-store');
      return portal.accept(recipient, request.body);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/partner-portal/programs/:id/live-consent',
    policy: { auth: 'recipient' },
    schema: {
      tags: portalTags,
      summary: 'Recipient’s live consent',
      description: `To the accepted terms (\`terms_version\`) under the managed-live policy \`${MANAGED_LIVE_POLICY_VERSION}\` (409 otherwise, naming the current ones). An agreement of someone else answers 404.`,
      params: IdParams,
      body: ConsentBody,
      response: { 200: ConsentAnswer, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, recipient }) => portal.consent(recipient, request.params.id, request.body, request.ip),
  }),
];
