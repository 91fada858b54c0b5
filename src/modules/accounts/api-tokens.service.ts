import { randomBytes } from 'node:crypto';
import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { hashLinkToken } from '../../platform/mail/link-tokens.js';
import { AccountErrors } from './accounts.errors.js';
import * as repo from './api-tokens.repo.js';

/** Unrevoked tokens one member may hold in a workspace. */
export const API_TOKEN_LIMIT = 50;
/** `last_used_at` is written at most this often per token. */
export const LAST_USED_EVERY_SECONDS = 60;
/** How much of a token is kept in clear to recognise it (`pat_` and 8 characters: 48 bits, no help to a guesser). */
const PREFIX_LENGTH = 12;

type TokenRecord = NonNullable<Awaited<ReturnType<typeof repo.findToken>>>;

const tokenRow = (t: Omit<TokenRecord, 'account_id' | 'email'>, member: { id: number; email: string }) => ({
  id: t.id,
  name: t.name,
  prefix: t.prefix,
  created_at: t.created_at.toISOString(),
  last_used_at: t.last_used_at?.toISOString() ?? null,
  expires_at: t.expires_at?.toISOString() ?? null,
  member,
});

/**
 * API tokens for scripts: `pat_…`, shown once, stored as a SHA-256 hash. A token acts as the
 * member who made it, in the workspace it was made in, with what that member holds at the time
 * of each request (never more); it dies with the membership. Members see and revoke their own
 * tokens; the owner sees and revokes everyone's.
 */
export class ApiTokens {
  constructor(private readonly db: Db) {}

  async list(scope: Scope) {
    const rows = await repo.listTokens(this.db, scope, scope.owner);
    return { rows: rows.map((t) => tokenRow(t, { id: t.account_id, email: t.email })) };
  }

  async create(scope: Scope, input: { name: string; expiresInDays?: number | undefined }) {
    const token = `pat_${randomBytes(32).toString('base64url')}`;
    const expiresAt = input.expiresInDays === undefined ? null : new Date(Date.now() + input.expiresInDays * 86_400_000);
    return inTransaction(this.db, async (tx) => {
      await repo.lockMembership(tx, scope);
      if ((await repo.countActive(tx, scope)) >= API_TOKEN_LIMIT) {
        throw new AppError(AccountErrors.API_TOKEN_LIMIT_REACHED, `A member holds at most ${API_TOKEN_LIMIT} API tokens in a workspace; revoke one first`);
      }
      const row = await repo.insertToken(tx, scope, { name: input.name, prefix: token.slice(0, PREFIX_LENGTH), tokenHash: hashLinkToken(token), expiresAt });
      await writeAudit(tx, scope, { action: 'api_token.created', subjectType: 'api_token', subjectId: row.id, data: { name: row.name, prefix: row.prefix, expires_at: row.expires_at?.toISOString() ?? null } });
      const member = (await repo.findToken(tx, scope, row.id))!;
      return { ...tokenRow(row, { id: scope.accountId, email: member.email }), token };
    });
  }

  async revoke(scope: Scope, tokenId: number) {
    return inTransaction(this.db, async (tx) => {
      const found = await repo.findToken(tx, scope, tokenId);
      // A teammate's token does not exist for a member who is not the owner.
      if (!found || (found.account_id !== scope.accountId && !scope.owner)) throw notFound('API token');
      if (!(await repo.revokeToken(tx, scope, tokenId))) throw notFound('API token');
      await writeAudit(tx, scope, { action: 'api_token.revoked', subjectType: 'api_token', subjectId: tokenId, data: { name: found.name, prefix: found.prefix, member_id: found.account_id } });
      return { id: tokenId, revoked: true as const };
    });
  }

  /** For the policy hook: the member and workspace a live token acts for, or null. */
  async verify(token: string): Promise<{ accountId: number; workspaceId: number } | null> {
    const row = await repo.liveToken(this.db, hashLinkToken(token));
    if (!row) return null;
    // The row read here says whether a minute has passed; the UPDATE checks again, so of
    // concurrent requests at that moment one changes the row and the rest change nothing.
    if (row.last_used_at === null || Date.now() - row.last_used_at.getTime() >= LAST_USED_EVERY_SECONDS * 1000) {
      await repo.touchToken(this.db, row.id, LAST_USED_EVERY_SECONDS);
    }
    return { accountId: row.account_id, workspaceId: row.workspace_id };
  }
}
