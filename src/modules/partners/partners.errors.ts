import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const partnerErrorSpecs = {
  AGREEMENT_ENDED: { status: 409, title: 'The agreement has ended; it cannot be changed or resumed', description: 'the partner agreement has ended: it cannot be edited, invited to, consented to or resumed' },
  AGREEMENT_NOT_ACCEPTED: { status: 409, title: 'The recipient has not accepted the agreement yet', description: 'the recipient has not accepted the agreement yet (activation and consent need an acceptance)' },
  INVALID_AGREEMENT_TRANSITION: { status: 409, title: 'The agreement cannot move to that status from its current one', description: 'the status change is not in the agreement status table' },
  PRODUCT_NOT_ELIGIBLE: { status: 409, title: 'A product is not eligible for partner programs (it must be active)', description: 'a product of the agreement is not active' },
  COLLABORATOR_CAPACITY_EXCEEDED: { status: 409, title: 'Collaborator rates on a product would exceed 10000 basis points together', description: 'collaborator rates on a product would exceed 10000 bps together; `product_id`, `available_bps` name it' },
  TERMS_VERSION_MISMATCH: { status: 409, title: 'The terms or payout policy version is not the current one', description: 'a terms or payout policy version is not the current one; the body names the current ones' },
  POLICY_VERSION_MISMATCH: { status: 409, title: 'The policy version is not the current managed-live policy', description: '`policy_version` is not the current managed-live policy (`patchbay-managed-live-v1`, in the body)' },
  INVITATION_NOT_NEEDED: { status: 409, title: 'The current proposal is already accepted; there is nothing to invite to', description: 'the recipient already accepted the current terms' },
  INVITE_COOLDOWN: { status: 429, title: 'An invitation for this agreement was sent moments ago; wait before resending', description: 'an invitation for this agreement was sent less than `INVITE_RESEND_COOLDOWN_SECONDS` ago; see `Retry-After`' },
  INVITE_LIMIT_REACHED: { status: 429, title: 'The workspace has sent its invitations for today', description: 'the workspace sent `INVITES_PER_WORKSPACE_PER_DAY` invitations in the last 24 hours; see `Retry-After`' },
  RECIPIENT_MISMATCH: { status: 403, title: 'The invitation is addressed to someone else', description: 'the invitation is addressed to another e-mail address than the signed-in recipient\'s' },
  EMAIL_NOT_VERIFIED: { status: 403, title: 'The signed-in e-mail address is not verified', description: 'the recipient session has not proven its e-mail address (sign in through a link)' },
  OWNER_CONSENT_REQUIRED: { status: 403, title: 'Only the workspace owner can give live consent', description: 'developer live consent comes only from the workspace owner (a teammate\'s permissions do not carry it)' },
} as const satisfies Record<string, ErrorSpec>;
export const PartnerErrors = defineErrors(partnerErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof partnerErrorSpecs> {}
}
