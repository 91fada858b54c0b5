import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { CustomerScope } from '../../platform/auth/scope.js';
import type { SerialStatus } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// The buyer's serials and their seats. Every query starts from the buyer's workspace and account
// (`serials.customer_id`), so another buyer's serial, or a serial of another workspace, is never
// found: the route answers 404 for it.

export interface LicenseRecord {
  id: number;
  code: string;
  code_key: string;
  product_id: number;
  product: string;
  status: SerialStatus;
  expires_at: Date | null;
  max_activations: number;
  active_activation_count: number;
}

function ownSerials(db: Executor, customer: CustomerScope) {
  return db
    .selectFrom('serials as s')
    .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 's.workspace_id').onRef('p.id', '=', 's.product_id'))
    .where('s.workspace_id', '=', customer.workspaceId)
    .where('s.customer_id', '=', customer.accountId)
    .select(['s.id', 's.code', 's.code_key', 's.product_id', 'p.name as product', 's.status', 's.expires_at', 's.max_activations', 's.active_activation_count']);
}

/** A seat as JSON carries its times as text. */
export interface SeatRecord {
  id: number;
  machine_name: string | null;
  activated_at: string;
  last_validated_at: string;
}

/** The buyer's serials (or one of them) with the devices holding their seats, in one statement. */
export async function licensesWithSeats(db: Executor, customer: CustomerScope, serialId?: number): Promise<Array<LicenseRecord & { seats: SeatRecord[] }>> {
  let query = ownSerials(db, customer).select((eb) =>
    jsonArrayFrom(
      eb
        .selectFrom('serial_activations as a')
        .whereRef('a.workspace_id', '=', 's.workspace_id')
        .whereRef('a.serial_id', '=', 's.id')
        .where('a.status', '=', 'active')
        .select(['a.id', 'a.machine_name', 'a.activated_at', 'a.last_validated_at'])
        .orderBy('a.id'),
    ).as('seats'),
  );
  if (serialId !== undefined) query = query.where('s.id', '=', serialId);
  return query.orderBy('s.id', 'desc').execute() as Promise<Array<LicenseRecord & { seats: SeatRecord[] }>>;
}

export async function findLicense(db: Executor, customer: CustomerScope, serialId: number): Promise<LicenseRecord | undefined> {
  return ownSerials(db, customer).where('s.id', '=', serialId).executeTakeFirst();
}

/** The buyer's serial, locked: seats are counted and released only under this lock (as activation does). */
export async function lockLicense(tx: Tx, customer: CustomerScope, serialId: number): Promise<LicenseRecord | undefined> {
  return ownSerials(tx, customer).where('s.id', '=', serialId).forUpdate('s').executeTakeFirst();
}

export async function findSeat(db: Executor, customer: CustomerScope, serialId: number, activationId: number) {
  return db
    .selectFrom('serial_activations')
    .where('workspace_id', '=', customer.workspaceId)
    .where('serial_id', '=', serialId)
    .where('id', '=', activationId)
    .select(['id', 'machine_id', 'status'])
    .executeTakeFirst();
}

/**
 * The portal releases of a serial within the last `days` (database time): how many, and when the
 * next one becomes possible if the limit is reached (the oldest of them plus the window).
 */
export async function portalReleasesWithin(tx: Tx, workspaceId: number, serialId: number, days: number): Promise<{ count: number; nextAt: Date | null }> {
  const row = await tx
    .selectFrom('serial_events')
    .where('workspace_id', '=', workspaceId)
    .where('serial_id', '=', serialId)
    .where('action', '=', 'activation.released')
    .where('actor_type', '=', 'customer')
    .where('created_at', '>', sql<Date>`now() - make_interval(days => ${days})`)
    .select([sql<number>`count(*)::int`.as('count'), sql<Date | null>`min(created_at) + make_interval(days => ${days})`.as('next_at')])
    .executeTakeFirstOrThrow();
  return { count: row.count, nextAt: row.next_at === null ? null : new Date(row.next_at) };
}

/**
 * Frees the seat, recounts the serial's seats and writes the audit event with the buyer as its
 * actor, in one statement. Call while holding the serial's lock from `lockLicense`.
 */
export async function releaseSeat(tx: Tx, customer: CustomerScope, serial: { id: number; status: SerialStatus }, activationId: number): Promise<boolean> {
  const result = await sql<{ id: number }>`
    with released as (
      update serial_activations set status = 'released', released_at = now(), release_reason = 'customer-portal'
      where workspace_id = ${customer.workspaceId} and serial_id = ${serial.id} and id = ${activationId} and status = 'active'
      returning id, machine_id
    ), seats as (
      update serials set updated_at = now(), active_activation_count = greatest(active_activation_count - (select count(*)::int from released), 0)
      where workspace_id = ${customer.workspaceId} and id = ${serial.id}
    ), event as (
      insert into serial_events (workspace_id, serial_id, product_id, action, actor_type, actor_account_id, reason, before_status, after_status, data)
      select ${customer.workspaceId}, ${serial.id}, s.product_id, 'activation.released', 'customer', ${customer.accountId}, 'Released by the buyer in the customer portal',
             ${serial.status}, ${serial.status}, jsonb_build_object('activationId', r.id, 'machineId', r.machine_id, 'customerId', ${customer.customerId}::int, 'via', 'customer-portal')
      from released r join serials s on s.workspace_id = ${customer.workspaceId} and s.id = ${serial.id}
    )
    select id from released`.execute(tx);
  return result.rows.length > 0;
}

/** The keys a "resend my keys" e-mail lists: the buyer's serials that can still be used or restored. */
export async function keysForEmail(db: Executor, workspaceId: number, accountId: number) {
  return db
    .selectFrom('serials as s')
    .innerJoin('products as p', (j) => j.onRef('p.workspace_id', '=', 's.workspace_id').onRef('p.id', '=', 's.product_id'))
    .where('s.workspace_id', '=', workspaceId)
    .where('s.customer_id', '=', accountId)
    .where('s.status', 'not in', ['revoked', 'deactivated'])
    .select(['s.code', 's.status', 'p.name as product'])
    .orderBy('p.name')
    .orderBy('s.id')
    .execute();
}
