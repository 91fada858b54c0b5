import type { paths } from '../api/client';

/**
 * The partner portal's list and invitation answers declare only some of their fields (their
 * schemas allow more); these readers give the rest a type without trusting it blindly, so a
 * field the API drops shows as missing instead of breaking the page.
 */
type ProgramRow = paths['/api/partner-portal/programs']['get']['responses'][200]['content']['application/json']['programs'][number];
type InvitationAnswer = paths['/api/partner-portal/programs/invitations/{token}']['get']['responses'][200]['content']['application/json'];
export type Terms = InvitationAnswer['terms'];

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const int = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);
const flag = (value: unknown): boolean => value === true;
const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});

function terms(value: unknown): Terms | null {
  const t = record(value);
  const version = int(t.terms_version);
  if (version === null) return null;
  return {
    terms_version: version,
    rate_bps: int(t.rate_bps) ?? 0,
    product_rates: Array.isArray(t.product_rates)
      ? t.product_rates.map((r) => ({ product_id: int(record(r).product_id) ?? 0, rate_bps: int(record(r).rate_bps) ?? 0 }))
      : [],
    attribution_window_days: int(t.attribution_window_days) ?? 0,
    include_reseller_sales: flag(t.include_reseller_sales),
    effective_from: text(t.effective_from),
    payout_policy_version: text(t.payout_policy_version),
  };
}

export function programView(row: ProgramRow) {
  const consent = record(row.consent);
  return {
    id: row.id,
    name: text(row.name, `Program ${row.id}`),
    kind: text(row.kind),
    workspaceName: text(row.workspace_name),
    status: text(row.status, 'unknown'),
    referralUrl: row.referral_url,
    termsVersion: int(row.terms_version),
    proposedTermsVersion: int(row.proposed_terms_version),
    revisionPending: flag(row.revision_pending),
    policyVersion: text(row.policy_version),
    acceptedTerms: terms(row.accepted_terms),
    consent: { developer: flag(consent.developer), recipient: flag(consent.recipient), live: flag(consent.live_terms_consented) },
  };
}
export type ProgramView = ReturnType<typeof programView>;

export function invitationView(answer: InvitationAnswer) {
  const invitation = record(answer.invitation);
  const agreement = record(answer.agreement);
  return {
    status: text(invitation.status, 'pending'),
    email: text(invitation.email),
    expiresAt: text(invitation.expires_at),
    previewTermsVersion: int(invitation.preview_terms_version) ?? answer.terms.terms_version,
    payoutPolicyVersion: text(invitation.payout_policy_version, answer.terms.payout_policy_version),
    policyVersion: text(invitation.policy_version),
    agreementId: int(agreement.id),
    agreementName: text(agreement.name, 'a partner program'),
    kind: text(agreement.kind),
    workspaceName: text(agreement.workspace_name, 'A developer'),
    terms: answer.terms,
  };
}
export type InvitationView = ReturnType<typeof invitationView>;
