import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireRecipient, requireScope } from '../../platform/auth/policy.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { PartnerPortal } from './partner-portal.service.js';
import { MANAGED_LIVE_POLICY_VERSION, MAX_BPS, type PartnerPrograms } from './partners.service.js';

const devTags = ['partner programs'];
const portalTags = ['partner portal: programs'];
const Bps = Type.Integer({ minimum: 0, maximum: MAX_BPS, description: 'basis points (0–10000)' });
const Id = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false });
const ProductRates = Type.Array(Type.Object({ product_id: Type.Integer({ minimum: 1, maximum: 2147483647 }), rate_bps: Bps }, { additionalProperties: false }), { maxItems: 200 });
const termsFields = {
  rate_bps: Bps,
  product_rates: ProductRates,
  attribution_window_days: Type.Integer({ minimum: 1, maximum: 365 }),
  include_reseller_sales: Type.Boolean(),
  effective_from: Type.String({ format: 'date-time', description: 'When the terms take effect; never in the past' }),
};
const CreateBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('affiliate'), Type.Literal('collaborator')]),
    recipient_email: Type.String({ format: 'email', maxLength: 254 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    rate_bps: Bps,
    product_rates: Type.Optional(termsFields.product_rates),
    attribution_window_days: Type.Optional(termsFields.attribution_window_days),
    include_reseller_sales: Type.Optional(termsFields.include_reseller_sales),
    effective_from: Type.Optional(termsFields.effective_from),
    send_email: Type.Optional(Type.Boolean({ description: 'Queue the invitation e-mail (default true)' })),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    rate_bps: Type.Optional(Bps),
    product_rates: Type.Optional(termsFields.product_rates),
    attribution_window_days: Type.Optional(termsFields.attribution_window_days),
    include_reseller_sales: Type.Optional(termsFields.include_reseller_sales),
    effective_from: Type.Optional(termsFields.effective_from),
    send_email: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const ConsentBody = Type.Object(
  {
    accept: Type.Literal(true),
    terms_version: Type.Integer({ minimum: 1 }),
    policy_version: Type.String({ maxLength: 100, description: `The current managed-live policy: ${MANAGED_LIVE_POLICY_VERSION}` }),
  },
  { additionalProperties: false },
);

const Terms = Type.Object(
  {
    terms_version: Type.Integer(),
    rate_bps: Type.Integer(),
    product_rates: Type.Array(Type.Object({ product_id: Type.Integer(), rate_bps: Type.Integer() })),
    attribution_window_days: Type.Integer(),
    include_reseller_sales: Type.Boolean(),
    effective_from: Type.String({ format: 'date-time' }),
    payout_policy_version: Type.String(),
  },
  { additionalProperties: true },
);
const Invitation = Type.Object(
  {
    status: Type.String({ description: 'pending, accepted, revoked or expired' }),
    terms_version: Type.Integer(),
    expires_at: Type.String({ format: 'date-time' }),
    email_queued: Type.Boolean(),
  },
  { additionalProperties: true },
);
const InvitationResult = Type.Object(
  {
    status: Type.Literal('pending'),
    terms_version: Type.Integer(),
    expires_at: Type.String({ format: 'date-time' }),
    email_queued: Type.Boolean(),
    delivery: Type.Union([Type.Literal('queued'), Type.Literal('not_sent')]),
    invitation_link: Type.Optional(Type.String({ description: 'Only with send_email false: deliver it yourself; it is shown once and never stored' })),
  },
  { additionalProperties: false },
);
const ReferralFields = {
  referral_code: Type.Union([Type.String(), Type.Null()], { description: 'Affiliates: the referral link’s code (never the invitation token); null for collaborators' }),
  referral_url: Type.Union([Type.String(), Type.Null()], { description: 'Affiliates: the public referral link, GET /api/partner-referrals/{code}; null for collaborators' }),
};
const Agreement = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String(),
    name: Type.String(),
    recipient_email: Type.String(),
    status: Type.String({ description: 'pending (not accepted yet), accepted, active, paused, ended' }),
    ...ReferralFields,
    terms_version: Type.Union([Type.Integer(), Type.Null()], { description: 'the accepted terms in force' }),
    accepted_terms_version: Type.Union([Type.Integer(), Type.Null()]),
    proposed_terms_version: Type.Integer(),
    revision_pending: Type.Boolean(),
    policy_version: Type.String(),
    payout_policy_version: Type.String(),
    accepted_terms: Type.Union([Terms, Type.Null()]),
    proposed_terms: Type.Union([Terms, Type.Null()]),
    terms_history: Type.Array(Terms),
    accepted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    invitation: Type.Union([Invitation, Type.Null()]),
    consent: Type.Object(
      {
        policy_version: Type.String(),
        developer: Type.Union([Type.Object({ terms_version: Type.Integer(), consented_at: Type.String() }), Type.Null()]),
        recipient: Type.Union([Type.Object({ terms_version: Type.Integer(), consented_at: Type.String() }), Type.Null()]),
        live_terms_consented: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
const ConsentAnswer = Type.Object(
  {
    agreement_id: Type.Integer(),
    accepted_party: Type.Union([Type.Literal('developer'), Type.Literal('recipient')]),
    terms_version: Type.Integer(),
    policy_version: Type.String(),
    consented_at: Type.String({ format: 'date-time' }),
    live_terms_consented: Type.Boolean({ description: 'Both parties consented to these terms under this policy' }),
  },
  { additionalProperties: false },
);

const view = { auth: 'account' as const, permission: 'partners.view' as const, allProducts: true };
const manage = { auth: 'account' as const, permission: 'partners.manage' as const, allProducts: true };

export const partnerRoutes: FastifyPluginAsyncTypebox<{ programs: PartnerPrograms; portal: PartnerPortal }> = async (app, { programs, portal }) => {
  app.get(
    '/api/developer/partners/programs',
    {
      config: { policy: view },
      schema: {
        tags: devTags,
        summary: 'Partner program agreements of the workspace',
        description: 'Newest first, each with its status, accepted and proposed terms (every version kept), invitation state and consent state.',
        response: { 200: Type.Object({ programs: Type.Array(Agreement) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({ programs: await programs.list(requireScope(request)) }),
  );

  app.post(
    '/api/developer/partners/programs',
    {
      config: { policy: manage },
      schema: {
        tags: devTags,
        summary: 'Propose an agreement and invite its recipient',
        description:
          'Creates the agreement (status `pending` until the recipient accepts), its first terms (`terms_version` 1) and an invitation. Products must be the workspace’s (404) and active (409 PRODUCT_NOT_ELIGIBLE); collaborator rates on one product cannot exceed 10000 bps together (409 COLLABORATOR_CAPACITY_EXCEEDED, naming the product). `effective_from` cannot be in the past. Invitation limits apply (429).',
        body: CreateBody,
        response: {
          201: Type.Object({ agreement: Agreement, proposal: Type.Object({ terms_version: Type.Integer() }), invitation: InvitationResult }),
          ...errorResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await programs.create(requireScope(request), request.body, request.ip)),
  );

  app.patch(
    '/api/developer/partners/programs/:id',
    {
      config: { policy: manage },
      schema: {
        tags: devTags,
        summary: 'Revise the proposal',
        description:
          'Changed terms make a new `terms_version` and a new invitation to it (older links stop working); the accepted terms stay in force until the recipient accepts the revision. Every version stays readable in `terms_history`. `name` alone changes no terms. An ended agreement answers 409 AGREEMENT_ENDED.',
        params: Id,
        body: PatchBody,
        response: { 200: Type.Object({ agreement: Agreement, invitation: Type.Union([InvitationResult, Type.Null()]) }), ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => programs.revise(requireScope(request), request.params.id, request.body),
  );

  app.post(
    '/api/developer/partners/programs/:id/status',
    {
      config: { policy: manage },
      schema: {
        tags: devTags,
        summary: 'Change the agreement status',
        description:
          'Per the status table: `active` needs an acceptance (409 AGREEMENT_NOT_ACCEPTED); active ↔ paused; active or paused → ended; an ended agreement cannot be resumed (409 AGREEMENT_ENDED). The same status again changes nothing. Every change is audited with its actor.',
        params: Id,
        body: Type.Object({ status: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('ended')]) }, { additionalProperties: false }),
        response: { 200: Agreement, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => programs.setStatus(requireScope(request), request.params.id, request.body.status),
  );

  app.post(
    '/api/developer/partners/programs/:id/invite',
    {
      config: { policy: manage },
      schema: {
        tags: devTags,
        summary: 'Send a replacement invitation',
        description:
          'A new invitation to the current proposal; older pending links stop working. Limits: a resend cooldown per agreement (429 INVITE_COOLDOWN) and a daily number per workspace (429 INVITE_LIMIT_REACHED), both with Retry-After.',
        params: Id,
        body: Type.Object({ send_email: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: { 200: Type.Object({ agreement_id: Type.Integer(), invitation: InvitationResult }), ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => programs.reinvite(requireScope(request), request.params.id, request.body?.send_email ?? true),
  );

  app.post(
    '/api/developer/partners/programs/:id/live-consent',
    {
      config: { policy: view },
      schema: {
        tags: devTags,
        summary: 'Developer owner’s live consent',
        description: `Only the workspace owner (a teammate, even with \`*\`, gets 403 OWNER_CONSENT_REQUIRED). \`terms_version\` must be the accepted one and \`policy_version\` ${MANAGED_LIVE_POLICY_VERSION} (409 otherwise, naming the current ones). Live terms are consented when both parties consented to the same versions; consent records are append-only.`,
        params: Id,
        body: ConsentBody,
        response: { 200: ConsentAnswer, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => programs.developerConsent(requireScope(request), request.params.id, request.body, request.ip),
  );

  // ---- partner portal (recipient side) ----

  const tokenLimit = enforceLimits(app, [{ max: 60, windowMs: 60_000, key: (req) => `ppi:ip:${req.ip}` }]);

  app.get(
    '/api/partner-portal/programs',
    {
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags: portalTags,
        summary: 'The signed-in recipient’s agreements',
        description: 'Across workspaces; agreements of workspaces whose partner features are off are not listed.',
        response: { 200: Type.Object({ programs: Type.Array(Type.Object({ id: Type.Integer(), ...ReferralFields }, { additionalProperties: true })) }), ...errorResponses(401) },
      },
    },
    async (request) => ({ programs: await portal.list(requireRecipient(request)) }),
  );

  app.get(
    '/api/partner-portal/programs/invitations/:token',
    {
      preHandler: tokenLimit,
      config: { policy: { auth: 'public' } },
      schema: {
        tags: portalTags,
        summary: 'An invitation and its displayed terms',
        description:
          'The token (from the invitation link’s fragment) is the credential. Unknown, revoked and expired tokens answer the same 404. Answers carry `Cache-Control: no-store` and `Referrer-Policy: no-referrer`; the token is never logged.',
        params: Type.Object({ token: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ invitation: Type.Object({}, { additionalProperties: true }), agreement: Type.Object({}, { additionalProperties: true }), terms: Terms }), ...errorResponses(404, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      return portal.invitation(request.params.token);
    },
  );

  app.post(
    '/api/partner-portal/programs/invitations/accept',
    {
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags: portalTags,
        summary: 'Accept an invitation’s terms',
        description:
          'Needs a session whose verified e-mail is the invited one (403 otherwise). `preview_terms_version` and `payout_policy_version` must be the invitation’s (409 naming the current ones). Concurrent accepts make one acceptance. Acceptance is not live payment consent.',
        body: Type.Object(
          {
            token: Type.String({ maxLength: 100 }),
            accept_preview_terms: Type.Literal(true),
            preview_terms_version: Type.Integer({ minimum: 1 }),
            payout_policy_version: Type.String({ maxLength: 100 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ accepted: Type.Literal(true), agreement_id: Type.Integer(), terms_version: Type.Integer() }, { additionalProperties: true }), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return portal.accept(requireRecipient(request), request.body);
    },
  );

  app.post(
    '/api/partner-portal/programs/:id/live-consent',
    {
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags: portalTags,
        summary: 'Recipient’s live consent',
        description: `To the accepted terms (\`terms_version\`) under the managed-live policy \`${MANAGED_LIVE_POLICY_VERSION}\` (409 otherwise, naming the current ones). An agreement of someone else answers 404.`,
        params: Id,
        body: ConsentBody,
        response: { 200: ConsentAnswer, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => portal.consent(requireRecipient(request), request.params.id, request.body, request.ip),
  );
};
