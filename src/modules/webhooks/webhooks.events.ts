import { type Static, type TLiteral, type TObject, type TSchema, type TUnion, Type } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { registerTypeboxFormats } from '../../platform/http/typebox-formats.js';

// The payload checks below use date-time and e-mail formats: known to TypeBox only once registered.
registerTypeboxFormats();

/**
 * The catalogue of webhook events. Each type is declared once with the schema of its `data` and a
 * version: the schema is the contract (published in the OpenAPI document's `webhooks` section and
 * at GET /api/developer/webhooks/event-types), and an emitted payload is checked against it. A
 * change that is not backwards compatible (a field removed or retyped) declares a new version.
 */
export interface WebhookEventDefinition<S extends TObject = TObject> {
  readonly type: string;
  readonly version: number;
  readonly summary: string;
  readonly description: string;
  readonly data: S;
  readonly check: TypeCheck<S>;
}

const Id = (description?: string) => Type.Integer({ minimum: 1, ...(description ? { description } : {}) });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
type LiteralUnion<T extends readonly string[]> = TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
const Literals = <const T extends readonly string[]>(values: T): LiteralUnion<T> => Type.Union(values.map((v) => Type.Literal(v))) as unknown as LiteralUnion<T>;
const data = <P extends Record<string, TSchema>>(properties: P) => Type.Object(properties, { additionalProperties: false });

const SERIAL_STATUSES = ['available', 'redeemed', 'suspended', 'deactivated', 'revoked'] as const;
const AGREEMENT_STATUSES = ['pending', 'accepted', 'active', 'paused', 'ended'] as const;
const TRANSFER_STATUSES = ['reserved', 'submitted', 'paid', 'failed', 'reconciliation_required'] as const;

function define<S extends TObject>(type: string, version: number, summary: string, description: string, schema: S): WebhookEventDefinition<S> {
  return Object.freeze({ type, version, summary, description, data: schema, check: TypeCompiler.Compile(schema) });
}

export const WEBHOOK_EVENTS = {
  'customer.created': define(
    'customer.created',
    1,
    'A customer relationship became active',
    'A customer joined the workspace: created by a customer, serial or purchase import, a checkout sale or a manual grant, or re-added after removal. One event per customer; `customer_id` is the id customer rows show.',
    data({
      customer_id: Id('This workspace’s id for the customer'),
      email: Type.String({ format: 'email' }),
      first_name: Nullable(Type.String()),
      last_name: Nullable(Type.String()),
      source: Type.String({ description: 'What created it: import (customer import), serial-import, purchase-import, checkout, grant (manual grant)' }),
    }),
  ),
  'customer.removed': define(
    'customer.removed',
    1,
    'A customer relationship was removed',
    'DELETE /api/developer/customers/{customerId} removed the relationship (purchases and financial records are kept).',
    data({ customer_id: Id(), email: Type.String({ format: 'email' }), reason: Nullable(Type.String()) }),
  ),
  'serial.generated': define(
    'serial.generated',
    1,
    'Serials were generated',
    'One event per generation (POST /api/developer/serials/generate), whatever the quantity: the count and every id.',
    data({
      product_id: Id(),
      count: Type.Integer({ minimum: 1 }),
      serial_ids: Type.Array(Id()),
      batch_tag: Nullable(Type.String()),
    }),
  ),
  'serial.assigned': define(
    'serial.assigned',
    1,
    'An available serial was assigned to a customer',
    'A serial of the inventory went to a customer: by a purchase import or a manual grant (`via`).',
    data({
      serial_id: Id(),
      product_id: Id(),
      customer_id: Nullable(Id('This workspace’s id for the customer')),
      order_id: Nullable(Id()),
      via: Type.String({ description: 'What assigned it: assigned_by_import (a purchase import), assigned_by_grant (a manual grant of an existing serial)' }),
    }),
  ),
  'serial.status_changed': define(
    'serial.status_changed',
    1,
    'A serial’s status changed through an action',
    'One of the six serial actions (activate, reactivate, deactivate, suspend, unsuspend, revoke) changed its status. Devices released by the action are counted in `released_activations` (no activation.released event each).',
    data({
      serial_id: Id(),
      product_id: Id(),
      action: Literals(['activate', 'reactivate', 'deactivate', 'suspend', 'unsuspend', 'revoke'] as const),
      previous_status: Literals(SERIAL_STATUSES),
      status: Literals(SERIAL_STATUSES),
      released_activations: Type.Integer({ minimum: 0 }),
      reason: Nullable(Type.String()),
    }),
  ),
  'activation.created': define(
    'activation.created',
    1,
    'A device took a seat of a serial',
    'A new activation: a plugin activated through the licensing runtime, or a buyer activated a device offline in the buyers’ portal (`via`). Re-activating the same machine is not a new activation.',
    data({
      activation_id: Id(),
      serial_id: Id(),
      product_id: Id(),
      machine_id: Type.String(),
      machine_name: Nullable(Type.String()),
      platform: Nullable(Type.String()),
      app_version: Nullable(Type.String()),
      activated_at: Time(),
      via: Literals(['runtime', 'customer_portal'] as const),
    }),
  ),
  'activation.released': define(
    'activation.released',
    1,
    'A device released its seat',
    'An activation was released: by the plugin (licensing runtime `deactivate`), by the developer API (DELETE …/serials/{serialId}/activations/{activationId}) or by the buyer in the buyers’ portal (`released_by`).',
    data({
      activation_id: Id(),
      serial_id: Id(),
      product_id: Id(),
      machine_id: Type.String(),
      released_by: Literals(['runtime', 'developer', 'customer_portal'] as const),
      reason: Nullable(Type.String()),
    }),
  ),
  'purchase.recorded': define(
    'purchase.recorded',
    1,
    'A purchase (an order item) was recorded',
    'One event per order item, for every way a purchase arrives (`channel`): a managed-checkout sale, an import, a manual grant. An import row seen before (the same order item) records nothing and sends nothing.',
    data({
      order_item_id: Id(),
      order_id: Id(),
      product_id: Id(),
      customer_id: Nullable(Id('This workspace’s id for the customer')),
      channel: Literals(['managed_checkout', 'external_store', 'manual_grant', 'import'] as const),
      record_type: Literals(['sale', 'free', 'grant', 'subscription'] as const),
      currency: Type.String(),
      price_cents: Type.Integer({ minimum: 0 }),
      sale_price_cents: Type.Integer({ minimum: 0 }),
      serial_id: Nullable(Id()),
      purchased_at: Time(),
    }),
  ),
  'purchase.refunded': define(
    'purchase.refunded',
    1,
    'A purchase was refunded (in part or in full)',
    'A refund of an order item was recorded (reported by the managed checkout or a connected store): this refund’s amount and the item’s refunded total. `order_item_id` is that of the item’s purchase.recorded event.',
    data({
      order_item_id: Id(),
      order_reference: Nullable(Type.String({ description: 'The order’s id at the checkout or store' })),
      amount_cents: Type.Integer({ minimum: 0, description: 'This refund' }),
      refunded_cents: Type.Integer({ minimum: 0, description: 'Refunded so far, this refund included' }),
      fully_refunded: Type.Boolean(),
      refunded_at: Time(),
    }),
  ),
  'import.finished': define(
    'import.finished',
    1,
    'A queued import finished',
    'An import that answered 202 (run as a job) succeeded or failed; the counts are those of GET /api/developer/imports/{importId}. Imports answered at once (201/207/422) report in their answer and send no event.',
    data({
      import_id: Id(),
      kind: Literals(['customers', 'serials', 'purchases'] as const),
      state: Literals(['succeeded', 'failed'] as const),
      imported_count: Type.Integer({ minimum: 0 }),
      inserted_count: Type.Integer({ minimum: 0 }),
      failed_count: Nullable(Type.Integer({ minimum: 0 })),
      failure: Nullable(Type.String()),
    }),
  ),
  'partner.agreement.status_changed': define(
    'partner.agreement.status_changed',
    1,
    'A partner agreement’s status changed',
    'The developer changed an agreement’s status (active, paused, ended), or the recipient accepted an invitation (pending → accepted).',
    data({
      agreement_id: Id(),
      previous_status: Literals(AGREEMENT_STATUSES),
      status: Literals(AGREEMENT_STATUSES),
      changed_by: Literals(['developer', 'recipient'] as const),
    }),
  ),
  'partner.consent.recorded': define(
    'partner.consent.recorded',
    1,
    'A party consented to an agreement’s live terms',
    'The developer or the recipient gave live consent; `live_terms_consented` is true once both have.',
    data({
      agreement_id: Id(),
      party: Literals(['developer', 'recipient'] as const),
      terms_version: Type.Integer({ minimum: 1 }),
      policy_version: Type.String(),
      live_terms_consented: Type.Boolean(),
    }),
  ),
  'payout.transfer.status_changed': define(
    'payout.transfer.status_changed',
    1,
    'A payout transfer to a partner changed status',
    'A payout run reserved a transfer, its provider accepted it, it needs reconciliation, or it was paid or failed.',
    data({
      transfer_id: Id(),
      agreement_id: Id(),
      previous_status: Nullable(Literals(TRANSFER_STATUSES)),
      status: Literals(TRANSFER_STATUSES),
      currency: Type.String(),
      amount_cents: Type.Integer({ minimum: 0 }),
      livemode: Type.Boolean(),
    }),
  ),
  'webhook.test': define(
    'webhook.test',
    1,
    'A test event',
    'Sent to one endpoint by POST /api/developer/webhooks/endpoints/{endpointId}/test; never sent otherwise and not subscribable.',
    data({ endpoint_id: Id(), message: Type.String() }),
  ),
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
/** The types an endpoint may subscribe to (the test event is sent on request only). */
export type SubscribableEventType = Exclude<WebhookEventType, 'webhook.test'>;
export type WebhookEventData<T extends WebhookEventType> = Static<(typeof WEBHOOK_EVENTS)[T]['data']>;

export const SUBSCRIBABLE_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS).filter((t) => t !== 'webhook.test') as SubscribableEventType[];
export const eventDefinitions = (): WebhookEventDefinition[] => Object.values(WEBHOOK_EVENTS) as WebhookEventDefinition[];
