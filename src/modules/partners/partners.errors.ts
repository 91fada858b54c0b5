import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const partnerErrorSpecs = {
  AGREEMENT_ENDED: { status: 409, title: 'The agreement has ended; it cannot be changed or resumed' },
  AGREEMENT_NOT_ACCEPTED: { status: 409, title: 'The recipient has not accepted the agreement yet' },
  INVALID_AGREEMENT_TRANSITION: { status: 409, title: 'The agreement cannot move to that status from its current one' },
  PRODUCT_NOT_ELIGIBLE: { status: 409, title: 'A product is not eligible for partner programs (it must be active)' },
  COLLABORATOR_CAPACITY_EXCEEDED: { status: 409, title: 'Collaborator rates on a product would exceed 10000 basis points together' },
  TERMS_VERSION_MISMATCH: { status: 409, title: 'The terms or payout policy version is not the current one' },
  POLICY_VERSION_MISMATCH: { status: 409, title: 'The policy version is not the current managed-live policy' },
  INVITATION_NOT_NEEDED: { status: 409, title: 'The current proposal is already accepted; there is nothing to invite to' },
  INVITE_COOLDOWN: { status: 429, title: 'An invitation for this agreement was sent moments ago; wait before resending' },
  INVITE_LIMIT_REACHED: { status: 429, title: 'The workspace has sent its invitations for today' },
  RECIPIENT_MISMATCH: { status: 403, title: 'The invitation is addressed to someone else' },
  EMAIL_NOT_VERIFIED: { status: 403, title: 'The signed-in e-mail address is not verified' },
  OWNER_CONSENT_REQUIRED: { status: 403, title: 'Only the workspace owner can give live consent' },
} as const satisfies Record<string, ErrorSpec>;
export const PartnerErrors = defineErrors(partnerErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof partnerErrorSpecs> {}
}
