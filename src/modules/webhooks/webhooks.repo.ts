import { type Selectable, sql } from 'kysely';
import type { Scope } from '../../platform/auth/scope.js';
import type { WebhookDeliveriesTable, WebhookDeliveryStatus, WebhookEndpointsTable } from '../../platform/db/schema.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import { jobQueueName } from '../../platform/jobs/queue.js';

// Endpoints and the delivery log, read and written through the caller's scope; the relay and the
// delivery job work across workspaces by id (they run for whoever emitted the event).

export type EndpointRecord = Selectable<WebhookEndpointsTable>;

const endpoints = (db: Executor, scope: Scope) => db.selectFrom('webhook_endpoints').where('workspace_id', '=', scope.workspaceId);

export const listEndpoints = (db: Executor, scope: Scope) => endpoints(db, scope).selectAll().orderBy('id').execute();

export async function countEndpoints(db: Executor, scope: Scope): Promise<number> {
  const row = await endpoints(db, scope).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export function findEndpoint(db: Executor, scope: Scope, id: number, forUpdate = false): Promise<EndpointRecord | undefined> {
  const query = endpoints(db, scope).where('id', '=', id).selectAll();
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** Serialises endpoint creation in the workspace (the limit is counted under it). */
export async function lockEndpointCreation(tx: Tx, scope: Scope): Promise<void> {
  await tx.selectFrom('workspaces').where('id', '=', scope.workspaceId).select('id').forUpdate().execute();
}

/** Inserts the endpoint; its secret is sealed with its id as context, so it is set right after (same transaction). */
export async function insertEndpoint(tx: Tx, scope: Scope, e: { url: string; description: string | null; eventTypes: string[] }): Promise<number> {
  const row = await tx
    .insertInto('webhook_endpoints')
    .values({ workspace_id: scope.workspaceId, url: e.url, description: e.description, event_types: e.eventTypes, secret_sealed: '' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export type EndpointChange = Partial<
  Pick<EndpointRecord, 'url' | 'description' | 'event_types' | 'enabled' | 'disabled_at' | 'disabled_reason' | 'failing_since' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>
>;

export async function updateEndpoint(tx: Tx, scope: Scope, id: number, change: EndpointChange): Promise<void> {
  await tx.updateTable('webhook_endpoints').set({ ...change, updated_at: new Date() }).where('workspace_id', '=', scope.workspaceId).where('id', '=', id).execute();
}

export async function deleteEndpoint(tx: Tx, scope: Scope, id: number): Promise<void> {
  await tx.deleteFrom('webhook_endpoints').where('workspace_id', '=', scope.workspaceId).where('id', '=', id).execute();
}

// The delivery log.

export interface DeliveryRecord extends Omit<Selectable<WebhookDeliveriesTable>, 'event_row_id' | 'cycle_attempts' | 'schedule' | 'workspace_id'> {
  event_id: string;
  event_type: string;
}

const deliveries = (db: Executor, scope: Scope) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as ev', 'ev.id', 'd.event_row_id')
    .where('d.workspace_id', '=', scope.workspaceId)
    .select([
      'd.id', 'd.endpoint_id', 'ev.event_id', 'ev.type as event_type', 'd.status', 'd.attempts', 'd.last_status_code', 'd.next_attempt_at', 'd.last_attempt_at',
      'd.last_duration_ms', 'd.last_response_body', 'd.last_error', 'd.created_at', 'd.updated_at',
    ]);

export function listDeliveries(db: Executor, scope: Scope, endpointId: number, filter: { status?: WebhookDeliveryStatus | undefined }, page: { limit: number; offset: number }): Promise<DeliveryRecord[]> {
  let query = deliveries(db, scope).where('d.endpoint_id', '=', endpointId);
  if (filter.status) query = query.where('d.status', '=', filter.status);
  return query.orderBy('d.id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countDeliveries(db: Executor, scope: Scope, endpointId: number, filter: { status?: WebhookDeliveryStatus | undefined }): Promise<number> {
  let query = db.selectFrom('webhook_deliveries').where('workspace_id', '=', scope.workspaceId).where('endpoint_id', '=', endpointId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const row = await query.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

export const findDelivery = (db: Executor, scope: Scope, id: number): Promise<DeliveryRecord | undefined> => deliveries(db, scope).where('d.id', '=', id).executeTakeFirst();

/** A test event of one endpoint: written as dispatched (the relay never fans it out) with its one delivery. */
export async function insertDirectDelivery(tx: Tx, scope: Scope, endpointId: number, event: { eventId: string; type: string; data: unknown }): Promise<{ id: number; schedule: number }> {
  const result = await sql<{ id: number; schedule: number }>`
    with ev as (
      insert into webhook_events (workspace_id, event_id, type, data, dispatched_at, queue)
      values (${scope.workspaceId}, ${event.eventId}, ${event.type}, ${JSON.stringify(event.data)}::jsonb, now(), ${jobQueueName()})
      returning id)
    insert into webhook_deliveries (workspace_id, endpoint_id, event_row_id, next_attempt_at)
    select ${scope.workspaceId}, ${endpointId}, ev.id, now() from ev
    returning id, schedule`.execute(tx);
  return result.rows[0]!;
}

/**
 * Queues deliveries again as new (pending, a fresh retry cycle, due now); their earlier queued
 * attempt, if any, becomes stale (`schedule` moves on). Answers each delivery's new schedule.
 */
export async function requeueDeliveries(tx: Tx, scope: Scope, filter: { id: number } | { endpointId: number; failedSince: Date; limit: number }): Promise<Array<{ id: number; schedule: number }>> {
  const which =
    'id' in filter
      ? sql`id = ${filter.id}`
      : sql`id in (select d.id from webhook_deliveries d join webhook_events ev on ev.id = d.event_row_id
                   where d.workspace_id = ${scope.workspaceId} and d.endpoint_id = ${filter.endpointId}
                   and d.status = 'failed' and ev.created_at >= ${filter.failedSince} order by d.id limit ${filter.limit})`;
  const result = await sql<{ id: number; schedule: number }>`
    update webhook_deliveries set status = 'pending', cycle_attempts = 0, schedule = schedule + 1, next_attempt_at = now(), updated_at = now()
    where workspace_id = ${scope.workspaceId} and ${which}
    returning id, schedule`.execute(tx);
  return result.rows;
}

/** Whether a failed delivery of an event from `since` on is left (the events' time, as redeliver-failed counts it). */
export async function hasFailedSince(db: Executor, scope: Scope, endpointId: number, since: Date): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as ev', 'ev.id', 'd.event_row_id')
    .where('d.workspace_id', '=', scope.workspaceId)
    .where('d.endpoint_id', '=', endpointId)
    .where('d.status', '=', 'failed')
    .where('ev.created_at', '>=', since)
    .select('d.id')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

// The relay: events written by emitting transactions become one delivery per endpoint that wants them.

/**
 * Takes up to `limit` events of this instance's job queue that nobody has fanned out (SKIP LOCKED:
 * the instances of a queue share the work; those of another queue leave them alone, as its jobs).
 */
export async function claimPendingEvents(tx: Tx, limit: number): Promise<number[]> {
  const result = await sql<{ id: number }>`
    update webhook_events set dispatched_at = now()
    where id in (select id from webhook_events where queue = ${jobQueueName()} and dispatched_at is null order by id limit ${limit} for update skip locked)
    returning id`.execute(tx);
  return result.rows.map((r) => r.id);
}

/** One delivery per event and enabled endpoint of its workspace that wants its type. */
export async function fanOut(tx: Tx, eventIds: number[]): Promise<Array<{ id: number; workspace_id: number; schedule: number }>> {
  const result = await sql<{ id: number; workspace_id: number; schedule: number }>`
    insert into webhook_deliveries (workspace_id, endpoint_id, event_row_id, next_attempt_at)
    select ev.workspace_id, e.id, ev.id, now()
    from webhook_events ev
    join webhook_endpoints e on e.workspace_id = ev.workspace_id and e.enabled and (ev.type = any(e.event_types) or '*' = any(e.event_types))
    where ev.id = any(${eventIds}::bigint[])
    on conflict (event_row_id, endpoint_id) do nothing
    returning id, workspace_id, schedule`.execute(tx);
  return result.rows;
}

// One attempt of one delivery.

export interface AttemptRecord {
  id: number;
  workspace_id: number;
  endpoint_id: number;
  status: WebhookDeliveryStatus;
  cycle_attempts: number;
  event_id: string;
  event_type: string;
  event_data: unknown;
  event_created_at: Date;
  url: string;
  enabled: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The deliveries with their events and endpoints that wait for an attempt, with their current `schedule`, for several
 * deliveries in one statement (an index probe each); the caller compares the schedule it was given (a redelivery makes
 * older attempts stale).
 */
export async function attemptsOf(db: Executor, deliveryIds: readonly number[]): Promise<Array<AttemptRecord & { schedule: number }>> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as ev', 'ev.id', 'd.event_row_id')
    .innerJoin('webhook_endpoints as e', (join) => join.onRef('e.id', '=', 'd.endpoint_id').onRef('e.workspace_id', '=', 'd.workspace_id'))
    .where('d.id', '=', sql<number>`any(${[...deliveryIds]}::bigint[])`)
    .where('d.status', 'in', ['pending', 'retrying'])
    .select([
      'd.id', 'd.schedule', 'd.workspace_id', 'd.endpoint_id', 'd.status', 'd.cycle_attempts', 'ev.event_id', 'ev.type as event_type', 'ev.data as event_data',
      'ev.created_at as event_created_at', 'e.url', 'e.enabled', 'e.secret_sealed', 'e.previous_secret_sealed', 'e.previous_secret_expires_at',
    ])
    .execute();
}

export interface AttemptResult {
  status: WebhookDeliveryStatus;
  statusCode: number | null;
  durationMs: number | null;
  body: string | null;
  error: string | null;
  /** The next attempt's time (status `retrying`), else null. */
  nextAttemptAt: Date | null;
}

/** Records an attempt if it is still the current one; answers the delivery's next schedule, or null when it was stale. */
export async function recordAttempt(tx: Tx, deliveryId: number, schedule: number, r: AttemptResult): Promise<number | null> {
  const result = await sql<{ schedule: number }>`
    update webhook_deliveries set status = ${r.status}, attempts = attempts + 1, cycle_attempts = cycle_attempts + 1,
      schedule = schedule + ${r.nextAttemptAt ? 1 : 0}, next_attempt_at = ${r.nextAttemptAt}, last_attempt_at = now(),
      last_status_code = ${r.statusCode}, last_duration_ms = ${r.durationMs}, last_response_body = ${r.body}, last_error = ${r.error}, updated_at = now()
    where id = ${deliveryId} and schedule = ${schedule} and status in ('pending', 'retrying')
    returning schedule`.execute(tx);
  return result.rows[0]?.schedule ?? null;
}

/** A successful attempt as recordSuccesses records it. */
export interface Success {
  deliveryId: number;
  schedule: number;
  statusCode: number;
  durationMs: number;
  body: string | null;
}

/**
 * Records successful attempts that are still the current ones, and clears their endpoints' failure streaks, in one
 * statement (no transaction around it: a success costs a share of one round trip). Answers the attempts recorded as
 * `<delivery id>:<schedule>`; an attempt left out was stale.
 */
export async function recordSuccesses(db: Executor, successes: readonly Success[]): Promise<Set<string>> {
  if (successes.length === 0) return new Set();
  const rows = JSON.stringify(successes.map((r) => ({ id: r.deliveryId, schedule: r.schedule, status_code: r.statusCode, duration_ms: r.durationMs, body: r.body })));
  const result = await sql<{ id: number; schedule: number }>`
    with recorded as (
      update webhook_deliveries d set status = 'succeeded', attempts = d.attempts + 1, cycle_attempts = d.cycle_attempts + 1, next_attempt_at = null,
        last_attempt_at = now(), last_status_code = v.status_code, last_duration_ms = v.duration_ms, last_response_body = v.body, last_error = null,
        updated_at = now()
      from jsonb_to_recordset(${rows}::jsonb) as v(id bigint, schedule int, status_code int, duration_ms int, body text)
      where d.id = v.id and d.schedule = v.schedule and d.status in ('pending', 'retrying')
      returning d.id, d.schedule, d.endpoint_id),
    healthy as (
      update webhook_endpoints set failing_since = null where id in (select endpoint_id from recorded) and failing_since is not null)
    select id, schedule from recorded`.execute(db);
  return new Set(result.rows.map((r) => `${r.id}:${r.schedule}`));
}

/**
 * Notes a failed attempt on the endpoint (failing since the first failure after its last success)
 * and disables it when it has been failing since before `windowStart`. True when this call disabled it.
 */
export async function noteEndpointFailure(tx: Tx, endpointId: number, now: Date, windowStart: Date): Promise<boolean> {
  await tx.updateTable('webhook_endpoints').set({ failing_since: now }).where('id', '=', endpointId).where('failing_since', 'is', null).execute();
  const disabled = await tx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: 'failing', disabled_at: now, updated_at: now })
    .where('id', '=', endpointId)
    .where('enabled', '=', true)
    .where('failing_since', '<=', windowStart)
    .returning('id')
    .executeTakeFirst();
  return disabled !== undefined;
}

/** For the e-mail that says an endpoint was disabled. */
export const endpointForEmail = (db: Executor, workspaceId: number, endpointId: number) =>
  db
    .selectFrom('webhook_endpoints')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', endpointId)
    .select(['id', 'url', 'enabled', 'disabled_reason', 'disabled_at', 'failing_since'])
    .executeTakeFirst();

/** Events (and their deliveries) older than `days` are dropped. */
export async function deleteOldEvents(db: Executor, days: number): Promise<number> {
  const result = await sql`delete from webhook_events where created_at < now() - make_interval(days => ${days})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Writes events of one type in the causing transaction, in one statement, only while an enabled endpoint of the
 * workspace wants the type (a workspace without webhooks pays one index probe); tagged with this instance's job
 * queue, whose relay fans them out. Answers how many were written.
 */
/** The condition `insertWantedEvents` writes under, on its own. */
export async function wantsEvents(db: Executor, workspaceId: number, type: string): Promise<boolean> {
  const { rows } = await sql<{ wanted: boolean }>`
    select exists (select 1 from webhook_endpoints w where w.workspace_id = ${workspaceId} and w.enabled and (${type} = any(w.event_types) or '*' = any(w.event_types))) as wanted`.execute(db);
  return rows[0]?.wanted === true;
}

export async function insertWantedEvents(tx: Tx, workspaceId: number, type: string, events: ReadonlyArray<{ event_id: string; data: unknown }>): Promise<number> {
  const result = await sql`
    insert into webhook_events (workspace_id, event_id, type, data, queue)
    select ${workspaceId}, e.event_id, ${type}, e.data, ${jobQueueName()} from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(event_id text, data jsonb)
    where exists (select 1 from webhook_endpoints w where w.workspace_id = ${workspaceId} and w.enabled and (${type} = any(w.event_types) or '*' = any(w.event_types)))`.execute(tx);
  return Number(result.numAffectedRows ?? 0);
}
