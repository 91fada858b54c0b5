import { sql } from 'kysely';
import type { SerialStatus } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

/**
 * The runtime's scope: a product found by its public app id. Plugins prove
 * nothing else, so every query below is bound to that product's workspace
 * and product, never to input alone.
 */
export interface LicenseTarget {
  readonly workspaceId: number;
  readonly productId: number;
  readonly productAppId: string;
  readonly offlineGraceDays: number;
  /** The product credential the appId belongs to (live or test). */
  readonly credentialId: number;
  readonly environment: 'live' | 'test';
}

/** A product by the appId of one of its credentials (the live one is the product's productAppId). */
export async function findTarget(db: Executor, productAppId: string): Promise<LicenseTarget | undefined> {
  const row = await db
    .selectFrom('product_credentials as c')
    .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 'c.workspace_id').onRef('p.id', '=', 'c.product_id'))
    .where('c.app_id', '=', productAppId)
    .select(['p.workspace_id', 'p.id', 'c.app_id', 'p.offline_grace_days', 'c.id as credential_id', 'c.environment'])
    .executeTakeFirst();
  return (
    row && {
      workspaceId: row.workspace_id,
      productId: row.id,
      productAppId: row.app_id,
      offlineGraceDays: row.offline_grace_days,
      credentialId: row.credential_id,
      environment: row.environment,
    }
  );
}

export interface RuntimeSerial {
  id: number;
  code: string;
  status: SerialStatus;
  max_activations: number;
  active_activation_count: number;
  expires_at: Date | null;
  active_from: Date | null;
  active_to: Date | null;
  redeemed_at: Date | null;
}

const serialColumns = ['s.id', 's.code', 's.status', 's.max_activations', 's.active_activation_count', 's.expires_at', 's.active_from', 's.active_to', 's.redeemed_at'] as const;

/**
 * Locks the serial row; seats are counted only under this lock. The machine's
 * seat is looked up in a separate statement afterwards, so it sees rows that a
 * transaction we waited for has just committed.
 */
export async function lockSerial(tx: Tx, target: LicenseTarget, codeKey: string): Promise<RuntimeSerial | undefined> {
  return tx
    .selectFrom('serials as s')
    .where('s.workspace_id', '=', target.workspaceId)
    .where('s.product_id', '=', target.productId)
    .where('s.code_key', '=', codeKey)
    .select(serialColumns)
    .forUpdate()
    .executeTakeFirst();
}

export interface ActivationRow {
  id: number;
  machine_id: string;
  machine_name: string | null;
  platform: string | null;
  app_version: string | null;
  activated_at: Date;
  last_validated_at: Date;
}

export async function activeActivation(db: Executor, target: LicenseTarget, serialId: number, machineId: string): Promise<ActivationRow | undefined> {
  return db
    .selectFrom('serial_activations')
    .where('workspace_id', '=', target.workspaceId)
    .where('serial_id', '=', serialId)
    .where('machine_id', '=', machineId)
    .where('status', '=', 'active')
    .select(['id', 'machine_id', 'machine_name', 'platform', 'app_version', 'activated_at', 'last_validated_at'])
    .executeTakeFirst();
}

/** One round trip for validation: the serial and this machine's active seat, if any. */
export async function serialWithMachine(db: Executor, target: LicenseTarget, codeKey: string, machineId: string) {
  return db
    .selectFrom('serials as s')
    .leftJoin('serial_activations as a', (join) =>
      join
        .onRef('a.serial_id', '=', 's.id')
        .onRef('a.workspace_id', '=', 's.workspace_id')
        .on('a.machine_id', '=', machineId)
        .on('a.status', '=', 'active'),
    )
    .where('s.workspace_id', '=', target.workspaceId)
    .where('s.product_id', '=', target.productId)
    .where('s.code_key', '=', codeKey)
    .select([...serialColumns, 'a.id as activation_id', 'a.last_validated_at'])
    .executeTakeFirst();
}

/**
 * Takes a seat in one statement: the activation row, the serial's seat count
 * (and redemption on first use) and the audit event. Call only while holding
 * the serial lock from `lockSerial`, after checking a seat is free.
 */
export async function claimSeat(
  tx: Tx,
  target: LicenseTarget,
  serial: { id: number; status: SerialStatus },
  machine: { machineId: string; machineName: string | null; platform: string | null; appVersion: string | null },
): Promise<ActivationRow> {
  const after: SerialStatus = serial.status === 'available' ? 'redeemed' : serial.status;
  const result = await sql<ActivationRow>`
    with activation as (
      insert into serial_activations (workspace_id, serial_id, machine_id, machine_name, platform, app_version)
      values (${target.workspaceId}, ${serial.id}, ${machine.machineId}, ${machine.machineName}, ${machine.platform}, ${machine.appVersion})
      returning id, machine_id, machine_name, platform, app_version, activated_at, last_validated_at
    ), seat as (
      update serials set active_activation_count = active_activation_count + 1, status = ${after},
        redeemed_at = coalesce(redeemed_at, now()), updated_at = now()
      where workspace_id = ${target.workspaceId} and id = ${serial.id}
    ), event as (
      insert into serial_events (workspace_id, serial_id, product_id, action, actor_type, before_status, after_status, data)
      select ${target.workspaceId}, ${serial.id}, ${target.productId}, 'runtime.activated', 'runtime', ${serial.status}, ${after},
             jsonb_build_object('activationId', id, 'machineId', machine_id, 'platform', platform)
      from activation
    )
    select * from activation`.execute(tx);
  return result.rows[0]!;
}

export async function touchActivation(
  db: Executor,
  target: LicenseTarget,
  activationId: number,
  machine?: { machineName: string | null; platform: string | null; appVersion: string | null },
): Promise<void> {
  await db
    .updateTable('serial_activations')
    .set({
      last_validated_at: new Date(),
      ...(machine
        ? {
            machine_name: sql<string | null>`coalesce(${machine.machineName}, machine_name)`,
            platform: sql<string | null>`coalesce(${machine.platform}, platform)`,
            app_version: sql<string | null>`coalesce(${machine.appVersion}, app_version)`,
          }
        : {}),
    })
    .where('workspace_id', '=', target.workspaceId)
    .where('id', '=', activationId)
    .execute();
}

export async function releaseActivation(tx: Tx, target: LicenseTarget, activationId: number): Promise<void> {
  await tx
    .updateTable('serial_activations')
    .set({ status: 'released', released_at: new Date(), release_reason: 'self-service' })
    .where('workspace_id', '=', target.workspaceId)
    .where('id', '=', activationId)
    .execute();
}

export async function adjustSeatCount(tx: Tx, target: LicenseTarget, serialId: number, delta: 1 | -1, redeem: boolean): Promise<void> {
  await tx
    .updateTable('serials')
    .set({
      active_activation_count: sql<number>`greatest(active_activation_count + ${delta}, 0)`,
      updated_at: new Date(),
      ...(redeem ? { status: 'redeemed', redeemed_at: new Date() } : {}),
    })
    .where('workspace_id', '=', target.workspaceId)
    .where('id', '=', serialId)
    .execute();
}
