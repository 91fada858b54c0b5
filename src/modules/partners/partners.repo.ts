import { randomBytes } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { RecipientScope, Scope } from '../../platform/auth/scope.js';
import type { AgreementKind, AgreementStatus, PartnerAgreementsTable, PartnerInvitationsTable, PartnerTermsTable } from '../../platform/db/schema.js';
import { announceOnCommit } from '../../platform/db/committed-changes.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

/** An agreement as the service reads it (who created it is kept for the record, never read). */
export type AgreementRecord = Omit<Selectable<PartnerAgreementsTable>, 'created_by'>;

/** One version of the terms, with the product rates it names. */
export type TermsRecord = Omit<Selectable<PartnerTermsTable>, 'workspace_id' | 'created_by'> & {
  product_rates: Array<{ product_id: number; rate_bps: number }>;
};

/** An invitation without what derives its token (only the e-mail's render reads those). */
export type InvitationRecord = Omit<Selectable<PartnerInvitationsTable>, 'token_hash' | 'token_nonce' | 'created_by'>;

const AGREEMENT = [
  'a.id', 'a.workspace_id', 'a.kind', 'a.name', 'a.recipient_email', 'a.recipient_id', 'a.status', 'a.proposed_terms_version', 'a.accepted_terms_version',
  'a.accepted_at', 'a.created_at', 'a.updated_at', 'a.referral_code',
] as const;
const INVITATION = ['id', 'workspace_id', 'agreement_id', 'terms_version', 'email', 'status', 'expires_at', 'email_queued', 'created_at', 'accepted_at', 'accepted_by'] as const;

/** Partner features of a workspace are on unless its switch turned them off. */
export async function programsEnabled(db: Executor, workspaceId: number): Promise<boolean> {
  const row = await db.selectFrom('workspaces').where('id', '=', workspaceId).select('partner_programs_enabled').executeTakeFirst();
  return row?.partner_programs_enabled ?? false;
}

export async function listAgreements(db: Executor, scope: Scope): Promise<AgreementRecord[]> {
  return db.selectFrom('partner_agreements as a').where('a.workspace_id', '=', scope.workspaceId).select(AGREEMENT).orderBy('a.id', 'desc').execute();
}

export async function findAgreement(db: Executor, scope: Scope, id: number, lock = false): Promise<AgreementRecord | undefined> {
  let q = db.selectFrom('partner_agreements as a').where('a.workspace_id', '=', scope.workspaceId).where('a.id', '=', id).select(AGREEMENT);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** An agreement of the signed-in recipient, in a workspace whose partner features are on. */
export async function findRecipientAgreement(db: Executor, recipient: RecipientScope, id: number, lock = false): Promise<AgreementRecord | undefined> {
  let q = db
    .selectFrom('partner_agreements as a')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .where('a.id', '=', id)
    .where('a.recipient_id', '=', recipient.recipientId)
    .where('w.partner_programs_enabled', '=', true)
    .select(AGREEMENT);
  if (lock) q = q.forUpdate('a');
  return q.executeTakeFirst();
}

/** The agreement an invitation belongs to, as the invitation page shows it (the token already found the invitation). */
export async function agreementOfInvitation(db: Executor, agreementId: number) {
  return db.selectFrom('partner_agreements').where('id', '=', agreementId).select(['id', 'kind', 'name', 'status']).executeTakeFirstOrThrow();
}

/** The agreement row an acceptance locks: concurrent accepts of one invitation queue here and make one acceptance. */
export async function lockAgreementForAcceptance(tx: Tx, agreementId: number) {
  return tx.selectFrom('partner_agreements').where('id', '=', agreementId).select(['id', 'workspace_id', 'status']).forUpdate().executeTakeFirstOrThrow();
}

export async function listRecipientAgreements(db: Executor, recipient: RecipientScope) {
  return db
    .selectFrom('partner_agreements as a')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .where('a.recipient_id', '=', recipient.recipientId)
    .where('w.partner_programs_enabled', '=', true)
    .select([...AGREEMENT, 'w.name as workspace_name'])
    .orderBy('a.id', 'desc')
    .execute();
}

/** Every version of the terms of these agreements, oldest first, with their product rates. */
export async function termsOf(db: Executor, workspaceId: number, agreementIds: number[]): Promise<TermsRecord[]> {
  if (agreementIds.length === 0) return [];
  return db
    .selectFrom('partner_terms as t')
    .where('t.workspace_id', '=', workspaceId)
    .where('t.agreement_id', '=', sql<number>`any(${agreementIds}::int[])`)
    .select([
      't.agreement_id', 't.version', 't.rate_bps', 't.attribution_window_days', 't.include_reseller_sales', 't.effective_from', 't.payout_policy_version', 't.created_at',
      sql<Array<{ product_id: number; rate_bps: number }>>`coalesce((
        select json_agg(json_build_object('product_id', p.product_id, 'rate_bps', p.rate_bps) order by p.product_id)
        from partner_term_products p where p.agreement_id = t.agreement_id and p.version = t.version), '[]'::json)`.as('product_rates'),
    ])
    .orderBy('t.agreement_id')
    .orderBy('t.version')
    .execute();
}

export async function latestInvitations(db: Executor, workspaceId: number, agreementIds: number[]): Promise<InvitationRecord[]> {
  if (agreementIds.length === 0) return [];
  return db
    .selectFrom('partner_invitations')
    .where('workspace_id', '=', workspaceId)
    .where('agreement_id', '=', sql<number>`any(${agreementIds}::int[])`)
    .distinctOn('agreement_id')
    .select(INVITATION)
    .orderBy('agreement_id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function consentsOf(db: Executor, workspaceId: number, agreementIds: number[]) {
  if (agreementIds.length === 0) return [];
  return db
    .selectFrom('partner_consents')
    .where('workspace_id', '=', workspaceId)
    .where('agreement_id', '=', sql<number>`any(${agreementIds}::int[])`)
    .select(['agreement_id', 'party', 'terms_version', 'policy_version', 'created_at'])
    .orderBy('id')
    .execute();
}

export async function insertAgreement(
  tx: Tx,
  scope: Scope,
  a: { kind: AgreementKind; name: string; recipientEmail: string },
): Promise<number> {
  // Affiliates get their referral link's code here, the one place agreements are made: 24 random bytes, never the invitation token.
  const referralCode = a.kind === 'affiliate' ? randomBytes(24).toString('base64url') : null;
  const row = await tx
    .insertInto('partner_agreements')
    .values({ workspace_id: scope.workspaceId, kind: a.kind, name: a.name, recipient_email: a.recipientEmail, proposed_terms_version: 1, created_by: scope.accountId || null, referral_code: referralCode })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface NewTerms {
  rate_bps: number;
  attribution_window_days: number;
  include_reseller_sales: boolean;
  effective_from: Date;
  payout_policy_version: string;
  product_rates: Array<{ product_id: number; rate_bps: number }>;
}

export async function insertTerms(tx: Tx, scope: Scope, agreementId: number, version: number, t: NewTerms): Promise<void> {
  await tx
    .insertInto('partner_terms')
    .values({
      workspace_id: scope.workspaceId,
      agreement_id: agreementId,
      version,
      rate_bps: t.rate_bps,
      attribution_window_days: t.attribution_window_days,
      include_reseller_sales: t.include_reseller_sales,
      effective_from: t.effective_from,
      payout_policy_version: t.payout_policy_version,
      created_by: scope.accountId || null,
    })
    .execute();
  if (t.product_rates.length > 0) {
    await tx
      .insertInto('partner_term_products')
      .values(t.product_rates.map((p) => ({ workspace_id: scope.workspaceId, agreement_id: agreementId, version, product_id: p.product_id, rate_bps: p.rate_bps })))
      .execute();
  }
}

export async function updateAgreement(
  tx: Tx,
  workspaceId: number,
  id: number,
  changes: Partial<{ name: string; status: AgreementStatus; proposed_terms_version: number; accepted_terms_version: number; accepted_at: Date; recipient_id: number }>,
): Promise<void> {
  await tx.updateTable('partner_agreements').set({ ...changes, updated_at: new Date() }).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  // Referral links answer from a per-instance cache: this instance drops it before the change is answered.
  announceOnCommit(tx, 'partner_agreements', workspaceId);
}

/** Products of the workspace among `ids`, locked so capacity checks on them run one at a time. */
export async function lockProducts(tx: Tx, scope: Scope, ids: number[]) {
  if (ids.length === 0) return [];
  return tx
    .selectFrom('products')
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', sql<number>`any(${ids}::int[])`)
    .select(['id', 'name', 'status'])
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Collaborator rates already committed on each product: every collaborator agreement that has not
 * ended counts at the higher of its accepted and its proposed rate (either may come into force).
 */
export async function committedCollaboratorRates(tx: Tx, scope: Scope, productIds: number[], exceptAgreement: number | null) {
  if (productIds.length === 0) return new Map<number, number>();
  const rows = await sql<{ product_id: number; committed: number }>`
    SELECT p.product_id, sum(p.rate)::int AS committed FROM (
      SELECT tp.product_id, a.id, max(tp.rate_bps) AS rate
      FROM partner_agreements a
      JOIN partner_term_products tp ON tp.agreement_id = a.id AND tp.version IN (a.proposed_terms_version, coalesce(a.accepted_terms_version, 0))
      WHERE a.workspace_id = ${scope.workspaceId} AND a.kind = 'collaborator' AND a.status <> 'ended'
        AND tp.product_id = any(${productIds}::int[]) AND a.id <> ${exceptAgreement ?? 0}
      GROUP BY tp.product_id, a.id
    ) p GROUP BY p.product_id`.execute(tx);
  return new Map(rows.rows.map((r) => [r.product_id, Number(r.committed)]));
}

// ---- invitations ----

export async function insertInvitation(
  tx: Tx,
  workspaceId: number,
  i: { agreementId: number; termsVersion: number; email: string; tokenHash: string; tokenNonce: string; expiresAt: Date; emailQueued: boolean; createdBy: number | null },
): Promise<InvitationRecord> {
  return tx
    .insertInto('partner_invitations')
    .values({
      workspace_id: workspaceId,
      agreement_id: i.agreementId,
      terms_version: i.termsVersion,
      email: i.email,
      token_hash: i.tokenHash,
      token_nonce: i.tokenNonce,
      expires_at: i.expiresAt,
      email_queued: i.emailQueued,
      created_by: i.createdBy,
    })
    .returning(INVITATION)
    .executeTakeFirstOrThrow();
}

/** What the invitation e-mail needs when it is sent: address, state, the agreement's name and what derives the token. */
export async function invitationForEmail(db: Executor, workspaceId: number, invitationId: number) {
  return db
    .selectFrom('partner_invitations as i')
    .innerJoin('partner_agreements as a', (j) => j.onRef('a.workspace_id', '=', 'i.workspace_id').onRef('a.id', '=', 'i.agreement_id'))
    .where('i.workspace_id', '=', workspaceId)
    .where('i.id', '=', invitationId)
    .select(['i.email', 'i.status', 'i.expires_at', 'i.token_hash', 'i.token_nonce', 'a.name'])
    .executeTakeFirst();
}

/** Older pending links stop working when a replacement is made. */
export async function revokePendingInvitations(tx: Tx, workspaceId: number, agreementId: number): Promise<void> {
  await tx
    .updateTable('partner_invitations')
    .set({ status: 'revoked' })
    .where('workspace_id', '=', workspaceId)
    .where('agreement_id', '=', agreementId)
    .where('status', '=', 'pending')
    .execute();
}

export async function invitationsSentSince(db: Executor, workspaceId: number, since: Date) {
  const row = await db
    .selectFrom('partner_invitations')
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>', since)
    .select([sql<number>`count(*)::int`.as('n'), sql<Date | null>`min(created_at)`.as('oldest')])
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), oldest: row.oldest };
}

/** For the token routes: an invitation by its token hash, whatever the workspace (the token is the credential). */
export async function invitationByHash(db: Executor, tokenHash: string, lock = false) {
  let q = db
    .selectFrom('partner_invitations as i')
    .innerJoin('partner_agreements as a', 'a.id', 'i.agreement_id')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .where('i.token_hash', '=', tokenHash)
    .where('w.partner_programs_enabled', '=', true)
    .select(['i.id', 'i.workspace_id', 'i.agreement_id', 'i.terms_version', 'i.email', 'i.status', 'i.expires_at', 'i.accepted_by', 'w.name as workspace_name']);
  if (lock) q = q.forUpdate('i');
  return q.executeTakeFirst();
}

export async function markInvitationAccepted(tx: Tx, invitationId: number, recipientId: number): Promise<boolean> {
  const row = await tx
    .updateTable('partner_invitations')
    .set({ status: 'accepted', accepted_at: new Date(), accepted_by: recipientId })
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// ---- consents and audit ----

export async function insertConsent(
  tx: Tx,
  c: { workspaceId: number; agreementId: number; party: 'developer' | 'recipient'; accountId: number | null; recipientId: number | null; termsVersion: number; policyVersion: string; address: string | null },
): Promise<Date> {
  const row = await tx
    .insertInto('partner_consents')
    .values({
      workspace_id: c.workspaceId,
      agreement_id: c.agreementId,
      party: c.party,
      account_id: c.accountId,
      recipient_id: c.recipientId,
      terms_version: c.termsVersion,
      policy_version: c.policyVersion,
      address: c.address,
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  return row.created_at;
}

export async function recordEvent(
  tx: Tx,
  e: { workspaceId: number; agreementId: number; actorKind: 'developer' | 'recipient' | 'operator'; actorId: number | null; action: string; from?: string | null; to?: string | null; data?: Record<string, unknown> },
): Promise<void> {
  await tx
    .insertInto('partner_agreement_events')
    .values({
      workspace_id: e.workspaceId,
      agreement_id: e.agreementId,
      actor_kind: e.actorKind,
      actor_id: e.actorId,
      action: e.action,
      from_status: e.from ?? null,
      to_status: e.to ?? null,
      data: JSON.stringify(e.data ?? {}),
    })
    .execute();
}

export async function eventsOf(db: Executor, workspaceId: number, agreementId: number) {
  return db
    .selectFrom('partner_agreement_events')
    .where('workspace_id', '=', workspaceId)
    .where('agreement_id', '=', agreementId)
    .select(['action', 'actor_kind', 'actor_id', 'from_status', 'to_status', 'created_at'])
    .orderBy('id')
    .execute();
}

/** For fixtures: the recipient of a seeded agreement, verified when it is new (an existing one is left as it is). */
export async function seedRecipient(tx: Tx, email: string): Promise<{ id: number }> {
  return tx
    .insertInto('recipients')
    .values({ email, email_verified_at: new Date() })
    .onConflict((oc) => oc.column('email').doUpdateSet({ email }))
    .returning('id')
    .executeTakeFirstOrThrow();
}
