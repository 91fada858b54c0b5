import { sql } from 'kysely';
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
