import { type Selectable, sql } from 'kysely';
import type { SerialActivationsTable, SerialsTable, SerialStatus } from '../../platform/db/schema.js';
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

/** What the runtime reads of a serial: its state, seats and validity window. */
export type RuntimeSerial = Pick<
  Selectable<SerialsTable>,
  'id' | 'code' | 'status' | 'max_activations' | 'active_activation_count' | 'expires_at' | 'active_from' | 'active_to' | 'redeemed_at'
>;

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

export type ActivationRow = Pick<
  Selectable<SerialActivationsTable>,
  'id' | 'machine_id' | 'machine_name' | 'platform' | 'app_version' | 'activated_at' | 'last_validated_at'
>;

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

/** The serial with this machine's active seat (`activation_id` null when it holds none). */
export type SerialWithMachine = NonNullable<Awaited<ReturnType<typeof serialWithMachine>>>;

/** Who takes a seat: the plugin itself, or its buyer through the customer portal (an offline activation). */
export type SeatClaimant = { type: 'runtime' } | { type: 'customer'; accountId: number; customerId: number };

/**
 * Locks the serial and, if it is usable at `now` and a seat is free, takes one for the machine, in
 * one statement: the activation row, the serial's seat count (and redemption on first use) and the
 * audit event. The lock is taken first; a transaction that held it is waited for and the serial is
 * re-read as it committed, so the seat count is checked against the latest count. A machine that
 * already holds a seat takes no second one (the unique active-machine index; a seat committed
 * while we waited counts too): `activation` is then null, as when the serial is unusable or full,
 * and the caller (holding the lock until its transaction ends) looks the machine's seat up.
 * The usability test repeats `refusal()` of the service with the same `now`, and the service
 * checks the returned serial with `refusal()` itself inside the same transaction.
 */
export async function claimSeat(
  tx: Tx,
  target: LicenseTarget,
  codeKey: string,
  machine: { machineId: string; machineName: string | null; platform: string | null; appVersion: string | null },
  now: Date,
  claimant: SeatClaimant = { type: 'runtime' },
): Promise<{ serial: RuntimeSerial; activation: ActivationRow | null } | undefined> {
  const [action, actorAccountId, customerId] =
    claimant.type === 'customer' ? ['offline.activated', claimant.accountId, claimant.customerId] : ['runtime.activated', null, null];
  // \`seat\` takes its new values from the locked row (\`free\`), never from the target's own columns: inside this
  // statement the UPDATE's SET sees the serial as of the statement's snapshot, so when the lock in \`s\` waited for a
  // release that committed, \`active_activation_count + 1\` counted from before the release and took a seat over the
  // limit (the CHECK refused it: a 500, found by test/serials/activations.test.ts on PostgreSQL). Columns it does not
  // set keep their latest committed values.
  const result = await sql<RuntimeSerial & { [K in keyof ActivationRow as `a_${K}`]: ActivationRow[K] | null }>`
    with s as (
      select id, code, status, max_activations, active_activation_count, expires_at, active_from, active_to, redeemed_at
      from serials
      where workspace_id = ${target.workspaceId} and product_id = ${target.productId} and code_key = ${codeKey}
      for update
    ), free as (
      select id, status, case when status = 'available' then 'redeemed' else status end as after, active_activation_count, redeemed_at
      from s
      where status not in ('revoked', 'suspended', 'deactivated')
        and (active_from is null or active_from <= ${now}::timestamptz)
        and (expires_at is null or expires_at > ${now}::timestamptz)
        and (active_to is null or active_to > ${now}::timestamptz)
        and active_activation_count < max_activations
    ), activation as (
      insert into serial_activations (workspace_id, serial_id, machine_id, machine_name, platform, app_version)
      select ${target.workspaceId}, id, ${machine.machineId}, ${machine.machineName}, ${machine.platform}, ${machine.appVersion} from free
      on conflict (serial_id, machine_id) where status = 'active' do nothing
      returning id, serial_id, machine_id, machine_name, platform, app_version, activated_at, last_validated_at
    ), seat as (
      update serials set active_activation_count = f.active_activation_count + 1, status = f.after,
        redeemed_at = coalesce(f.redeemed_at, now()), updated_at = now()
      from free f
      where serials.workspace_id = ${target.workspaceId} and serials.id = f.id and serials.id = (select serial_id from activation)
    ), event as (
      insert into serial_events (workspace_id, serial_id, product_id, action, actor_type, actor_account_id, before_status, after_status, data)
      select ${target.workspaceId}, a.serial_id, ${target.productId}, ${action}, ${claimant.type}, ${actorAccountId}::int, f.status, f.after,
             jsonb_build_object('activationId', a.id, 'machineId', a.machine_id, 'platform', a.platform)
               || case when ${customerId}::int is null then '{}'::jsonb else jsonb_build_object('customerId', ${customerId}::int) end
      from activation a join free f on f.id = a.serial_id
    )
    select s.*, a.id as a_id, a.machine_id as a_machine_id, a.machine_name as a_machine_name, a.platform as a_platform,
           a.app_version as a_app_version, a.activated_at as a_activated_at, a.last_validated_at as a_last_validated_at
    from s left join activation a on true`.execute(tx);
  const row = result.rows[0];
  if (!row) return undefined;
  const { a_id, a_machine_id, a_machine_name, a_platform, a_app_version, a_activated_at, a_last_validated_at, ...serial } = row;
  const activation =
    a_id === null
      ? null
      : { id: a_id, machine_id: a_machine_id!, machine_name: a_machine_name, platform: a_platform, app_version: a_app_version, activated_at: a_activated_at!, last_validated_at: a_last_validated_at! };
  return { serial, activation };
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
