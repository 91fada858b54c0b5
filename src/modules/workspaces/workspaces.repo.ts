import { type Selectable, sql } from 'kysely';
import type { AccountsTable, MembershipsTable } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';
import { newSerialCode } from '../../platform/ids/codes.js';

// Operator-level writes (fixtures, demo seed, CLI). There is no caller scope
// here: these functions create the tenants that scopes are later built from.

export async function createWorkspace(db: Executor, input: { name: string; billingEligible: boolean; storefrontUrl?: string | null }): Promise<number> {
  const row = await db
    .insertInto('workspaces')
    .values({ name: input.name, billing_eligible: input.billingEligible, storefront_url: input.storefrontUrl ?? null })
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

export async function countWorkspaces(db: Executor): Promise<number> {
  const row = await db.selectFrom('workspaces').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export async function createResellerRelationship(
  db: Executor,
  input: { workspaceId: number; name: string; kind: string; developerShareBps: number | null },
): Promise<{ relationshipId: number; resellerId: number }> {
  const reseller = await db.insertInto('resellers').values({ name: input.name, kind: input.kind }).returning('id').executeTakeFirstOrThrow();
  const rel = await db
    .insertInto('reseller_relationships')
    .values({ workspace_id: input.workspaceId, reseller_id: reseller.id, developer_share_bps: input.developerShareBps })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { relationshipId: rel.id, resellerId: reseller.id };
}

export async function createOrder(
  db: Executor,
  input: {
    workspaceId: number;
    customerId: number;
    reference: string;
    status: string;
    totalCents: number;
    currency: string;
    channel?: string;
    provider?: string;
    resellerId?: number | null;
    externalReference?: string | null;
    refundStatus?: string;
    purchasedAt?: Date;
  },
): Promise<number> {
  const row = await db
    .insertInto('orders')
    .values({
      workspace_id: input.workspaceId,
      customer_id: input.customerId,
      reference: input.reference,
      status: input.status,
      total_cents: input.totalCents,
      currency: input.currency.toLowerCase(),
      ...(input.channel ? { channel: input.channel } : {}),
      ...(input.provider ? { provider: input.provider } : {}),
      ...(input.refundStatus ? { refund_status: input.refundStatus } : {}),
      reseller_id: input.resellerId ?? null,
      external_reference: input.externalReference ?? null,
      ...(input.purchasedAt ? { purchased_at: input.purchasedAt } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function createSerial(
  db: Executor,
  input: {
    workspaceId: number;
    productId: number;
    code?: string | undefined;
    customerId: number | null;
    orderId: number | null;
    maxActivations?: number | undefined;
    expiresAt: string | null;
    activeFrom: string | null;
    activeTo: string | null;
  },
): Promise<{ id: number; code: string }> {
  const product = await db
    .selectFrom('products')
    .where('workspace_id', '=', input.workspaceId)
    .where('id', '=', input.productId)
    .select('max_activations')
    .executeTakeFirstOrThrow();
  const row = await db
    .insertInto('serials')
    .values({
      workspace_id: input.workspaceId,
      product_id: input.productId,
      code: input.code ?? newSerialCode(),
      customer_id: input.customerId,
      order_id: input.orderId,
      origin: input.customerId ? 'granted' : 'generated',
      status: input.customerId ? 'redeemed' : 'available',
      redeemed_at: input.customerId ? new Date() : null,
      max_activations: input.maxActivations ?? product.max_activations,
      expires_at: input.expiresAt ? new Date(input.expiresAt) : null,
      active_from: input.activeFrom ? new Date(input.activeFrom) : null,
      active_to: input.activeTo ? new Date(input.activeTo) : null,
    })
    .returning(['id', 'code'])
    .executeTakeFirstOrThrow();
  return row;
}

// Operator provisioning (the `patchbay` CLI): workspaces, team accounts and memberships.

/** Serialises workspace creation by operators until the transaction ends, so a name check stays true. */
export async function lockWorkspaceNames(tx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended('workspace-names', 0))`.execute(tx);
}

/** Workspaces whose name equals one of these, ignoring case and surrounding spaces. */
export async function workspacesNamed(db: Executor, names: string[]): Promise<Array<{ id: number; name: string }>> {
  if (names.length === 0) return [];
  const keys = names.map((n) => n.trim().toLowerCase());
  return db
    .selectFrom('workspaces')
    .where(sql<string>`lower(btrim(name))`, '=', sql<string>`any(${keys}::text[])`)
    .select(['id', 'name'])
    .orderBy('id')
    .execute();
}

export async function findWorkspace(db: Executor, workspaceId: number) {
  return db
    .selectFrom('workspaces')
    .where('id', '=', workspaceId)
    .select(['id', 'name', 'billing_eligible', 'storefront_url', 'created_at'])
    .executeTakeFirst();
}

export async function listWorkspaces(db: Executor) {
  return db
    .selectFrom('workspaces as w')
    .select((eb) => [
      'w.id',
      'w.name',
      'w.billing_eligible',
      'w.storefront_url',
      'w.created_at',
      eb.selectFrom('memberships as m').whereRef('m.workspace_id', '=', 'w.id').select(sql<number>`count(*)::int`.as('n')).as('members'),
      eb.selectFrom('products as p').whereRef('p.workspace_id', '=', 'w.id').select(sql<number>`count(*)::int`.as('n')).as('products'),
    ])
    .orderBy('w.id')
    .execute();
}

/** Creates the account, or finds it (unchanged) when the address is known already (customers are accounts too). */
export async function createAccount(db: Executor, input: { email: string; emailVerified: boolean }): Promise<{ id: number; email: string; email_verified: boolean; created: boolean }> {
  const email = input.email.trim();
  const inserted = await db
    .insertInto('accounts')
    .values({ email, email_normalized: email.toLowerCase(), email_verified: input.emailVerified })
    .onConflict((oc) => oc.column('email_normalized').doNothing())
    .returning(['id', 'email', 'email_verified'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  const existing = await db
    .selectFrom('accounts')
    .where('email_normalized', '=', email.toLowerCase())
    .select(['id', 'email', 'email_verified'])
    .executeTakeFirstOrThrow();
  return { ...existing, created: false };
}

/** A membership with the member's address and assigned products. */
export type MemberRecord = Pick<Selectable<MembershipsTable>, 'workspace_id' | 'account_id' | 'owner' | 'permissions' | 'all_products' | 'created_at'> &
  Pick<Selectable<AccountsTable>, 'email'> & { product_ids: number[] };

/** Team members (accounts with a membership), of one workspace or of all; customers without a membership are not listed. */
export async function listMembers(db: Executor, filter: { workspaceId?: number | undefined; accountId?: number | undefined }): Promise<MemberRecord[]> {
  let query = db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select([
      'm.workspace_id',
      'm.account_id',
      'a.email',
      'm.owner',
      'm.permissions',
      'm.all_products',
      sql<number[]>`array(select mp.product_id from membership_products mp where mp.workspace_id = m.workspace_id and mp.account_id = m.account_id order by mp.product_id)`.as(
        'product_ids',
      ),
      'm.created_at',
    ])
    .orderBy('m.account_id')
    .orderBy('m.workspace_id');
  if (filter.workspaceId !== undefined) query = query.where('m.workspace_id', '=', filter.workspaceId);
  if (filter.accountId !== undefined) query = query.where('m.account_id', '=', filter.accountId);
  return query.execute();
}

export async function findMember(db: Executor, workspaceId: number, accountId: number): Promise<MemberRecord | undefined> {
  return (await listMembers(db, { workspaceId, accountId }))[0];
}

/** Locks the workspace's memberships (the owner count is checked under it). */
export async function lockMemberships(tx: Executor, workspaceId: number): Promise<void> {
  await sql`select 1 from memberships where workspace_id = ${workspaceId} for update`.execute(tx);
}

export async function countOwners(db: Executor, workspaceId: number): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .where('workspace_id', '=', workspaceId)
    .where('owner', '=', true)
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Changes a membership; `productIds` replaces the assignment ('all', or exactly these products). */
export async function updateMembership(
  db: Executor,
  input: { workspaceId: number; accountId: number; owner?: boolean | undefined; permissions?: string[] | undefined; productIds?: number[] | 'all' | undefined },
): Promise<void> {
  const set = {
    ...(input.owner === undefined ? {} : { owner: input.owner }),
    ...(input.permissions === undefined ? {} : { permissions: sql<string[]>`${input.permissions}::text[]` }),
    ...(input.productIds === undefined ? {} : { all_products: input.productIds === 'all' }),
  };
  if (Object.keys(set).length > 0) {
    await db.updateTable('memberships').set(set).where('workspace_id', '=', input.workspaceId).where('account_id', '=', input.accountId).execute();
  }
  if (input.productIds !== undefined) {
    await db.deleteFrom('membership_products').where('workspace_id', '=', input.workspaceId).where('account_id', '=', input.accountId).execute();
    if (input.productIds !== 'all' && input.productIds.length > 0) {
      await db
        .insertInto('membership_products')
        .values(input.productIds.map((product_id) => ({ workspace_id: input.workspaceId, account_id: input.accountId, product_id })))
        .execute();
    }
  }
}

export async function removeMembership(db: Executor, workspaceId: number, accountId: number): Promise<boolean> {
  const result = await db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Which of these product ids belong to the workspace. */
export async function productsOfWorkspace(db: Executor, workspaceId: number, productIds: number[]): Promise<number[]> {
  if (productIds.length === 0) return [];
  const rows = await db.selectFrom('products').where('workspace_id', '=', workspaceId).where('id', 'in', productIds).select('id').execute();
  return rows.map((r) => r.id);
}
