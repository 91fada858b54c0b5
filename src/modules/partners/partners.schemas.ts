import { Type } from '@sinclair/typebox';
import { DateTime, Email, Id, INT32_MAX, Int, List, Name, TEXT_LIMITS, Text } from '../../platform/http/bounded.js';
import { MANAGED_LIVE_POLICY_VERSION, MAX_BPS } from './partners.service.js';

// Request and answer schemas of the partner program routes (developer side and partner portal).

const Bps = Int(0, MAX_BPS, { description: 'basis points (0–10000)' });
const TermsVersion = Int(1, INT32_MAX);
const PolicyVersion = (options = {}) => Text(TEXT_LIMITS.code, options);
export const IdParams = Type.Object({ id: Id() }, { additionalProperties: false });
const ProductRates = List(Type.Object({ product_id: Id(), rate_bps: Bps }, { additionalProperties: false }), 200);
const termsFields = {
  rate_bps: Bps,
  product_rates: ProductRates,
  attribution_window_days: Int(1, 365),
  include_reseller_sales: Type.Boolean(),
  effective_from: DateTime({ description: 'When the terms take effect; never in the past' }),
};
export const CreateBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('affiliate'), Type.Literal('collaborator')]),
    recipient_email: Email(),
    name: Name(),
    rate_bps: Bps,
    product_rates: Type.Optional(termsFields.product_rates),
    attribution_window_days: Type.Optional(termsFields.attribution_window_days),
    include_reseller_sales: Type.Optional(termsFields.include_reseller_sales),
    effective_from: Type.Optional(termsFields.effective_from),
    send_email: Type.Optional(Type.Boolean({ description: 'Queue the invitation e-mail (default true)' })),
  },
  { additionalProperties: false },
);
export const PatchBody = Type.Object(
  {
    name: Type.Optional(Name()),
    rate_bps: Type.Optional(Bps),
    product_rates: Type.Optional(termsFields.product_rates),
    attribution_window_days: Type.Optional(termsFields.attribution_window_days),
    include_reseller_sales: Type.Optional(termsFields.include_reseller_sales),
    effective_from: Type.Optional(termsFields.effective_from),
    send_email: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const ConsentBody = Type.Object(
  {
    accept: Type.Literal(true),
    terms_version: TermsVersion,
    policy_version: PolicyVersion({ description: `The current managed-live policy: ${MANAGED_LIVE_POLICY_VERSION}` }),
  },
  { additionalProperties: false },
);

export const Terms = Type.Object(
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
export const InvitationResult = Type.Object(
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
export const Agreement = Type.Object(
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
export const ConsentAnswer = Type.Object(
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

export const AgreementList = Type.Object({ programs: Type.Array(Agreement) });
export const CreateAnswer = Type.Object({ agreement: Agreement, proposal: Type.Object({ terms_version: Type.Integer() }), invitation: InvitationResult });
export const ReviseAnswer = Type.Object({ agreement: Agreement, invitation: Type.Union([InvitationResult, Type.Null()]) });
export const StatusBody = Type.Object({ status: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('ended')]) }, { additionalProperties: false });
export const InviteBody = Type.Object({ send_email: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const InviteAnswer = Type.Object({ agreement_id: Type.Integer(), invitation: InvitationResult });

// ---- partner portal (recipient side) ----

/** Minted tokens are far shorter; anything longer is not one. */
const InvitationToken = Text(100);

export const PortalProgramList = Type.Object({ programs: Type.Array(Type.Object({ id: Type.Integer(), ...ReferralFields }, { additionalProperties: true })) });
export const InvitationTokenParams = Type.Object({ token: InvitationToken }, { additionalProperties: false });
export const InvitationView = Type.Object({ invitation: Type.Object({}, { additionalProperties: true }), agreement: Type.Object({}, { additionalProperties: true }), terms: Terms });
export const AcceptBody = Type.Object(
  {
    token: InvitationToken,
    accept_preview_terms: Type.Literal(true),
    preview_terms_version: TermsVersion,
    payout_policy_version: PolicyVersion(),
  },
  { additionalProperties: false },
);
export const AcceptAnswer = Type.Object({ accepted: Type.Literal(true), agreement_id: Type.Integer(), terms_version: Type.Integer() }, { additionalProperties: true });
