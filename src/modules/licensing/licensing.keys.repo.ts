import { sql } from 'kysely';
import type { Executor } from '../../platform/db/transaction.js';

// A workspace's license signing keys: one active, the retired ones kept so old tokens verify.

/** The published keys (as JWKs), newest first. */
export async function publicKeys(db: Executor, workspaceId: number) {
  return db
    .selectFrom('license_keys')
    .where('workspace_id', '=', workspaceId)
    .select(['public_jwk', 'status'])
    .orderBy('created_at', 'desc')
    .execute();
}

export async function retireActiveKey(db: Executor, workspaceId: number): Promise<void> {
  await db.updateTable('license_keys').set({ status: 'retired' }).where('workspace_id', '=', workspaceId).where('status', '=', 'active').execute();
}

/** The active key, its private key sealed. */
export async function activeKey(db: Executor, workspaceId: number) {
  return db
    .selectFrom('license_keys')
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'active')
    .select(['kid', 'private_key_encrypted'])
    .executeTakeFirst();
}

/** Two first requests may race to create the key: the partial unique index keeps one, the other insert does nothing. */
export async function insertActiveKey(db: Executor, workspaceId: number, key: { kid: string; publicJwk: unknown; sealedPrivateKey: string }): Promise<void> {
  await sql`
    insert into license_keys (kid, workspace_id, alg, public_jwk, private_key_encrypted)
    values (${key.kid}, ${workspaceId}, 'EdDSA', ${JSON.stringify(key.publicJwk)}::jsonb, ${key.sealedPrivateKey})
    on conflict (workspace_id) where status = 'active' do nothing`.execute(db);
}
