import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { AgreementKind, AgreementStatus } from '../../platform/db/schema.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, type FieldError, notFound } from '../../platform/http/errors.js';
import { hashLinkToken, type LinkTokens } from '../../platform/mail/link-tokens.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { INVITATION_TOKEN, PARTNER_INVITATION_EMAIL } from './partners.emails.js';
import { PartnerErrors } from './partners.errors.js';
import * as repo from './partners.repo.js';
import { AgreementLiveJob } from './partners.jobs.js';
import { emitWebhookEvent } from '../webhooks/index.js';

/** The managed-live policy both parties consent to (the contract prints it without the brand prefix). */
export const MANAGED_LIVE_POLICY_VERSION = 'patchbay-managed-live-v1';
/** The payout policy an invitation displays and an acceptance confirms. */
export const PAYOUT_POLICY_VERSION = 'patchbay-payouts-v1';
export const MAX_BPS = 10_000;
/** `effective_from` may be this much in the past (clock skew), never more: terms are not backdated. */
const BACKDATE_TOLERANCE_MS = 60_000;

export interface PartnerLimits {
  invitesPerWorkspacePerDay: number;
  inviteResendCooldownSeconds: number;
  inviteTtlHours: number;
}

export interface TermsInput {
  rate_bps?: number | undefined;
  product_rates?: Array<{ product_id: number; rate_bps: number }> | undefined;
  attribution_window_days?: number | undefined;
  include_reseller_sales?: boolean | undefined;
  effective_from?: string | undefined;
}

export interface CreateAgreementInput extends TermsInput {
  kind: AgreementKind;
  recipient_email: string;
  name: string;
  rate_bps: number;
  send_email?: boolean | undefined;
}

export interface PatchAgreementInput extends TermsInput {
  name?: string | undefined;
  send_email?: boolean | undefined;
}

export const invitationTokenHash = hashLinkToken;

const termsJson = (t: repo.TermsRecord) => ({
  terms_version: t.version,
  rate_bps: t.rate_bps,
  product_rates: t.product_rates,
  attribution_window_days: t.attribution_window_days,
  include_reseller_sales: t.include_reseller_sales,
  effective_from: t.effective_from.toISOString(),
  payout_policy_version: t.payout_policy_version,
  created_at: new Date(t.created_at).toISOString(),
});
export type TermsJson = ReturnType<typeof termsJson>;

/** An agreement as the developer sees it: status, every version of its terms, invitation and consent state. */
export function agreementJson(
  a: repo.AgreementRecord,
  terms: repo.TermsRecord[],
  invitation: repo.InvitationRecord | undefined,
  consents: Array<{ party: 'developer' | 'recipient'; terms_version: number; policy_version: string; created_at: Date }>,
  publicBaseUrl = '',
) {
  const mine = terms.filter((t) => t.agreement_id === a.id);
  const accepted = mine.find((t) => t.version === a.accepted_terms_version);
  const proposed = mine.find((t) => t.version === a.proposed_terms_version);
  const consentFor = (party: 'developer' | 'recipient') =>
    consents.filter((c) => c.party === party && c.terms_version === a.accepted_terms_version && c.policy_version === MANAGED_LIVE_POLICY_VERSION).at(-1);
  const developer = consentFor('developer');
  const recipient = consentFor('recipient');
  const invitationState = invitation ? (invitation.status === 'pending' && invitation.expires_at.getTime() <= Date.now() ? 'expired' : invitation.status) : 'none';
  return {
    id: a.id,
    kind: a.kind,
    name: a.name,
    recipient_email: a.recipient_email,
    status: a.status,
    ...referralLink(a.referral_code, publicBaseUrl),
    terms_version: a.accepted_terms_version,
    accepted_terms_version: a.accepted_terms_version,
    proposed_terms_version: a.proposed_terms_version,
    revision_pending: a.accepted_terms_version !== null && a.proposed_terms_version !== a.accepted_terms_version,
    policy_version: MANAGED_LIVE_POLICY_VERSION,
    payout_policy_version: (proposed ?? accepted)?.payout_policy_version ?? PAYOUT_POLICY_VERSION,
    accepted_terms: accepted ? termsJson(accepted) : null,
    proposed_terms: proposed ? termsJson(proposed) : null,
    terms_history: mine.map(termsJson),
    accepted_at: a.accepted_at?.toISOString() ?? null,
    invitation: invitation
      ? {
          status: invitationState,
          terms_version: invitation.terms_version,
          expires_at: invitation.expires_at.toISOString(),
          email_queued: invitation.email_queued,
          created_at: invitation.created_at.toISOString(),
        }
      : null,
    consent: {
      policy_version: MANAGED_LIVE_POLICY_VERSION,
      developer: developer ? { terms_version: developer.terms_version, consented_at: new Date(developer.created_at).toISOString() } : null,
      recipient: recipient ? { terms_version: recipient.terms_version, consented_at: new Date(recipient.created_at).toISOString() } : null,
      live_terms_consented: developer !== undefined && recipient !== undefined,
    },
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}
export type AgreementJson = ReturnType<typeof agreementJson>;

/** An affiliate's public referral link (null for collaborators, which have none). */
export function referralLink(code: string | null, publicBaseUrl: string) {
  return { referral_code: code, referral_url: code ? `${publicBaseUrl}/api/partner-referrals/${code}` : null };
}

/** 404 unless the workspace's partner features are on: every partner route (the ledger's too) asks this first. */
export async function ensureProgramsEnabled(db: Db, scope: Scope): Promise<void> {
  if (!(await repo.programsEnabled(db, scope.workspaceId))) throw notFound('Partner programs');
}

/** Status changes per section 3.3 of the contract; the same status again changes nothing. */
export function checkTransition(from: AgreementStatus, to: 'active' | 'paused' | 'ended'): 'change' | 'same' {
  if (from === to) return 'same';
  if (from === 'ended') throw new AppError(PartnerErrors.AGREEMENT_ENDED, 'An ended agreement cannot be resumed or changed');
  if (from === 'pending') throw new AppError(PartnerErrors.AGREEMENT_NOT_ACCEPTED, 'The recipient has not accepted this agreement yet');
  const allowed: Record<string, string[]> = { accepted: ['active', 'ended'], active: ['paused', 'ended'], paused: ['active', 'ended'] };
  if (!allowed[from]?.includes(to)) throw new AppError(PartnerErrors.INVALID_AGREEMENT_TRANSITION, `An agreement that is ${from} cannot become ${to}`);
  return 'change';
}

/**
 * Partner programs, developer side: agreements with versioned terms, invitations and the
 * developer owner's live consent. Every change is one transaction with its audit event; e-mail
 * goes through the job runner after the commit.
 */
export class PartnerPrograms {
  constructor(
    private readonly db: Db,
    private readonly limits: PartnerLimits,
    private readonly tokens: LinkTokens,
    private readonly portalUrl: string,
    /** Where this service is reached: referral links point here. */
    private readonly publicBaseUrl = '',
  ) {}

  /** 404 on every partner route of a workspace whose partner features are switched off. */
  ensureEnabled(scope: Scope): Promise<void> {
    return ensureProgramsEnabled(this.db, scope);
  }

  async list(scope: Scope): Promise<AgreementJson[]> {
    await this.ensureEnabled(scope);
    const agreements = await repo.listAgreements(this.db, scope);
    return this.render(this.db, scope.workspaceId, agreements);
  }

  async create(scope: Scope, input: CreateAgreementInput, address: string | null) {
    await this.ensureEnabled(scope);
    const email = input.recipient_email.trim().toLowerCase();
    const terms = this.checkTerms(input.kind, input, null);
    const sendEmail = input.send_email ?? true;
    return inTransaction(this.db, async (tx) => {
      await this.checkProducts(tx, scope, input.kind, terms.product_rates, null);
      const id = await repo.insertAgreement(tx, scope, { kind: input.kind, name: input.name.trim(), recipientEmail: email });
      await repo.insertTerms(tx, scope, id, 1, terms);
      await repo.recordEvent(tx, { workspaceId: scope.workspaceId, agreementId: id, actorKind: 'developer', actorId: scope.accountId, action: 'created', to: 'pending', data: { terms_version: 1, address } });
      const invitation = await this.invite(tx, scope, id, 1, email, sendEmail);
      const agreement = (await repo.findAgreement(tx, scope, id))!;
      return { agreement: (await this.render(tx, scope.workspaceId, [agreement]))[0]!, proposal: { terms_version: 1 }, invitation };
    });
  }

  async revise(scope: Scope, id: number, input: PatchAgreementInput) {
    await this.ensureEnabled(scope);
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.findAgreement(tx, scope, id, true);
      if (!agreement) throw notFound('Agreement');
      if (agreement.status === 'ended') throw new AppError(PartnerErrors.AGREEMENT_ENDED, 'An ended agreement cannot be edited');
      const termsChanged = ['rate_bps', 'product_rates', 'attribution_window_days', 'include_reseller_sales', 'effective_from'].some((f) => input[f as keyof TermsInput] !== undefined);
      if (!termsChanged && input.name === undefined) {
        throw new AppError(CommonErrors.VALIDATION_FAILED, 'Send at least one field to change', { errors: [{ path: 'body', message: 'has no changed field' }] });
      }
      let invitation: Awaited<ReturnType<PartnerPrograms['invite']>> | null = null;
      if (input.name !== undefined) await repo.updateAgreement(tx, scope.workspaceId, id, { name: input.name.trim() });
      if (termsChanged) {
        const [latest] = (await repo.termsOf(tx, scope.workspaceId, [id])).filter((t) => t.version === agreement.proposed_terms_version);
        const terms = this.checkTerms(agreement.kind, input, latest!);
        await this.checkProducts(tx, scope, agreement.kind, terms.product_rates, id);
        const version = agreement.proposed_terms_version + 1;
        await repo.insertTerms(tx, scope, id, version, terms);
        await repo.updateAgreement(tx, scope.workspaceId, id, { proposed_terms_version: version });
        await repo.recordEvent(tx, { workspaceId: scope.workspaceId, agreementId: id, actorKind: 'developer', actorId: scope.accountId, action: 'revised', data: { terms_version: version } });
        // The revision reaches the recipient through a new invitation; the accepted terms stay in force meanwhile.
        invitation = await this.invite(tx, scope, id, version, agreement.recipient_email, input.send_email ?? true);
      }
      const updated = (await repo.findAgreement(tx, scope, id))!;
      return { agreement: (await this.render(tx, scope.workspaceId, [updated]))[0]!, invitation };
    });
  }

  async setStatus(scope: Scope, id: number, status: 'active' | 'paused' | 'ended') {
    await this.ensureEnabled(scope);
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.findAgreement(tx, scope, id, true);
      if (!agreement) throw notFound('Agreement');
      if (checkTransition(agreement.status, status) === 'change') {
        await repo.updateAgreement(tx, scope.workspaceId, id, { status });
        if (status === 'ended') await repo.revokePendingInvitations(tx, scope.workspaceId, id);
        if (status === 'active') await announceLive(tx, scope.workspaceId, id);
        await repo.recordEvent(tx, { workspaceId: scope.workspaceId, agreementId: id, actorKind: 'developer', actorId: scope.accountId, action: 'status', from: agreement.status, to: status });
        await emitWebhookEvent(tx, scope.workspaceId, 'partner.agreement.status_changed', { agreement_id: id, previous_status: agreement.status, status, changed_by: 'developer' });
      }
      const updated = (await repo.findAgreement(tx, scope, id))!;
      return (await this.render(tx, scope.workspaceId, [updated]))[0]!;
    });
  }

  /** A replacement invitation for the current proposal (limits and cooldown apply; older links stop working). */
  async reinvite(scope: Scope, id: number, sendEmail: boolean) {
    await this.ensureEnabled(scope);
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.findAgreement(tx, scope, id, true);
      if (!agreement) throw notFound('Agreement');
      if (agreement.status === 'ended') throw new AppError(PartnerErrors.AGREEMENT_ENDED, 'An ended agreement takes no invitations');
      if (agreement.accepted_terms_version === agreement.proposed_terms_version) {
        throw new AppError(PartnerErrors.INVITATION_NOT_NEEDED, 'The recipient already accepted the current terms');
      }
      const [last] = await repo.latestInvitations(tx, scope.workspaceId, [id]);
      if (last) {
        const wait = Math.ceil((last.created_at.getTime() + this.limits.inviteResendCooldownSeconds * 1000 - Date.now()) / 1000);
        if (wait > 0) throw new AppError(PartnerErrors.INVITE_COOLDOWN, `Wait ${wait} s before sending another invitation for this agreement`, { headers: { 'retry-after': String(wait) } });
      }
      const invitation = await this.invite(tx, scope, id, agreement.proposed_terms_version, agreement.recipient_email, sendEmail);
      return { agreement_id: id, invitation };
    });
  }

  /** The workspace owner's live consent to the accepted terms under the current managed-live policy. */
  async developerConsent(scope: Scope, id: number, input: { terms_version: number; policy_version: string }, address: string | null) {
    await this.ensureEnabled(scope);
    return inTransaction(this.db, async (tx) => {
      const agreement = await repo.findAgreement(tx, scope, id, true);
      if (!agreement) throw notFound('Agreement');
      // Owner consent is personal: a teammate's permissions (even `*`) do not carry it.
      if (!scope.owner) throw new AppError(PartnerErrors.OWNER_CONSENT_REQUIRED, 'Live consent must come from the workspace owner');
      return recordConsent(tx, agreement, { party: 'developer', id: scope.accountId }, input, address);
    });
  }

  async render(db: Db | Tx, workspaceId: number, agreements: repo.AgreementRecord[]): Promise<AgreementJson[]> {
    const ids = agreements.map((a) => a.id);
    const [terms, invitations, consents] = await Promise.all([repo.termsOf(db, workspaceId, ids), repo.latestInvitations(db, workspaceId, ids), repo.consentsOf(db, workspaceId, ids)]);
    return agreements.map((a) =>
      agreementJson(
        a,
        terms,
        invitations.find((i) => i.agreement_id === a.id),
        consents.filter((c) => c.agreement_id === a.id),
        this.publicBaseUrl,
      ),
    );
  }

  private checkTerms(kind: AgreementKind, input: TermsInput, base: repo.TermsRecord | null): repo.NewTerms {
    const errors: FieldError[] = [];
    const productRates = input.product_rates ?? base?.product_rates ?? [];
    const seen = new Set<number>();
    productRates.forEach((p, i) => {
      if (seen.has(p.product_id)) errors.push({ path: `body/product_rates/${i}/product_id`, message: 'names a product twice' });
      seen.add(p.product_id);
    });
    if (kind === 'collaborator' && productRates.length === 0) {
      errors.push({ path: 'body/product_rates', message: 'a collaborator agreement names the products it shares in, with a rate each' });
    }
    let effectiveFrom = base ? base.effective_from : new Date();
    if (input.effective_from !== undefined) {
      effectiveFrom = new Date(input.effective_from);
      if (effectiveFrom.getTime() < Date.now() - BACKDATE_TOLERANCE_MS) errors.push({ path: 'body/effective_from', message: 'cannot be in the past (terms are not backdated)' });
    } else if (base && base.effective_from.getTime() < Date.now()) {
      // A revision takes effect when accepted, never earlier than now.
      effectiveFrom = new Date();
    }
    if (errors.length > 0) throw new AppError(CommonErrors.VALIDATION_FAILED, 'The agreement terms are invalid', { errors });
    return {
      rate_bps: input.rate_bps ?? base?.rate_bps ?? 0,
      attribution_window_days: input.attribution_window_days ?? base?.attribution_window_days ?? 30,
      include_reseller_sales: input.include_reseller_sales ?? base?.include_reseller_sales ?? false,
      effective_from: effectiveFrom,
      payout_policy_version: PAYOUT_POLICY_VERSION,
      product_rates: productRates.map((p) => ({ product_id: p.product_id, rate_bps: p.rate_bps })),
    };
  }

  /** Products must be the workspace's (404), active (409) and, for collaborators, have room for the rate (409). */
  private async checkProducts(tx: Tx, scope: Scope, kind: AgreementKind, rates: Array<{ product_id: number; rate_bps: number }>, agreementId: number | null) {
    const ids = rates.map((r) => r.product_id);
    const products = await repo.lockProducts(tx, scope, ids);
    for (const id of ids) if (!products.some((p) => p.id === id)) throw notFound(`Product ${id}`);
    const inactive = products.find((p) => p.status !== 'active');
    if (inactive) throw new AppError(PartnerErrors.PRODUCT_NOT_ELIGIBLE, `Product ${inactive.id} (${inactive.name}) is ${inactive.status}; partner programs need an active product`, { body: { product_id: inactive.id } });
    if (kind !== 'collaborator') return;
    const committed = await repo.committedCollaboratorRates(tx, scope, ids, agreementId);
    for (const r of rates) {
      const total = (committed.get(r.product_id) ?? 0) + r.rate_bps;
      if (total > MAX_BPS) {
        const product = products.find((p) => p.id === r.product_id)!;
        throw new AppError(
          PartnerErrors.COLLABORATOR_CAPACITY_EXCEEDED,
          `Collaborator rates on product ${product.id} (${product.name}) would total ${total} basis points; ${MAX_BPS - (committed.get(r.product_id) ?? 0)} remain`,
          { body: { product_id: product.id, committed_bps: committed.get(r.product_id) ?? 0, available_bps: MAX_BPS - (committed.get(r.product_id) ?? 0) } },
        );
      }
    }
  }

  /** Makes an invitation (older pending ones revoked), within the workspace's daily limit; queues its e-mail when asked. */
  private async invite(tx: Tx, scope: Scope, agreementId: number, termsVersion: number, email: string, sendEmail: boolean) {
    const sent = await repo.invitationsSentSince(tx, scope.workspaceId, new Date(Date.now() - 86_400_000));
    if (sent.count >= this.limits.invitesPerWorkspacePerDay) {
      const retry = sent.oldest ? Math.max(1, Math.ceil((sent.oldest.getTime() + 86_400_000 - Date.now()) / 1000)) : 3600;
      throw new AppError(PartnerErrors.INVITE_LIMIT_REACHED, `At most ${this.limits.invitesPerWorkspacePerDay} invitations per workspace and day`, { headers: { 'retry-after': String(retry) } });
    }
    await repo.revokePendingInvitations(tx, scope.workspaceId, agreementId);
    // Kept nowhere: the e-mail derives the token again from the row's nonce when it is sent.
    const minted = this.tokens.mint(INVITATION_TOKEN);
    const expiresAt = new Date(Date.now() + this.limits.inviteTtlHours * 3_600_000);
    const invitation = await repo.insertInvitation(tx, scope.workspaceId, {
      agreementId,
      termsVersion,
      email,
      tokenHash: minted.hash,
      tokenNonce: minted.nonce,
      expiresAt,
      emailQueued: sendEmail,
      createdBy: scope.accountId || null,
    });
    if (sendEmail) await enqueueEmail(tx, { workspaceId: scope.workspaceId }, PARTNER_INVITATION_EMAIL, { invitationId: invitation.id });
    await repo.recordEvent(tx, { workspaceId: scope.workspaceId, agreementId, actorKind: 'developer', actorId: scope.accountId, action: 'invited', data: { terms_version: termsVersion, email_queued: sendEmail } });
    return {
      status: 'pending' as const,
      terms_version: termsVersion,
      expires_at: expiresAt.toISOString(),
      email_queued: sendEmail,
      delivery: sendEmail ? ('queued' as const) : ('not_sent' as const),
      // Without our e-mail the developer delivers the link; it is never stored and never shown again.
      // The token travels in the URL fragment, which browsers never send to a server or a referrer.
      ...(sendEmail ? {} : { invitation_link: `${this.portalUrl}/invitations#token=${minted.token}` }),
    };
  }
}

/** Partner money reacts through the job runner (after this commit), so this module never books money itself. */
async function announceLive(tx: Tx, workspaceId: number, agreementId: number): Promise<void> {
  await AgreementLiveJob.enqueue(tx, { agreementId }, { workspaceId });
}

/** Consent is to the accepted terms under the current managed-live policy; anything else names the current ones. */
function checkConsent(agreement: repo.AgreementRecord, input: { terms_version: number; policy_version: string }): void {
  if (agreement.status === 'ended') throw new AppError(PartnerErrors.AGREEMENT_ENDED, 'An ended agreement takes no consent');
  if (agreement.accepted_terms_version === null) throw new AppError(PartnerErrors.AGREEMENT_NOT_ACCEPTED, 'Consent follows the recipient’s acceptance of the terms');
  if (input.policy_version !== MANAGED_LIVE_POLICY_VERSION) {
    throw new AppError(PartnerErrors.POLICY_VERSION_MISMATCH, `The current managed-live policy is ${MANAGED_LIVE_POLICY_VERSION}`, { body: { policy_version: MANAGED_LIVE_POLICY_VERSION } });
  }
  if (input.terms_version !== agreement.accepted_terms_version) {
    throw new AppError(PartnerErrors.TERMS_VERSION_MISMATCH, `The accepted terms are version ${agreement.accepted_terms_version}`, { body: { terms_version: agreement.accepted_terms_version } });
  }
}

/** Checks and records one party's live consent (append-only, audited) and says whether both parties have now consented. */
export async function recordConsent(
  tx: Tx,
  agreement: repo.AgreementRecord,
  actor: { party: 'developer' | 'recipient'; id: number },
  input: { terms_version: number; policy_version: string },
  address: string | null,
) {
  checkConsent(agreement, input);
  const at = await repo.insertConsent(tx, {
    workspaceId: agreement.workspace_id,
    agreementId: agreement.id,
    party: actor.party,
    accountId: actor.party === 'developer' ? actor.id : null,
    recipientId: actor.party === 'recipient' ? actor.id : null,
    termsVersion: input.terms_version,
    policyVersion: input.policy_version,
    address,
  });
  await repo.recordEvent(tx, { workspaceId: agreement.workspace_id, agreementId: agreement.id, actorKind: actor.party, actorId: actor.id, action: 'live_consent', data: { terms_version: input.terms_version } });
  const answer = await consentAnswer(tx, agreement, actor.party, input, at);
  await emitWebhookEvent(tx, agreement.workspace_id, 'partner.consent.recorded', { agreement_id: agreement.id, party: actor.party, terms_version: input.terms_version, policy_version: input.policy_version, live_terms_consented: answer.live_terms_consented });
  if (answer.live_terms_consented) await announceLive(tx, agreement.workspace_id, agreement.id);
  return answer;
}

async function consentAnswer(tx: Tx, agreement: repo.AgreementRecord, party: 'developer' | 'recipient', input: { terms_version: number; policy_version: string }, at: Date) {
  const consents = await repo.consentsOf(tx, agreement.workspace_id, [agreement.id]);
  const has = (p: string) => consents.some((c) => c.party === p && c.terms_version === input.terms_version && c.policy_version === input.policy_version);
  return {
    agreement_id: agreement.id,
    accepted_party: party,
    terms_version: input.terms_version,
    policy_version: input.policy_version,
    consented_at: at.toISOString(),
    live_terms_consented: has('developer') && has('recipient'),
  };
}

/**
 * For fixtures and the demo: an agreement in any state, its first terms, and (past `pending`) the
 * recipient's acceptance and the consents asked for. Goes through the same tables and checks of
 * terms as the API, without invitations' e-mail.
 */
export async function seedAgreement(
  tx: Tx,
  scope: Scope,
  a: {
    kind: AgreementKind;
    name: string;
    recipientEmail: string;
    rateBps: number;
    productRates: Array<{ product_id: number; rate_bps: number }>;
    attributionWindowDays?: number | undefined;
    includeResellerSales?: boolean | undefined;
    status: AgreementStatus;
    consents: Array<'developer' | 'recipient'>;
  },
): Promise<number> {
  const email = a.recipientEmail.trim().toLowerCase();
  const id = await repo.insertAgreement(tx, scope, { kind: a.kind, name: a.name, recipientEmail: email });
  await repo.insertTerms(tx, scope, id, 1, {
    rate_bps: a.rateBps,
    attribution_window_days: a.attributionWindowDays ?? 30,
    include_reseller_sales: a.includeResellerSales ?? false,
    effective_from: new Date(),
    payout_policy_version: PAYOUT_POLICY_VERSION,
    product_rates: a.productRates,
  });
  if (a.status === 'pending') return id;
  const recipient = await repo.seedRecipient(tx, email);
  await repo.updateAgreement(tx, scope.workspaceId, id, { status: a.status, accepted_terms_version: 1, accepted_at: new Date(), recipient_id: recipient.id });
  await repo.recordEvent(tx, { workspaceId: scope.workspaceId, agreementId: id, actorKind: 'operator', actorId: null, action: 'seeded', to: a.status });
  for (const party of a.consents) {
    await repo.insertConsent(tx, {
      workspaceId: scope.workspaceId,
      agreementId: id,
      party,
      accountId: party === 'developer' ? scope.accountId : null,
      recipientId: party === 'recipient' ? recipient.id : null,
      termsVersion: 1,
      policyVersion: MANAGED_LIVE_POLICY_VERSION,
      address: null,
    });
  }
  return id;
}
