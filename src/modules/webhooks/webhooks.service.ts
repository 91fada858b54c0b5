import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { type AllowList, checkTarget, hostOf, httpAllowed, RefusedTarget, refusedRange, type Resolver } from '../../platform/net/address-policy.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import { WebhookDeliveryJob } from './webhooks.delivery.js';
import { newEventId } from './webhooks.emit.js';
import { WebhookErrors } from './webhooks.errors.js';
import { eventDefinitions, type WebhookEventData } from './webhooks.events.js';
import * as repo from './webhooks.repo.js';
import {
  type CreateEndpointBody,
  type DeliveryListQuery,
  type DeliveryRow,
  type Endpoint,
  MAX_ENDPOINTS,
  MAX_REDELIVER,
  type UpdateEndpointBody,
} from './webhooks.schemas.js';
import { newSecret, sealSecret } from './webhooks.signing.js';

export interface EndpointSettings {
  encryptionKey: Buffer;
  allowList: AllowList;
  resolve: Resolver;
  /** How long a rotated secret keeps signing beside the new one. */
  rotationOverlapMs: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toEndpoint(e: repo.EndpointRecord): Endpoint {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.event_types,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    disabled_at: iso(e.disabled_at),
    failing_since: iso(e.failing_since),
    previous_secret_expires_at: e.previous_secret_expires_at && e.previous_secret_expires_at.getTime() > Date.now() ? e.previous_secret_expires_at.toISOString() : null,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
}

export function toDeliveryRow(d: repo.DeliveryRecord): DeliveryRow {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    next_attempt_at: iso(d.next_attempt_at),
    last_attempt_at: iso(d.last_attempt_at),
    response_duration_ms: d.last_duration_ms,
    response_body: d.last_response_body,
    error: d.last_error,
    created_at: d.created_at.toISOString(),
  };
}

// `*` stands for every type, now and later: alone, nothing else is kept beside it.
const normaliseEvents = (events: readonly string[]) => (events.includes('*') ? ['*'] : [...events].sort());

/** The endpoints, the deliveries and the test event: every call is scoped to the caller's workspace. */
export class WebhookEndpoints {
  constructor(
    private readonly db: Db,
    private readonly settings: EndpointSettings,
  ) {}

  /**
   * Refuses a URL webhooks may not go to: credentials in it, plain http to a host not allowed, an
   * address (literal, or what the name resolves to now) in a refused range. A name that does not
   * resolve yet is accepted; every delivery checks again.
   */
  private async checkUrl(raw: string): Promise<string> {
    const refuse = (why: string) => new AppError(WebhookErrors.WEBHOOK_URL_NOT_ALLOWED, why);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('The URL is not valid');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('Webhook URLs use https (or http to a host the deployment allows)');
    if (url.username || url.password) throw refuse('Credentials in the URL are not accepted; put a token in the path or query, or verify the signature');
    const { allowList, resolve } = this.settings;
    let target;
    try {
      target = await checkTarget(url, allowList, resolve);
    } catch (error) {
      if (!(error instanceof RefusedTarget)) throw error;
      // Only an address that is refused is refused now; a name that does not resolve may later.
      const literal = refusedRange(hostOf(url), allowList);
      if (/resolves to/.test(error.message) || (literal !== null && literal !== 'not an address')) throw refuse(error.message);
    }
    if (url.protocol === 'http:' && !httpAllowed(url, allowList, target)) throw refuse(`Plain http is allowed only to hosts the deployment allows (WEBHOOK_ALLOWED_HOSTS); use https://${url.host}${url.pathname}`);
    url.hash = '';
    return url.toString();
  }

  list = async (scope: Scope) => ({ rows: (await repo.listEndpoints(this.db, scope)).map(toEndpoint) });

  async get(scope: Scope, id: number): Promise<Endpoint> {
    const endpoint = await repo.findEndpoint(this.db, scope, id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return toEndpoint(endpoint);
  }

  async create(scope: Scope, body: CreateEndpointBody): Promise<Endpoint & { secret: string }> {
    const url = await this.checkUrl(body.url);
    const secret = newSecret();
    const endpoint = await inTransaction(this.db, async (tx) => {
      // Counted under the workspace's endpoint rows' locks, so parallel creations cannot pass the limit together.
      await repo.lockEndpointCreation(tx, scope);
      if ((await repo.countEndpoints(tx, scope)) >= MAX_ENDPOINTS) {
        throw new AppError(WebhookErrors.WEBHOOK_ENDPOINT_LIMIT_REACHED, `A workspace has at most ${MAX_ENDPOINTS} webhook endpoints`);
      }
      const id = await repo.insertEndpoint(tx, scope, { url, description: body.description?.trim() || null, eventTypes: normaliseEvents(body.events) });
      await repo.updateEndpoint(tx, scope, id, { secret_sealed: sealSecret(this.settings.encryptionKey, id, secret) });
      await writeAudit(tx, scope, { action: 'webhook_endpoint.created', subjectType: 'webhook_endpoint', subjectId: id, data: { url, events: normaliseEvents(body.events) } });
      return (await repo.findEndpoint(tx, scope, id))!;
    });
    return { ...toEndpoint(endpoint), secret };
  }

  async update(scope: Scope, id: number, body: UpdateEndpointBody): Promise<Endpoint> {
    const url = body.url === undefined ? undefined : await this.checkUrl(body.url);
    return inTransaction(this.db, async (tx) => {
      const before = await repo.findEndpoint(tx, scope, id, true);
      if (!before) throw notFound('Webhook endpoint');
      const change: repo.EndpointChange = {};
      if (url !== undefined) change.url = url;
      if (body.events !== undefined) change.event_types = normaliseEvents(body.events);
      if (body.description !== undefined) change.description = body.description?.trim() || null;
      if (body.enabled === true && !before.enabled) Object.assign(change, { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
      if (body.enabled === false && before.enabled) Object.assign(change, { enabled: false, disabled_reason: 'manual', disabled_at: new Date() });
      await repo.updateEndpoint(tx, scope, id, change);
      const changed = Object.keys(change).filter((k) => k !== 'disabled_at' && k !== 'failing_since' && k !== 'disabled_reason');
      if (changed.length > 0) await writeAudit(tx, scope, { action: 'webhook_endpoint.changed', subjectType: 'webhook_endpoint', subjectId: id, data: { changed } });
      return toEndpoint((await repo.findEndpoint(tx, scope, id))!);
    });
  }

  async remove(scope: Scope, id: number) {
    return inTransaction(this.db, async (tx) => {
      const endpoint = await repo.findEndpoint(tx, scope, id, true);
      if (!endpoint) throw notFound('Webhook endpoint');
      // Its deliveries go with it; their queued attempts find nothing and end.
      await repo.deleteEndpoint(tx, scope, id);
      await writeAudit(tx, scope, { action: 'webhook_endpoint.deleted', subjectType: 'webhook_endpoint', subjectId: id, data: { url: endpoint.url } });
      return { id, deleted: true as const };
    });
  }

  /** A new secret; the previous one keeps signing beside it until the overlap ends (a second rotation ends it at once). */
  async rotateSecret(scope: Scope, id: number) {
    const secret = newSecret();
    const previousExpiresAt = new Date(Date.now() + this.settings.rotationOverlapMs);
    await inTransaction(this.db, async (tx) => {
      const endpoint = await repo.findEndpoint(tx, scope, id, true);
      if (!endpoint) throw notFound('Webhook endpoint');
      await repo.updateEndpoint(tx, scope, id, {
        secret_sealed: sealSecret(this.settings.encryptionKey, id, secret),
        previous_secret_sealed: endpoint.secret_sealed,
        previous_secret_expires_at: previousExpiresAt,
      });
      await writeAudit(tx, scope, { action: 'webhook_endpoint.secret_rotated', subjectType: 'webhook_endpoint', subjectId: id, data: { previous_secret_expires_at: previousExpiresAt.toISOString() } });
    });
    return { id, secret, previous_secret_expires_at: previousExpiresAt.toISOString() };
  }

  private async enabledEndpoint(scope: Scope, id: number) {
    const endpoint = await repo.findEndpoint(this.db, scope, id);
    if (!endpoint) throw notFound('Webhook endpoint');
    if (!endpoint.enabled) throw new AppError(WebhookErrors.WEBHOOK_ENDPOINT_DISABLED, 'The endpoint is disabled; enable it first');
    return endpoint;
  }

  /** Queues a `webhook.test` event to this endpoint alone. */
  async sendTest(scope: Scope, id: number): Promise<DeliveryRow> {
    await this.enabledEndpoint(scope, id);
    const data: WebhookEventData<'webhook.test'> = { endpoint_id: id, message: 'A test event from Patchbay: your endpoint received and (we hope) verified it.' };
    const deliveryId = await inTransaction(this.db, async (tx) => {
      const delivery = await repo.insertDirectDelivery(tx, scope, id, { eventId: newEventId(), type: 'webhook.test', data });
      await WebhookDeliveryJob.enqueue(tx, { deliveryId: delivery.id, schedule: delivery.schedule }, { workspaceId: scope.workspaceId });
      return delivery.id;
    });
    return toDeliveryRow((await repo.findDelivery(this.db, scope, deliveryId))!);
  }

  async deliveries(scope: Scope, endpointId: number, query: DeliveryListQuery) {
    if (!(await repo.findEndpoint(this.db, scope, endpointId))) throw notFound('Webhook endpoint');
    const { page, pageSize, offset } = pageWindow(query);
    const filter = { status: query.status };
    const [rows, total] = await Promise.all([
      repo.listDeliveries(this.db, scope, endpointId, filter, { limit: pageSize, offset }),
      repo.countDeliveries(this.db, scope, endpointId, filter),
    ]);
    return { rows: rows.map(toDeliveryRow), total, page, pageSize };
  }

  /** Sends one delivery again now, as new: attempted at once and retried on the schedule if that fails. */
  async redeliver(scope: Scope, deliveryId: number): Promise<DeliveryRow> {
    const delivery = await repo.findDelivery(this.db, scope, deliveryId);
    if (!delivery) throw notFound('Webhook delivery');
    await this.enabledEndpoint(scope, delivery.endpoint_id);
    await inTransaction(this.db, async (tx) => {
      const [queued] = await repo.requeueDeliveries(tx, scope, { id: deliveryId });
      if (queued) await WebhookDeliveryJob.enqueue(tx, { deliveryId, schedule: queued.schedule }, { workspaceId: scope.workspaceId });
    });
    return toDeliveryRow((await repo.findDelivery(this.db, scope, deliveryId))!);
  }

  /** Sends again every failed delivery of the endpoint whose event is from `since` on (at most MAX_REDELIVER per call). */
  async redeliverFailed(scope: Scope, endpointId: number, since: string) {
    await this.enabledEndpoint(scope, endpointId);
    const failedSince = new Date(since);
    return inTransaction(this.db, async (tx) => {
      const rows = await repo.requeueDeliveries(tx, scope, { endpointId, failedSince, limit: MAX_REDELIVER });
      for (let i = 0; i < rows.length; i += 1_000) {
        await WebhookDeliveryJob.enqueueMany(tx, rows.slice(i, i + 1_000).map((r) => ({ deliveryId: r.id, schedule: r.schedule })), { workspaceId: scope.workspaceId });
      }
      return { queued: rows.length, more: await repo.hasFailedSince(tx, scope, endpointId, failedSince) };
    });
  }
}

/** The catalogue as GET /api/developer/webhooks/event-types answers it. */
export function eventTypeCatalogue() {
  return {
    event_types: eventDefinitions().map((d) => ({
      type: d.type,
      version: d.version,
      summary: d.summary,
      description: d.description,
      subscribable: d.type !== 'webhook.test',
      schema: JSON.parse(JSON.stringify(d.data)) as Record<string, unknown>,
    })),
  };
}
