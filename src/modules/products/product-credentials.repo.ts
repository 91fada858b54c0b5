import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { ProductCredentialsTable, ProductEnvironment, ProductKeysTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

export type CredentialRecord = Omit<Selectable<ProductCredentialsTable>, 'workspace_id'>;
export type KeyRecord = Omit<Selectable<ProductKeysTable>, 'workspace_id'>;

const CREDENTIAL = ['id', 'product_id', 'environment', 'app_id', 'last_request_at', 'last_plugin_connection_at', 'created_at'] as const;
const KEY = ['id', 'credential_id', 'key_hash', 'key_sealed', 'sealed_with', 'preview', 'status', 'accepted_until', 'created_at'] as const;

export async function findCredential(db: Executor, scope: Scope, productId: number, environment: ProductEnvironment): Promise<CredentialRecord | undefined> {
  return db
    .selectFrom('product_credentials')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('environment', '=', environment)
    .select(CREDENTIAL)
    .executeTakeFirst();
}

/**
 * The credential and its active key in one statement, without a transaction: what every dashboard view reads once
 * both exist (the key is null when the credential has none yet).
 */
export async function findCredentialWithKey(
  db: Executor,
  scope: Scope,
  productId: number,
  environment: ProductEnvironment,
): Promise<{ credential: CredentialRecord; key: KeyRecord | null } | undefined> {
  const row = await db
    .selectFrom('product_credentials as c')
    .leftJoin('product_keys as k', (join) =>
      join.onRef('k.workspace_id', '=', 'c.workspace_id').onRef('k.credential_id', '=', 'c.id').on('k.status', '=', 'active'),
    )
    .where('c.workspace_id', '=', scope.workspaceId)
    .where('c.product_id', '=', productId)
    .where('c.environment', '=', environment)
    .select(CREDENTIAL.map((column) => `c.${column}` as const))
    .select(KEY.map((column) => `k.${column} as key_${column}` as const))
    .executeTakeFirst();
  if (!row) return undefined;
  const credential = Object.fromEntries(CREDENTIAL.map((column) => [column, row[column]])) as CredentialRecord;
  const fields = row as unknown as Record<string, unknown>;
  const key = fields.key_id === null ? null : (Object.fromEntries(KEY.map((column) => [column, fields[`key_${column}`]])) as KeyRecord);
  return { credential, key };
}

/** Creates the credential if it is missing; two concurrent callers get the same one. Returns whether this call made it. */
export async function ensureCredential(tx: Tx, scope: Scope, productId: number, environment: ProductEnvironment, appId: string): Promise<{ credential: CredentialRecord; created: boolean }> {
  const inserted = await sql<CredentialRecord>`
    insert into product_credentials (workspace_id, product_id, environment, app_id)
    values (${scope.workspaceId}, ${productId}, ${environment}, ${appId})
    on conflict (product_id, environment) do nothing
    returning ${sql.join(CREDENTIAL.map((c) => sql.ref(c)))}`.execute(tx);
  if (inserted.rows[0]) return { credential: inserted.rows[0], created: true };
  const existing = await findCredential(tx, scope, productId, environment);
  if (!existing) throw new Error('credential vanished after a conflicting insert');
  return { credential: existing, created: false };
}

export async function activeKey(db: Executor, scope: Scope, credentialId: number): Promise<KeyRecord | undefined> {
  return db
    .selectFrom('product_keys')
    .where('workspace_id', '=', scope.workspaceId)
    .where('credential_id', '=', credentialId)
    .where('status', '=', 'active')
    .select(KEY)
    .executeTakeFirst();
}

/** Inserts the active key unless another caller just did (the partial unique index decides). */
export async function insertActiveKey(
  tx: Tx,
  scope: Scope,
  key: { credentialId: number; keyHash: string; sealed: string; sealedWith: string; preview: string },
): Promise<boolean> {
  const inserted = await sql<{ id: number }>`
    insert into product_keys (workspace_id, credential_id, key_hash, key_sealed, sealed_with, preview)
    values (${scope.workspaceId}, ${key.credentialId}, ${key.keyHash}, ${key.sealed}, ${key.sealedWith}, ${key.preview})
    on conflict (credential_id) where status = 'active' do nothing
    returning id`.execute(tx);
  return inserted.rows.length > 0;
}

/** Retires the active key: accepted until `until` (now: at once), then refused. */
export async function retireActiveKey(tx: Tx, scope: Scope, credentialId: number, until: Date): Promise<void> {
  await tx
    .updateTable('product_keys')
    .set({ status: 'retiring', accepted_until: until })
    .where('workspace_id', '=', scope.workspaceId)
    .where('credential_id', '=', credentialId)
    .where('status', '=', 'active')
    .execute();
}

/** For the licensing runtime: the credential a key belongs to, and until when it is accepted. */
export async function keyForRuntime(db: Executor, keyHash: string) {
  return db
    .selectFrom('product_keys as k')
    .innerJoin('product_credentials as c', (j) => j.onRef('c.id', '=', 'k.credential_id').onRef('c.workspace_id', '=', 'k.workspace_id'))
    .where('k.key_hash', '=', keyHash)
    .where('k.status', '!=', 'revoked')
    .select(['k.credential_id', 'k.status', 'k.accepted_until', 'c.environment', 'c.product_id'])
    .executeTakeFirst();
}

/** Records when credentials were last used; many at once, and never moving a time backwards. */
export async function touchCredentials(db: Executor, touches: Array<{ credentialId: number; request: Date | null; plugin: Date | null }>): Promise<void> {
  if (touches.length === 0) return;
  await sql`
    update product_credentials c set
      last_request_at = greatest(c.last_request_at, t.request),
      last_plugin_connection_at = greatest(c.last_plugin_connection_at, t.plugin)
    from unnest(${touches.map((t) => t.credentialId)}::int[], ${touches.map((t) => t.request)}::timestamptz[], ${touches.map((t) => t.plugin)}::timestamptz[])
      as t(id, request, plugin)
    where c.id = t.id`.execute(db);
}
