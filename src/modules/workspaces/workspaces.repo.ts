import { sql } from 'kysely';
import type { Executor } from '../../platform/db/transaction.js';

// Operator-level writes (fixtures, demo seed, CLI). There is no caller scope
// here: these functions create the tenants that scopes are later built from.

export async function createWorkspace(db: Executor, input: { name: string; billingEligible: boolean }): Promise<number> {
  const row = await db
    .insertInto('workspaces')
    .values({ name: input.name, billing_eligible: input.billingEligible })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function upsertAccount(db: Executor, input: { email: string; emailVerified: boolean }): Promise<number> {
  const row = await db
    .insertInto('accounts')
    .values({ email: input.email.trim(), email_normalized: input.email.trim().toLowerCase(), email_verified: input.emailVerified })
    .onConflict((oc) => oc.column('email_normalized').doUpdateSet({ email_verified: input.emailVerified }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function findAccount(db: Executor, idOrEmail: string) {
  const query = db.selectFrom('accounts').select(['id', 'email']);
  return /^\d+$/.test(idOrEmail)
    ? query.where('id', '=', Number(idOrEmail)).executeTakeFirst()
    : query.where('email_normalized', '=', idOrEmail.trim().toLowerCase()).executeTakeFirst();
}

export async function membershipsOf(db: Executor, accountId: number) {
  return db
    .selectFrom('memberships')
    .where('account_id', '=', accountId)
    .select(['workspace_id', 'owner'])
    .orderBy('owner', 'desc')
    .orderBy('created_at')
    .execute();
}

export async function addMembership(
  db: Executor,
  input: { workspaceId: number; accountId: number; owner: boolean; permissions: string[]; productIds: number[] | 'all' },
): Promise<void> {
  await db
    .insertInto('memberships')
    .values({
      workspace_id: input.workspaceId,
      account_id: input.accountId,
      owner: input.owner,
      permissions: sql`${input.permissions}::text[]`,
      all_products: input.productIds === 'all',
    })
    .execute();
  if (input.productIds !== 'all' && input.productIds.length > 0) {
    await db
      .insertInto('membership_products')
      .values(input.productIds.map((product_id) => ({ workspace_id: input.workspaceId, account_id: input.accountId, product_id })))
      .execute();
  }
}

export async function createProduct(
  db: Executor,
  input: { workspaceId: number; name: string; maxActivations: number; priceCents: number; currency: string },
): Promise<number> {
  const row = await db
    .insertInto('products')
    .values({
      workspace_id: input.workspaceId,
      name: input.name,
      max_activations: input.maxActivations,
      price_cents: input.priceCents,
      currency: input.currency.toLowerCase(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function countWorkspaces(db: Executor): Promise<number> {
  const row = await db.selectFrom('workspaces').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}
