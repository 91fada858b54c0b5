import type { Program } from './queries';

/** Where live consent stands, from the developer's side: both parties must consent to the accepted terms. */
export function consentSummary(p: Program): string {
  if (p.accepted_terms_version === null) return 'Not accepted yet';
  if (p.consent.live_terms_consented) return 'Live: both consented';
  const developer = p.consent.developer?.terms_version === p.accepted_terms_version;
  const recipient = p.consent.recipient?.terms_version === p.accepted_terms_version;
  if (developer && !recipient) return 'Waiting for the partner';
  if (recipient && !developer) return 'Waiting for the owner’s consent';
  return 'Waiting for both consents';
}

/** The rate in force (accepted) or, before acceptance, the proposed one. */
export const rateTerms = (p: Program) => p.accepted_terms ?? p.proposed_terms;
