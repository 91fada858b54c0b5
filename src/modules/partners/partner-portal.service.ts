import type { RecipientScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { PartnerErrors } from './partners.errors.js';
import * as repo from './partners.repo.js';
import { invitationTokenHash, MANAGED_LIVE_POLICY_VERSION, recordConsent, referralLink } from './partners.service.js';
import { emitWebhookEvent } from '../webhooks/index.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const unknownInvitation = () => notFound('Invitation');

/** Terms as the recipient is shown them (the same fields the developer proposed). */
function displayedTerms(t: repo.TermsRecord) {
  return {
    terms_version: t.version,
    preview_terms_version: t.version,
    rate_bps: t.rate_bps,
    product_rates: t.product_rates,
    attribution_window_days: t.attribution_window_days,
    include_reseller_sales: t.include_reseller_sales,
    effective_from: t.effective_from.toISOString(),
    payout_policy_version: t.payout_policy_version,
  };
}

/**
 * The partner portal, agreement side: invitations (the token is the credential to read one;
 * accepting needs the invited person's verified session), the recipient's own agreements, and
 * the recipient's live consent. A recipient scope reaches only agreements addressed to it.
 */
export class PartnerPortal {
  constructor(
    private readonly db: Db,
    /** Where this service is reached: referral links point here. */
    private readonly publicBaseUrl = '',
  ) {}

  /** Unknown, revoked and expired tokens answer the same 404. */
  async invitation(token: string) {
    if (!TOKEN.test(token)) throw unknownInvitation();
    const invitation = await repo.invitationByHash(this.db, invitationTokenHash(token));
    if (!invitation || invitation.status === 'revoked' || (invitation.status === 'pending' && invitation.expires_at.getTime() <= Date.now())) throw unknownInvitation();
    const agreement = await repo.agreementOfInvitation(this.db, invitation.agreement_id);
    if (agreement.status === 'ended') throw unknownInvitation();
    const [terms] = (await repo.termsOf(this.db, invitation.workspace_id, [invitation.agreement_id])).filter((t) => t.version === invitation.terms_version);
    return {
      invitation: {
        status: invitation.status,
        expires_at: invitation.expires_at.toISOString(),
        email: invitation.email,
        preview_terms_version: invitation.terms_version,
        payout_policy_version: terms!.payout_policy_version,
        policy_version: MANAGED_LIVE_POLICY_VERSION,
      },
      agreement: { id: agreement.id, kind: agreement.kind, name: agreement.name, workspace_name: invitation.workspace_name },
      terms: displayedTerms(terms!),
    };
  }

  async accept(recipient: RecipientScope, input: { token: string; preview_terms_version: number; payout_policy_version: string }) {
    if (!TOKEN.test(input.token)) throw unknownInvitation();
    return inTransaction(this.db, async (tx) => {
      const found = await repo.invitationByHash(tx, invitationTokenHash(input.token));
      if (!found) throw unknownInvitation();
      // One acceptance however many arrive at once: the agreement row is the lock.
      const agreement = await repo.lockAgreementForAcceptance(tx, found.agreement_id);
      const invitation = (await repo.invitationByHash(tx, invitationTokenHash(input.token)))!;
      const acceptedByMe = invitation.status === 'accepted' && invitation.accepted_by === recipient.recipientId;
      if (invitation.status === 'revoked' || agreement.status === 'ended' || (invitation.status === 'pending' && invitation.expires_at.getTime() <= Date.now())) throw unknownInvitation();
      if (!recipient.verified) throw new AppError(PartnerErrors.EMAIL_NOT_VERIFIED, 'Sign in through a link sent to the invited address to accept');
      if (recipient.email !== invitation.email) throw new AppError(PartnerErrors.RECIPIENT_MISMATCH, 'This invitation is addressed to another e-mail address');
      if (invitation.status === 'accepted' && !acceptedByMe) throw unknownInvitation();
      const [terms] = (await repo.termsOf(tx, invitation.workspace_id, [invitation.agreement_id])).filter((t) => t.version === invitation.terms_version);
      if (input.preview_terms_version !== invitation.terms_version || input.payout_policy_version !== terms!.payout_policy_version) {
        throw new AppError(PartnerErrors.TERMS_VERSION_MISMATCH, `The invitation shows terms version ${invitation.terms_version} and payout policy ${terms!.payout_policy_version}`, {
          body: { preview_terms_version: invitation.terms_version, payout_policy_version: terms!.payout_policy_version },
        });
      }
      if (!acceptedByMe) {
        await repo.markInvitationAccepted(tx, invitation.id, recipient.recipientId);
        const status = agreement.status === 'pending' ? 'accepted' : agreement.status;
        await repo.updateAgreement(tx, agreement.workspace_id, agreement.id, {
          status,
          accepted_terms_version: invitation.terms_version,
          accepted_at: new Date(),
          recipient_id: recipient.recipientId,
        });
        await repo.recordEvent(tx, {
          workspaceId: agreement.workspace_id,
          agreementId: agreement.id,
          actorKind: 'recipient',
          actorId: recipient.recipientId,
          action: 'accepted',
          from: agreement.status,
          to: status,
          data: { terms_version: invitation.terms_version },
        });
        if (status !== agreement.status) await emitWebhookEvent(tx, agreement.workspace_id, 'partner.agreement.status_changed', { agreement_id: agreement.id, previous_status: agreement.status, status, changed_by: 'recipient' });
      }
      const updated = (await repo.findRecipientAgreement(tx, recipient, agreement.id))!;
      return {
        accepted: true as const,
        already_accepted: acceptedByMe,
        agreement_id: agreement.id,
        status: updated.status,
        terms_version: invitation.terms_version,
        preview_terms_version: invitation.terms_version,
        payout_policy_version: terms!.payout_policy_version,
        // Acceptance is not live payment consent: both parties give that separately.
        live_consent_required: true,
        policy_version: MANAGED_LIVE_POLICY_VERSION,
      };
    });
  }

  async list(recipient: RecipientScope) {
    const agreements = await repo.listRecipientAgreements(this.db, recipient);
    const byWorkspace = new Map<number, number[]>();
    for (const a of agreements) byWorkspace.set(a.workspace_id, [...(byWorkspace.get(a.workspace_id) ?? []), a.id]);
    const terms: repo.TermsRecord[] = [];
    const consents: Array<{ agreement_id: number; party: 'developer' | 'recipient'; terms_version: number; policy_version: string }> = [];
    for (const [workspaceId, ids] of byWorkspace) {
      terms.push(...(await repo.termsOf(this.db, workspaceId, ids)));
      consents.push(...(await repo.consentsOf(this.db, workspaceId, ids)));
    }
    return agreements.map((a) => {
      const accepted = terms.find((t) => t.agreement_id === a.id && t.version === a.accepted_terms_version);
      const mine = consents.filter((c) => c.agreement_id === a.id && c.terms_version === a.accepted_terms_version && c.policy_version === MANAGED_LIVE_POLICY_VERSION);
      return {
        id: a.id,
        kind: a.kind,
        name: a.name,
        workspace_name: a.workspace_name,
        status: a.status,
        ...referralLink(a.referral_code, this.publicBaseUrl),
        terms_version: a.accepted_terms_version,
        proposed_terms_version: a.proposed_terms_version,
        revision_pending: a.proposed_terms_version !== a.accepted_terms_version,
        policy_version: MANAGED_LIVE_POLICY_VERSION,
        accepted_terms: accepted ? displayedTerms(accepted) : null,
        consent: {
          developer: mine.some((c) => c.party === 'developer'),
          recipient: mine.some((c) => c.party === 'recipient'),
          live_terms_consented: mine.some((c) => c.party === 'developer') && mine.some((c) => c.party === 'recipient'),
        },
      };
    });
  }

  async consent(recipient: RecipientScope, id: number, input: { terms_version: number; policy_version: string }, address: string | null) {
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.findRecipientAgreement(tx, recipient, id, true);
      if (!agreement) throw notFound('Agreement');
      if (!recipient.verified) throw new AppError(PartnerErrors.EMAIL_NOT_VERIFIED, 'Sign in through a link to give consent');
      return recordConsent(tx, agreement, { party: 'recipient', id: recipient.recipientId }, input, address);
    });
  }
}
