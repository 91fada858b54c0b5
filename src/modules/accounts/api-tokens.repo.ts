import { sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// API tokens of a workspace's members. Listing and revoking start from the scope's workspace;
// resolving a presented token (the policy hook) goes by its hash alone.

function tokens(db: Executor, scope: Scope) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .where('t.workspace_id', '=', scope.workspaceId)
    .where('t.revoked_at', 'is', null)
    .select(['t.id', 't.name', 't.prefix', 't.created_at', 't.last_used_at', 't.expires_at', 't.account_id', 'a.email']);
}

/** The caller's own tokens, or with `everyone` (the owner) every member's. */
export async function listTokens(db: Executor, scope: Scope, everyone: boolean) {
  const query = tokens(db, scope).orderBy('t.id', 'desc');
  return (everyone ? query : query.where('t.account_id', '=', scope.accountId)).execute();
}

export async function findToken(db: Executor, scope: Scope, tokenId: number) {
  return tokens(db, scope).where('t.id', '=', tokenId).executeTakeFirst();
}

/** Serialises a member's token creations (the limit is counted under it). */
export async function lockMembership(tx: Tx, scope: Scope): Promise<void> {
  await tx.selectFrom('memberships').where('workspace_id', '=', scope.workspaceId).where('account_id', '=', scope.accountId).select('account_id').forUpdate().execute();
}

export async function countActive(tx: Tx, scope: Scope): Promise<number> {
  const row = await tx
    .selectFrom('api_tokens')
    .where('workspace_id', '=', scope.workspaceId)
    .where('account_id', '=', scope.accountId)
    .where('revoked_at', 'is', null)
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function insertToken(tx: Tx, scope: Scope, t: { name: string; prefix: string; tokenHash: string; expiresAt: Date | null }) {
  return tx
    .insertInto('api_tokens')
    .values({ workspace_id: scope.workspaceId, account_id: scope.accountId, name: t.name, prefix: t.prefix, token_hash: t.tokenHash, expires_at: t.expiresAt })
    .returning(['id', 'name', 'prefix', 'created_at', 'last_used_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

export async function revokeToken(tx: Tx, scope: Scope, tokenId: number): Promise<boolean> {
  const result = await tx
    .updateTable('api_tokens')
    .set({ revoked_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', tokenId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A presented token that works now: not revoked, not expired, its membership still there (the foreign key removes it with the member). */
export async function liveToken(db: Executor, tokenHash: string) {
  return db
    .selectFrom('api_tokens')
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]))
    .select(['id', 'workspace_id', 'account_id', 'last_used_at'])
    .executeTakeFirst();
}

/** At most one write a minute per token, however many requests use it (concurrent ones included). */
export async function touchToken(db: Executor, tokenId: number, everySeconds: number): Promise<void> {
  await sql`UPDATE api_tokens SET last_used_at = now()
    WHERE id = ${tokenId} AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ${everySeconds}))`.execute(db);
}
