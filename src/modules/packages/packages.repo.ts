import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { PackageBuildsTable, PackageSettingsTable, ProductEnvironment } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';

export type SavedSettings = Pick<Selectable<PackageSettingsTable>, 'experience_mode' | 'ui_width' | 'ui_height' | 'release_channel'>;

export type BuildRecord = Omit<Selectable<PackageBuildsTable>, 'settings' | 'template_version' | 'built_by'>;

const BUILD = [
  'id', 'workspace_id', 'product_id', 'environment', 'variant', 'input_hash', 'key_hash', 'storage_key', 'filename', 'sha256', 'size_bytes',
  'created_at', 'last_built_at',
] as const;

export async function savedSettings(db: Executor, scope: Scope, productId: number, variant: string): Promise<SavedSettings | undefined> {
  return db
    .selectFrom('package_settings')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('variant', '=', variant)
    .select(['experience_mode', 'ui_width', 'ui_height', 'release_channel'])
    .executeTakeFirst();
}

export async function saveSettings(db: Executor, scope: Scope, productId: number, variant: string, s: SavedSettings): Promise<void> {
  await db
    .insertInto('package_settings')
    .values({ workspace_id: scope.workspaceId, product_id: productId, variant, ...s })
    .onConflict((oc) => oc.columns(['workspace_id', 'product_id', 'variant']).doUpdateSet({ ...s, updated_at: new Date() }))
    .execute();
}

export async function findBuild(db: Executor, scope: Scope, productId: number, inputHash: string): Promise<BuildRecord | undefined> {
  return db
    .selectFrom('package_builds')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('input_hash', '=', inputHash)
    .select(BUILD)
    .executeTakeFirst();
}

/** Records a build (or, for the same inputs, that it was built again). */
export async function upsertBuild(
  db: Executor,
  scope: Scope,
  b: Omit<BuildRecord, 'workspace_id' | 'created_at' | 'last_built_at'> & { settings: Record<string, unknown>; template_version: string },
): Promise<BuildRecord> {
  return db
    .insertInto('package_builds')
    .values({
      id: b.id,
      workspace_id: scope.workspaceId,
      product_id: b.product_id,
      environment: b.environment,
      variant: b.variant,
      input_hash: b.input_hash,
      key_hash: b.key_hash,
      settings: JSON.stringify(b.settings),
      template_version: b.template_version,
      storage_key: b.storage_key,
      filename: b.filename,
      sha256: b.sha256,
      size_bytes: b.size_bytes,
      built_by: scope.accountId || null,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'product_id', 'input_hash']).doUpdateSet({ last_built_at: new Date(), sha256: b.sha256, size_bytes: b.size_bytes }))
    .returning(BUILD)
    .executeTakeFirstOrThrow();
}

/** A storefront package of the workspace: named by its content, so the same catalogue is one row. */
export async function upsertStorefrontBuild(db: Executor, scope: Scope, b: { id: string; storageKey: string; sha256: string; size: number }): Promise<BuildRecord> {
  return db
    .insertInto('package_builds')
    .values({
      id: b.id,
      workspace_id: scope.workspaceId,
      product_id: null,
      environment: null,
      variant: 'storefront',
      input_hash: b.sha256,
      key_hash: null,
      settings: JSON.stringify({}),
      template_version: 'storefront-1',
      storage_key: b.storageKey,
      filename: `storefront-package-${b.sha256.slice(0, 12)}.zip`,
      sha256: b.sha256,
      size_bytes: b.size,
      built_by: scope.accountId || null,
    })
    .onConflict((oc) => oc.column('id').doUpdateSet({ last_built_at: new Date() }))
    .returning(BUILD)
    .executeTakeFirstOrThrow();
}

/** For the private link: a build by id, whatever the workspace (the signature is the credential). */
export async function buildForLink(db: Executor, buildId: string): Promise<BuildRecord | undefined> {
  return db.selectFrom('package_builds').where('id', '=', buildId).select(BUILD).executeTakeFirst();
}

/** A product's builds of one environment: the newest per variant and key (the status matches them with the key now embedded). */
export async function packageBuilds(db: Executor, scope: Scope, productId: number, environment: ProductEnvironment) {
  return db
    .selectFrom('package_builds')
    .where('workspace_id', '=', scope.workspaceId)
    .where('product_id', '=', productId)
    .where('environment', '=', environment)
    .select(['variant', 'key_hash', sql<Date>`max(last_built_at)`.as('last')])
    .groupBy(['variant', 'key_hash'])
    .execute();
}

export interface Activity {
  productId: number | null;
  accountId: number | null;
  action: 'built' | 'reused' | 'generated' | 'regenerated' | 'downloaded' | 'storefront_built';
  buildId?: string | null;
  variant?: string | null;
  environment?: string | null;
  settings?: Record<string, unknown> | null;
  sha256?: string | null;
}

export async function recordActivity(db: Executor, workspaceId: number, a: Activity): Promise<void> {
  await db
    .insertInto('package_activity')
    .values({
      workspace_id: workspaceId,
      product_id: a.productId,
      account_id: a.accountId,
      action: a.action,
      build_id: a.buildId ?? null,
      variant: a.variant ?? null,
      environment: a.environment ?? null,
      settings: a.settings ? JSON.stringify(a.settings) : null,
      sha256: a.sha256 ?? null,
    })
    .execute();
}

/** Products of the workspace for the storefront package (active ones, in name order). */
export async function storefrontProducts(db: Executor, scope: Scope) {
  return db
    .selectFrom('products')
    .where('workspace_id', '=', scope.workspaceId)
    .where('status', '=', 'active')
    .select(['id', 'name', 'app_id', 'price_cents', 'currency', 'storefront_url'])
    .orderBy('name')
    .orderBy('id')
    .execute();
}

// ---- build slots: at most N builds at once across every instance sharing the database ----

/** Makes sure slots 1..n exist (idempotent). */
export async function ensureSlots(db: Executor, n: number): Promise<void> {
  await sql`INSERT INTO package_build_slots (slot) SELECT generate_series(1, ${n}::int) ON CONFLICT (slot) DO NOTHING`.execute(db);
}

/** Takes a free slot (none held, or its lease ran out) for `holder`; undefined when all are busy. */
export async function claimSlot(db: Executor, n: number, holder: string, leaseSeconds: number): Promise<number | undefined> {
  const result = await sql<{ slot: number }>`
    UPDATE package_build_slots SET holder = ${holder}, lease_until = now() + make_interval(secs => ${leaseSeconds}::int)
    WHERE slot = (
      SELECT slot FROM package_build_slots
      WHERE slot <= ${n}::int AND (lease_until IS NULL OR lease_until < now())
      ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING slot`.execute(db);
  return result.rows[0]?.slot;
}

export async function releaseSlot(db: Executor, slot: number, holder: string): Promise<void> {
  await db.updateTable('package_build_slots').set({ holder: null, lease_until: null }).where('slot', '=', slot).where('holder', '=', holder).execute();
}

/** Seconds until the soonest lease among the first n slots ends (a Retry-After hint). */
export async function soonestSlotSeconds(db: Executor, n: number): Promise<number> {
  const row = await sql<{ s: number | null }>`
    SELECT ceil(extract(epoch FROM min(lease_until) - now()))::int AS s FROM package_build_slots WHERE slot <= ${n}::int`.execute(db);
  return Math.max(1, Math.min(60, row.rows[0]?.s ?? 1));
}
