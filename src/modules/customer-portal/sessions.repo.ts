import { sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// Buyers' identity: sign-in links and sessions. A buyer is a customer relationship of one
// workspace (developer_customers), so every row here carries the workspace and the relationship.

export interface PortalWorkspace {
  id: number;
  name: string;
  slug: string | null;
  customer_portal_enabled: boolean;
}

const WORKSPACE_COLUMNS = ['id', 'name', 'slug', 'customer_portal_enabled'] as const;

/** A workspace by its id (digits) or its public slug. */
export async function findWorkspace(db: Executor, ref: string): Promise<PortalWorkspace | undefined> {
  const query = db.selectFrom('workspaces').select(WORKSPACE_COLUMNS);
  if (/^\d{1,10}$/.test(ref)) {
    const id = Number(ref);
    return id > 0 && id <= 2_147_483_647 ? query.where('id', '=', id).executeTakeFirst() : undefined;
  }
  return query.where('slug', '=', ref.toLowerCase()).executeTakeFirst();
}

export async function workspaceById(db: Executor, workspaceId: number): Promise<PortalWorkspace | undefined> {
  return db.selectFrom('workspaces').where('id', '=', workspaceId).select(WORKSPACE_COLUMNS).executeTakeFirst();
}

/** An active customer of the workspace with this (normalised) address: one index lookup per table. */
export async function activeCustomerByEmail(db: Executor, workspaceId: number, emailNormalized: string) {
  return db
    .selectFrom('accounts as a')
    .innerJoin('developer_customers as dc', (j) => j.onRef('dc.account_id', '=', 'a.id').on('dc.workspace_id', '=', workspaceId))
    .where('a.email_normalized', '=', emailNormalized)
    .where('dc.status', '=', 'active')
    .select(['dc.id', 'dc.account_id'])
    .executeTakeFirst();
}

export async function insertSignInLink(tx: Tx, link: { workspaceId: number; customerId: number; tokenHash: string; tokenNonce: string; expiresAt: Date }): Promise<number> {
  const row = await tx
    .insertInto('customer_portal_sign_in_links')
    .values({ workspace_id: link.workspaceId, customer_id: link.customerId, token_hash: link.tokenHash, token_nonce: link.tokenNonce, expires_at: link.expiresAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** What the sign-in e-mail needs when it is sent: the link's state, the address and the workspace. */
export async function signInLinkForEmail(db: Executor, signInLinkId: number) {
  return db
    .selectFrom('customer_portal_sign_in_links as l')
    .innerJoin('developer_customers as dc', (j) => j.onRef('dc.workspace_id', '=', 'l.workspace_id').onRef('dc.id', '=', 'l.customer_id'))
    .innerJoin('workspaces as w', 'w.id', 'l.workspace_id')
    .where('l.id', '=', signInLinkId)
    .select(['l.token_hash', 'l.token_nonce', 'l.expires_at', 'l.used_at', 'dc.email', 'dc.status', 'w.id as workspace_id', 'w.name as workspace_name', 'w.slug', 'w.customer_portal_enabled'])
    .executeTakeFirst();
}

/** Uses a live link once; the relationship it was made for, or nothing. */
export async function consumeSignInLink(tx: Tx, tokenHash: string) {
  return tx
    .updateTable('customer_portal_sign_in_links')
    .set({ used_at: sql`now()` })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['workspace_id', 'customer_id'])
    .executeTakeFirst();
}

export async function insertSession(tx: Tx, session: { workspaceId: number; customerId: number; tokenHash: string; expiresAt: Date }): Promise<number> {
  const row = await tx
    .insertInto('customer_portal_sessions')
    .values({ workspace_id: session.workspaceId, customer_id: session.customerId, token_hash: session.tokenHash, expires_at: session.expiresAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * A live session with what the policy hook checks on every request: the relationship is still
 * active (a removed customer is signed out at once) and whether the workspace's portal is on.
 */
export async function sessionByHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('customer_portal_sessions as s')
    .innerJoin('developer_customers as dc', (j) => j.onRef('dc.workspace_id', '=', 's.workspace_id').onRef('dc.id', '=', 's.customer_id'))
    .innerJoin('workspaces as w', 'w.id', 's.workspace_id')
    .where('s.token_hash', '=', tokenHash)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('dc.status', '=', 'active')
    .select(['s.id', 's.workspace_id', 's.customer_id', 's.expires_at', 'dc.account_id', 'dc.email', 'w.customer_portal_enabled'])
    .executeTakeFirst();
}

/** The buyer as a session answer shows them. */
export async function customerProfile(db: Executor, workspaceId: number, customerId: number) {
  return db
    .selectFrom('developer_customers as dc')
    .innerJoin('workspaces as w', 'w.id', 'dc.workspace_id')
    .where('dc.workspace_id', '=', workspaceId)
    .where('dc.id', '=', customerId)
    .select(['dc.id', 'dc.account_id', 'dc.email', 'dc.first_name', 'dc.last_name', 'dc.status', 'w.name as workspace_name', 'w.slug', 'w.customer_portal_enabled'])
    .executeTakeFirst();
}

export async function endSession(db: Executor, workspaceId: number, sessionId: number): Promise<void> {
  await db
    .updateTable('customer_portal_sessions')
    .set({ ended_at: sql`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .execute();
}

/** Housekeeping: links a day past their expiry and sessions a week past theirs are of no use to anyone. */
export async function deleteExpired(db: Executor): Promise<number> {
  const links = await db.deleteFrom('customer_portal_sign_in_links').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst();
  const sessions = await db.deleteFrom('customer_portal_sessions').where('expires_at', '<', sql<Date>`now() - interval '7 days'`).executeTakeFirst();
  return Number(links.numDeletedRows) + Number(sessions.numDeletedRows);
}

/** Operator settings: the public slug and the portal switch. */
export async function updatePortalSettings(db: Executor, workspaceId: number, settings: { slug?: string | null; enabled?: boolean }): Promise<PortalWorkspace | undefined> {
  const set = {
    ...(settings.slug === undefined ? {} : { slug: settings.slug }),
    ...(settings.enabled === undefined ? {} : { customer_portal_enabled: settings.enabled }),
  };
  if (Object.keys(set).length === 0) return workspaceById(db, workspaceId);
  return db.updateTable('workspaces').set(set).where('id', '=', workspaceId).returning(WORKSPACE_COLUMNS).executeTakeFirst();
}
