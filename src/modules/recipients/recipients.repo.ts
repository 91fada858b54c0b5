import { type Selectable, sql } from 'kysely';
import type { RecipientsTable } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';

// Recipients are not workspace members: these queries take no workspace scope. A recipient's
// reach into workspaces goes only through agreements addressed to them (partners module).

export type RecipientRecord = Omit<Selectable<RecipientsTable>, 'created_at'>;

export async function findRecipient(db: Executor, email: string): Promise<RecipientRecord | undefined> {
  return db.selectFrom('recipients').where('email', '=', email).select(['id', 'email', 'email_verified_at', 'active']).executeTakeFirst();
}

/** The recipient of an address, created on first sign-in; `verified` marks the address proven now. */
export async function upsertRecipient(db: Executor, email: string, verified: boolean): Promise<RecipientRecord> {
  return db
    .insertInto('recipients')
    .values({ email, email_verified_at: verified ? new Date() : null })
    .onConflict((oc) =>
      oc.column('email').doUpdateSet(verified ? { email_verified_at: sql`coalesce(recipients.email_verified_at, now())` } : { email: sql`recipients.email` }),
    )
    .returning(['id', 'email', 'email_verified_at', 'active'])
    .executeTakeFirstOrThrow();
}

/** An address someone may sign in with: a recipient already, or invited to an agreement. */
export async function addressIsKnown(db: Executor, email: string): Promise<boolean> {
  const row = await sql<{ known: boolean }>`
    SELECT EXISTS (SELECT 1 FROM recipients WHERE email = ${email} AND active)
        OR EXISTS (SELECT 1 FROM partner_agreements WHERE recipient_email = ${email}) AS known`.execute(db);
  return row.rows[0]?.known ?? false;
}

export async function insertSignInLink(db: Executor, link: { email: string; tokenHash: string; tokenNonce: string; expiresAt: Date }): Promise<number> {
  const row = await db
    .insertInto('recipient_sign_in_links')
    .values({ email: link.email, token_hash: link.tokenHash, token_nonce: link.tokenNonce, expires_at: link.expiresAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** What the sign-in e-mail needs when it is sent: the address, the state and what derives the token. */
export async function signInLinkForEmail(db: Executor, id: number) {
  return db
    .selectFrom('recipient_sign_in_links')
    .where('id', '=', id)
    .select(['email', 'token_hash', 'token_nonce', 'expires_at', 'used_at'])
    .executeTakeFirst();
}

/** Uses a sign-in link once: the first caller gets its address, every later one (or after expiry) nothing. */
export async function consumeSignInLink(db: Executor, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .updateTable('recipient_sign_in_links')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('email')
    .executeTakeFirst();
  return row?.email;
}

export async function insertSession(db: Executor, recipientId: number, tokenHash: string, verified: boolean, expiresAt: Date): Promise<number> {
  const row = await db
    .insertInto('recipient_sessions')
    .values({ recipient_id: recipientId, token_hash: tokenHash, verified, expires_at: expiresAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function sessionByHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('recipient_sessions as s')
    .innerJoin('recipients as r', 'r.id', 's.recipient_id')
    .where('s.token_hash', '=', tokenHash)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', new Date())
    .where('r.active', '=', true)
    .select(['s.id as sessionId', 's.verified', 'r.id as recipientId', 'r.email'])
    .executeTakeFirst();
}

export async function endSession(db: Executor, sessionId: number): Promise<void> {
  await db.updateTable('recipient_sessions').set({ ended_at: new Date() }).where('id', '=', sessionId).where('ended_at', 'is', null).execute();
}
