import { type ColumnType, type Generated, type Selectable, sql } from 'kysely';
import type { Executor, Tx } from '../../platform/db/transaction.js';

// Payout destinations belong to a recipient, not to a workspace: one destination serves every
// agreement of the recipient. Queries take the recipient id that the recipient scope (or the
// payout run, for recipients with money due) supplies.

export type DestinationStatus = 'onboarding' | 'ready' | 'replaced' | 'disabled';
export type DestinationProgram = 'affiliate' | 'collaborator';

export interface PayoutDestinationsTable {
  id: Generated<number>;
  recipient_id: number;
  provider: 'card' | 'wallet';
  livemode: boolean;
  status: DestinationStatus;
  account_ref: string;
  display: string;
  program: DestinationProgram | null;
  hold_until: Date | null;
  available_at: Date | null;
  ready_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface PayoutDestinationEventsTable {
  id: Generated<number>;
  recipient_id: number;
  destination_id: number | null;
  action: string;
  data: ColumnType<Record<string, unknown>, string | undefined, never>;
  created_at: Generated<Date>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    payout_destinations: PayoutDestinationsTable;
    payout_destination_events: PayoutDestinationEventsTable;
  }
}

/** A destination as the service reads it (when it became ready matters only to `hadReadyDestination`). */
export type DestinationRecord = Omit<Selectable<PayoutDestinationsTable>, 'ready_at'>;

const DESTINATION = [
  'id', 'recipient_id', 'provider', 'livemode', 'status', 'account_ref', 'display', 'hold_until', 'available_at', 'program', 'created_at', 'updated_at',
] as const;

/**
 * The current (onboarding or ready) destination of each of these recipients in one mode. A
 * transfer may go to a destination only when it is `ready` and `available_at` has passed (the
 * security hold of a changed destination ends then).
 */
export async function currentDestinations(db: Executor, recipientIds: number[], livemode: boolean): Promise<DestinationRecord[]> {
  if (recipientIds.length === 0) return [];
  return db
    .selectFrom('payout_destinations')
    .where('recipient_id', '=', sql<number>`any(${recipientIds}::int[])`)
    .where('livemode', '=', livemode)
    .where('status', 'in', ['onboarding', 'ready'])
    .select(DESTINATION)
    .orderBy('recipient_id')
    .execute();
}

export async function currentDestination(db: Executor, recipientId: number, livemode: boolean): Promise<DestinationRecord | undefined> {
  return (await currentDestinations(db, [recipientId], livemode))[0];
}

/**
 * The recipient row, locked: every destination change of one recipient runs one at a time, so
 * two racing requests cannot both decide "first destination, no hold".
 */
export async function lockRecipient(tx: Tx, recipientId: number) {
  return tx.selectFrom('recipients').where('id', '=', recipientId).select(['id', 'email', 'email_verified_at', 'active']).forUpdate().executeTakeFirst();
}

/** Whether the recipient ever had a ready destination in this mode (a new one is then a change, held). */
export async function hadReadyDestination(db: Executor, recipientId: number, livemode: boolean): Promise<boolean> {
  const row = await db
    .selectFrom('payout_destinations')
    .where('recipient_id', '=', recipientId)
    .where('livemode', '=', livemode)
    .where('ready_at', 'is not', null)
    .select('id')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The current destination with this provider account (the sandbox page completes it). */
export async function currentByAccount(db: Executor, recipientId: number, provider: 'card' | 'wallet', accountRef: string): Promise<DestinationRecord | undefined> {
  return db
    .selectFrom('payout_destinations')
    .where('recipient_id', '=', recipientId)
    .where('provider', '=', provider)
    .where('account_ref', '=', accountRef)
    .where('status', 'in', ['onboarding', 'ready'])
    .select(DESTINATION)
    .executeTakeFirst();
}

export async function insertDestination(
  tx: Tx,
  d: {
    recipientId: number;
    provider: 'card' | 'wallet';
    livemode: boolean;
    status: 'onboarding' | 'ready';
    accountRef: string;
    display: string;
    program: DestinationProgram | null;
    holdUntil: Date | null;
    availableAt: Date | null;
  },
): Promise<DestinationRecord> {
  return tx
    .insertInto('payout_destinations')
    .values({
      recipient_id: d.recipientId,
      provider: d.provider,
      livemode: d.livemode,
      status: d.status,
      account_ref: d.accountRef,
      display: d.display,
      program: d.program,
      hold_until: d.holdUntil,
      available_at: d.availableAt,
      ready_at: d.status === 'ready' ? new Date() : null,
    })
    .returning(DESTINATION)
    .executeTakeFirstOrThrow();
}

export async function markReplaced(tx: Tx, id: number): Promise<void> {
  await tx.updateTable('payout_destinations').set({ status: 'replaced', updated_at: new Date() }).where('id', '=', id).execute();
}

export async function markReady(tx: Tx, id: number, availableAt: Date): Promise<DestinationRecord> {
  return tx
    .updateTable('payout_destinations')
    .set({ status: 'ready', ready_at: new Date(), available_at: availableAt, updated_at: new Date() })
    .where('id', '=', id)
    .returning(DESTINATION)
    .executeTakeFirstOrThrow();
}

export async function updateDisplay(tx: Tx, id: number, display: string): Promise<DestinationRecord> {
  return tx.updateTable('payout_destinations').set({ display, updated_at: new Date() }).where('id', '=', id).returning(DESTINATION).executeTakeFirstOrThrow();
}

export async function recordDestinationEvent(
  tx: Tx,
  e: { recipientId: number; destinationId: number | null; action: string; data?: Record<string, unknown> },
): Promise<void> {
  await tx
    .insertInto('payout_destination_events')
    .values({ recipient_id: e.recipientId, destination_id: e.destinationId, action: e.action, data: JSON.stringify(e.data ?? {}) })
    .execute();
}

/** What the destination-change notice says, read when it is sent: the recipient's address and the new destination. */
export async function destinationForNotice(db: Executor, destinationId: number) {
  return db
    .selectFrom('payout_destinations as d')
    .innerJoin('recipients as r', 'r.id', 'd.recipient_id')
    .where('d.id', '=', destinationId)
    .select(['r.email', 'r.active', 'd.provider', 'd.livemode', 'd.display', 'd.hold_until'])
    .executeTakeFirst();
}
