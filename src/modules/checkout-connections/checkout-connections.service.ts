import { writeAudit } from '../../platform/audit/audit.repo.js';
import type { Scope } from '../../platform/auth/scope.js';
import { seal } from '../../platform/crypto/sealed.js';
import type { Db } from '../../platform/db/database.js';
import type { CheckoutProvider } from '../../platform/db/schema.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import * as repo from './checkout-connections.repo.js';
import type { Connection, CreateConnectionBody, EventListQuery, EventRow, UpdateConnectionBody } from './checkout-connections.schemas.js';
import { secretContext } from './events.service.js';

type Mapping = NonNullable<CreateConnectionBody['productMapping']>;

/** The public URL a provider posts a connection's events to. */
export const webhookUrl = (publicBaseUrl: string, provider: CheckoutProvider, id: number) => `${publicBaseUrl}/api/checkout/${provider}/${id}/events`;

export function toEventRow(r: repo.EventRecord): EventRow {
  return {
    id: r.id,
    provider_event_id: r.provider_event_id,
    type: r.type,
    outcome: r.outcome,
    reason: r.reason,
    order_item_ids: r.order_item_ids,
    attempts: r.attempts,
    received_at: r.received_at.toISOString(),
    processed_at: r.processed_at.toISOString(),
  };
}

/**
 * A workspace's checkout connections: the secrets are sealed as they arrive and never come back,
 * the product mapping names only products of the workspace, every change is audited (without
 * the secrets).
 */
export class CheckoutConnections {
  constructor(
    private readonly db: Db,
    private readonly encryptionKey: Buffer,
    private readonly publicBaseUrl: string,
  ) {}

  async create(scope: Scope, body: CreateConnectionBody): Promise<Connection> {
    if (body.apiKey !== undefined && body.provider !== 'stripe') throw onlyStripe();
    const mapping = body.productMapping ?? [];
    const id = await inTransaction(this.db, async (tx) => {
      await this.checkMapping(tx, scope, mapping);
      const connectionId = await repo.nextConnectionId(tx);
      await repo.insertConnection(tx, scope, {
        id: connectionId,
        provider: body.provider,
        signingSecretSealed: this.seal(connectionId, 'signing-secret', body.signingSecret),
        apiKeySealed: body.apiKey ? this.seal(connectionId, 'api-key', body.apiKey) : null,
        enabled: body.enabled ?? true,
      });
      await repo.replaceMapping(tx, scope, connectionId, mapping);
      await writeAudit(tx, scope, { action: 'checkout_connections.created', subjectType: 'checkout_connection', subjectId: connectionId, data: { provider: body.provider, mappings: mapping.length, apiKey: body.apiKey !== undefined } });
      return connectionId;
    });
    return this.get(scope, id);
  }

  async list(scope: Scope): Promise<{ rows: Connection[] }> {
    const rows = await repo.listConnections(this.db, scope);
    const mappings = await repo.mappingsOf(this.db, scope, rows.map((r) => r.id));
    return { rows: rows.map((r) => this.toConnection(r, mappings)) };
  }

  async get(scope: Scope, id: number): Promise<Connection> {
    const row = await repo.findConnection(this.db, scope, id);
    if (!row) throw notFound('Checkout connection');
    return this.toConnection(row, await repo.mappingsOf(this.db, scope, [id]));
  }

  async update(scope: Scope, id: number, body: UpdateConnectionBody): Promise<Connection> {
    await inTransaction(this.db, async (tx) => {
      const row = await repo.findConnection(tx, scope, id, true);
      if (!row) throw notFound('Checkout connection');
      if (body.apiKey && row.provider !== 'stripe') throw onlyStripe();
      if (body.productMapping) {
        await this.checkMapping(tx, scope, body.productMapping);
        await repo.replaceMapping(tx, scope, id, body.productMapping);
      }
      await repo.updateConnection(tx, scope, id, {
        ...(body.signingSecret !== undefined ? { signing_secret_sealed: this.seal(id, 'signing-secret', body.signingSecret) } : {}),
        ...(body.apiKey !== undefined ? { api_key_sealed: body.apiKey === null ? null : this.seal(id, 'api-key', body.apiKey) } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      });
      await writeAudit(tx, scope, {
        action: 'checkout_connections.changed',
        subjectType: 'checkout_connection',
        subjectId: id,
        // What changed, never a secret.
        data: { signingSecret: body.signingSecret !== undefined, apiKey: body.apiKey === undefined ? undefined : body.apiKey === null ? 'removed' : 'set', enabled: body.enabled, mappings: body.productMapping?.length },
      });
    });
    return this.get(scope, id);
  }

  async remove(scope: Scope, id: number): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      const row = await repo.findConnection(tx, scope, id, true);
      if (!row) throw notFound('Checkout connection');
      // Its log and order references go with it; the purchases, serials and ledger entries it booked stay.
      await repo.deleteConnection(tx, scope, id);
      await writeAudit(tx, scope, { action: 'checkout_connections.removed', subjectType: 'checkout_connection', subjectId: id, data: { provider: row.provider } });
    });
  }

  async events(scope: Scope, id: number, query: EventListQuery) {
    if (!(await repo.findConnection(this.db, scope, id))) throw notFound('Checkout connection');
    const { page, pageSize, offset } = pageWindow(query);
    const { rows, total } = await repo.listEvents(this.db, scope, id, query.outcome, { limit: pageSize, offset });
    return { rows: rows.map(toEventRow), total, page, pageSize };
  }

  /** Each provider id once, each product of this workspace (another workspace's product is not found). */
  private async checkMapping(tx: Tx, scope: Scope, mapping: Mapping): Promise<void> {
    const seen = new Set<string>();
    for (const [i, entry] of mapping.entries()) {
      if (seen.has(entry.providerProductId)) {
        throw new AppError(CommonErrors.VALIDATION_FAILED, `${entry.providerProductId} is mapped twice`, { errors: [{ path: `body/productMapping/${i}/providerProductId`, message: 'is mapped twice' }] });
      }
      seen.add(entry.providerProductId);
    }
    const ours = await repo.workspaceProductIds(tx, scope, [...new Set(mapping.map((m) => m.productId))]);
    const foreign = mapping.findIndex((m) => !ours.has(m.productId));
    if (foreign >= 0) throw notFound('Product');
  }

  private seal(connectionId: number, what: 'signing-secret' | 'api-key', secret: string): string {
    return seal(this.encryptionKey, Buffer.from(secret, 'utf8'), secretContext(connectionId, what));
  }

  private toConnection(row: repo.ConnectionRecord, mappings: Awaited<ReturnType<typeof repo.mappingsOf>>): Connection {
    return {
      id: row.id,
      provider: row.provider,
      enabled: row.enabled,
      webhookUrl: webhookUrl(this.publicBaseUrl, row.provider, row.id),
      productMapping: mappings.filter((m) => m.connection_id === row.id).map((m) => ({ providerProductId: m.provider_product_id, productId: m.product_id })),
      apiKeySet: row.api_key_sealed !== null,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }
}

const onlyStripe = () =>
  new AppError(CommonErrors.VALIDATION_FAILED, 'Only a Stripe connection holds an API key (Stripe does not send line items in its events)', { errors: [{ path: 'body/apiKey', message: 'is for Stripe connections only' }] });
