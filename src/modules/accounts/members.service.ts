import { writeAudit } from '../../platform/audit/audit.repo.js';
import { type Permission, WILDCARD } from '../../platform/auth/permissions.js';
import { AuthErrors, scopeOfMember } from '../../platform/auth/policy.js';
import { canSeeProduct, hasPermission, type Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, forbidden, notFound } from '../../platform/http/errors.js';
import { pageWindow, type PageQuery } from '../../platform/paging/paged-list.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { AccountErrors } from './accounts.errors.js';
import { INVITATION_LINK_TTL_HOURS, MEMBER_INVITATION_EMAIL } from './accounts.emails.js';
import * as repo from './members.repo.js';
import { withdrawInvitations } from './sessions.repo.js';
import type { ConsoleSessions } from './sessions.service.js';

/** What a member may use: catalogue permissions (or `*`) and `all` products or some. */
export interface Grant {
  permissions: string[];
  products: 'all' | number[];
}

export const memberRow = (m: repo.MemberRecord) => ({
  id: m.account_id,
  email: m.email,
  owner: m.owner,
  permissions: m.permissions,
  products: m.owner || m.all_products ? ('all' as const) : m.product_ids,
  invited_at: m.created_at.toISOString(),
  joined_at: m.joined_at?.toISOString() ?? null,
});

const holds = (scope: Scope, permission: string) =>
  permission === WILDCARD ? scope.owner || scope.permissions.has(WILDCARD) : hasPermission(scope, permission as Permission);

const exceeds = (detail: string) => new AppError(AccountErrors.GRANT_EXCEEDS_OWN_ACCESS, detail);

/**
 * The caller as they are now, under the lock of their own row: the request's scope was read before
 * the transaction, and a concurrent change (another manager removing them, or narrowing them) wins.
 */
async function lockedCaller(tx: Tx, scope: Scope, targetId?: number): Promise<{ caller: Scope; targetExists: boolean }> {
  const locked = await repo.lockMembers(tx, scope, targetId === undefined ? [scope.accountId] : [scope.accountId, targetId]);
  const caller = locked.has(scope.accountId) ? await scopeOfMember(tx, scope.accountId, scope.workspaceId) : null;
  if (!caller) throw new AppError(AuthErrors.WORKSPACE_ACCESS_DENIED, 'The account is no longer a member of the workspace');
  if (!hasPermission(caller, 'members.manage')) throw forbidden('members.manage');
  return { caller, targetExists: targetId !== undefined && locked.has(targetId) };
}

/** A member grants only what they hold themselves; products they cannot see do not exist for them (422, not 403). */
async function checkGrant(tx: Tx, scope: Scope, grant: Partial<Grant>): Promise<void> {
  const missing = (grant.permissions ?? []).filter((p) => !holds(scope, p));
  if (missing.length > 0) throw exceeds(`You do not hold ${missing.map((p) => `"${p}"`).join(', ')}, so you cannot grant it`);
  if (grant.products === 'all' && scope.products !== 'all') throw exceeds('You are assigned to some products only, so you cannot grant all products');
  if (Array.isArray(grant.products)) {
    const existing = await repo.existingProducts(tx, scope, grant.products);
    const errors = grant.products
      .map((id, index) => ({ id, index }))
      .filter(({ id }) => !existing.has(id) || !canSeeProduct(scope, id))
      .map(({ id, index }) => ({ path: `/products/${index}`, message: `Product ${id} is not a product you can assign` }));
    if (errors.length > 0) throw new AppError(AccountErrors.UNKNOWN_PRODUCT, errors.map((e) => e.message).join('; '), { errors });
  }
}

/** A member changes or removes only teammates whose access is within their own, and never the owner. */
function checkTarget(scope: Scope, target: repo.MemberRecord): void {
  if (target.owner) throw new AppError(AccountErrors.OWNER_PROTECTED, 'The workspace owner cannot be removed or changed');
  const beyond = target.permissions.filter((p) => !holds(scope, p));
  if (beyond.length > 0) throw exceeds(`This member holds ${beyond.map((p) => `"${p}"`).join(', ')}, which you do not`);
  const products = target.all_products ? 'all' : target.product_ids;
  if (products === 'all' ? scope.products !== 'all' : products.some((id) => !canSeeProduct(scope, id))) {
    throw exceeds('This member is assigned to products you are not');
  }
}

/**
 * The team of a workspace: invite by e-mail (a sign-in link), change permissions and products,
 * remove. Every change is audited in its transaction. What a member may do is read per request
 * (the policy hook loads the membership), so a change or a removal takes effect on the member's
 * next request, whatever credential they use.
 */
export class Members {
  constructor(
    private readonly db: Db,
    private readonly sessions: ConsoleSessions,
  ) {}

  async list(scope: Scope, query: PageQuery) {
    const { page, pageSize, offset } = pageWindow(query);
    const [rows, total] = await Promise.all([repo.listMembers(this.db, scope, { limit: pageSize, offset }), repo.countMembers(this.db, scope)]);
    return { rows: rows.map(memberRow), total, page, pageSize };
  }

  async invite(requester: Scope, input: { email: string } & Grant) {
    return inTransaction(this.db, async (tx) => {
      const { caller: scope } = await lockedCaller(tx, requester);
      await checkGrant(tx, scope, input);
      const permissions = [...new Set(input.permissions)];
      const accountId = await repo.accountFor(tx, input.email);
      if (!(await repo.insertMember(tx, scope, { accountId, permissions, allProducts: input.products === 'all' }))) {
        throw new AppError(AccountErrors.MEMBER_EXISTS, 'This address already belongs to a member of the workspace');
      }
      if (input.products !== 'all') await repo.setMemberProducts(tx, scope, accountId, [...new Set(input.products)]);
      const signInLinkId = await this.sessions.mintLink(tx, accountId, 'invitation', scope.workspaceId, INVITATION_LINK_TTL_HOURS * 3_600_000);
      await enqueueEmail(tx, { workspaceId: scope.workspaceId }, MEMBER_INVITATION_EMAIL, { signInLinkId });
      const member = memberRow((await repo.findMember(tx, scope, accountId))!);
      await writeAudit(tx, scope, { action: 'member.invited', subjectType: 'member', subjectId: accountId, data: { email: member.email, permissions, products: member.products } });
      return member;
    });
  }

  async update(requester: Scope, accountId: number, change: Partial<Grant>) {
    return inTransaction(this.db, async (tx) => {
      const { caller: scope, targetExists } = await lockedCaller(tx, requester, accountId);
      const before = targetExists ? await repo.findMember(tx, scope, accountId) : undefined;
      if (!before) throw notFound('Member');
      checkTarget(scope, before);
      await checkGrant(tx, scope, change);
      await repo.updateMember(tx, scope, accountId, {
        ...(change.permissions ? { permissions: [...new Set(change.permissions)] } : {}),
        ...(change.products !== undefined ? { allProducts: change.products === 'all' } : {}),
      });
      if (change.products !== undefined) await repo.setMemberProducts(tx, scope, accountId, change.products === 'all' ? [] : [...new Set(change.products)]);
      const after = memberRow((await repo.findMember(tx, scope, accountId))!);
      const was = memberRow(before);
      await writeAudit(tx, scope, {
        action: 'member.changed',
        subjectType: 'member',
        subjectId: accountId,
        data: { email: after.email, before: { permissions: was.permissions, products: was.products }, after: { permissions: after.permissions, products: after.products } },
      });
      return after;
    });
  }

  /** Removes a member: their membership, product assignment and API tokens go in one statement; their JWTs and sessions find no membership from the next request on. */
  async remove(requester: Scope, accountId: number) {
    return inTransaction(this.db, async (tx) => {
      const { caller: scope, targetExists } = await lockedCaller(tx, requester, accountId);
      const target = targetExists ? await repo.findMember(tx, scope, accountId) : undefined;
      if (!target) throw notFound('Member');
      checkTarget(scope, target);
      await repo.deleteMember(tx, scope, accountId);
      await withdrawInvitations(tx, scope.workspaceId, accountId);
      const was = memberRow(target);
      await writeAudit(tx, scope, { action: 'member.removed', subjectType: 'member', subjectId: accountId, data: { email: was.email, permissions: was.permissions, products: was.products } });
      return { id: accountId, removed: true as const };
    });
  }
}
