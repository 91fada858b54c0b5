import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Executor } from '../../platform/db/transaction.js';

// Console sign-in links and sessions belong to an account, not to a workspace: what a session
// reaches is decided per request from the account's memberships (the policy hook).

/** The account of an address that may sign in to the console: one that is a member of some workspace. */
export async function consoleAccount(db: Executor, emailNormalized: string) {
  return db
    .selectFrom('accounts as a')
    .where('a.email_normalized', '=', emailNormalized)
    .where(({ exists, selectFrom }) => exists(selectFrom('memberships as m').whereRef('m.account_id', '=', 'a.id').select('m.account_id')))
    .select(['a.id', 'a.email'])
    .executeTakeFirst();
}

export async function insertSignInLink(
  db: Executor,
  link: { accountId: number; purpose: 'sign_in' | 'invitation' | 'banner'; workspaceId: number | null; tokenHash: string; tokenNonce: string; expiresAt: Date },
): Promise<number> {
  const row = await db
    .insertInto('developer_sign_in_links')
    .values({
      account_id: link.accountId,
      purpose: link.purpose,
      workspace_id: link.workspaceId,
      token_hash: link.tokenHash,
      token_nonce: link.tokenNonce,
      expires_at: link.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** What a sign-in or invitation e-mail needs when it is sent: the address, the state, what derives the token, and for an invitation the workspace and who invited. */
export async function signInLinkForEmail(db: Executor, id: number) {
  return db
    .selectFrom('developer_sign_in_links as l')
    .innerJoin('accounts as a', 'a.id', 'l.account_id')
    .leftJoin('workspaces as w', 'w.id', 'l.workspace_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.workspace_id', '=', 'l.workspace_id').onRef('m.account_id', '=', 'l.account_id'))
    .leftJoin('accounts as inviter', 'inviter.id', 'm.invited_by')
    .where('l.id', '=', id)
    .select([
      'a.email',
      'l.purpose',
      'l.token_hash',
      'l.token_nonce',
      'l.expires_at',
      'l.used_at',
      'l.workspace_id',
      'w.name as workspace_name',
      'm.account_id as member_account_id',
      'inviter.email as inviter_email',
    ])
    .executeTakeFirst();
}

/** Uses a link once: the first caller gets its account, every later one (or after expiry) nothing. */
export async function consumeSignInLink(db: Executor, tokenHash: string): Promise<number | undefined> {
  const row = await db
    .updateTable('developer_sign_in_links')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id;
}

/** A link proved the address: the account is verified, and invitations it had are joined now. */
export async function markSignedIn(db: Executor, accountId: number): Promise<{ id: number; email: string }> {
  await db.updateTable('memberships').set({ joined_at: new Date() }).where('account_id', '=', accountId).where('joined_at', 'is', null).execute();
  return db.updateTable('accounts').set({ email_verified: true }).where('id', '=', accountId).returning(['id', 'email']).executeTakeFirstOrThrow();
}

export async function insertSession(db: Executor, accountId: number, tokenHash: string, expiresAt: Date): Promise<number> {
  const row = await db.insertInto('developer_sessions').values({ account_id: accountId, token_hash: tokenHash, expires_at: expiresAt }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function sessionByHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('developer_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .where('s.token_hash', '=', tokenHash)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', new Date())
    .select(['s.id', 's.account_id', 's.expires_at', 'a.email'])
    .executeTakeFirst();
}

export async function endSession(db: Executor, sessionId: number): Promise<void> {
  await db.updateTable('developer_sessions').set({ ended_at: new Date() }).where('id', '=', sessionId).where('ended_at', 'is', null).execute();
}

/** The workspaces an account is a member of, owned ones first. */
export async function workspacesOf(db: Executor, accountId: number) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .where('m.account_id', '=', accountId)
    .select(['w.id', 'w.name', 'm.owner'])
    .orderBy('m.owner', 'desc')
    .orderBy('w.name')
    .orderBy('w.id')
    .execute();
}

/** Links and sessions that ended more than a day ago are of no use to anyone. */
export async function deleteExpired(db: Db): Promise<number> {
  const links = await sql`DELETE FROM developer_sign_in_links WHERE expires_at < now() - interval '1 day'`.execute(db);
  const sessions = await sql`DELETE FROM developer_sessions WHERE expires_at < now() - interval '1 day'`.execute(db);
  return Number(links.numAffectedRows ?? 0n) + Number(sessions.numAffectedRows ?? 0n);
}

/** A removed member's unused invitation links to the workspace stop working (and their e-mail, if still queued, is not sent). */
export async function withdrawInvitations(db: Executor, workspaceId: number, accountId: number): Promise<void> {
  await db.deleteFrom('developer_sign_in_links').where('workspace_id', '=', workspaceId).where('account_id', '=', accountId).where('used_at', 'is', null).execute();
}
