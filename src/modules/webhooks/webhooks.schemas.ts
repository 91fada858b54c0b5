import { type Static, Type } from '@sinclair/typebox';
import { DateTime, Id, Int, List, Text } from '../../platform/http/bounded.js';
import { ListEnvelope, PagingQuery } from '../../platform/http/schemas.js';
import { SUBSCRIBABLE_EVENT_TYPES } from './webhooks.events.js';

/** Endpoints a workspace may have. */
export const MAX_ENDPOINTS = 20;
/** Failed deliveries one "redeliver failed" request queues at most (`more` says whether some were left). */
export const MAX_REDELIVER = 10_000;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'retrying'] as const;
const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)), {
  description: 'pending: queued, not yet answered; retrying: failed, another attempt is scheduled (`next_attempt_at`); succeeded: a 2xx answer; failed: every attempt failed (or the endpoint was disabled)',
});

export const EndpointUrl = Text(2_000, { format: 'uri', description: 'https (plain http only to hosts the deployment allows with WEBHOOK_ALLOWED_HOSTS)' });
const EventTypeName = Type.Union([Type.Literal('*'), ...SUBSCRIBABLE_EVENT_TYPES.map((t) => Type.Literal(t))], { description: 'An event type of the catalogue, or `*` for every type (also those added later)' });
const EventTypes = List(EventTypeName, SUBSCRIBABLE_EVENT_TYPES.length + 1, { minItems: 1, uniqueItems: true });
const Description = Text(500);

export const EndpointIdParams = Type.Object({ endpointId: Id() }, { additionalProperties: false });
// Deliveries are counted in bigint; an id past 2^31 stays addressable.
export const DeliveryIdParams = Type.Object({ deliveryId: Int(1, Number.MAX_SAFE_INTEGER) }, { additionalProperties: false });

export const CreateEndpointBody = Type.Object(
  { url: EndpointUrl, events: EventTypes, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    events: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'false disables the endpoint (nothing is sent to it); true enables it again and forgets its failures' })),
    description: Type.Optional(Nullable(Description)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const Endpoint = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(Type.Union([Type.Literal('manual'), Type.Literal('failing')], { description: 'failing: disabled after every attempt failed for 5 days (the owner was e-mailed)' })),
    disabled_at: Nullable(Type.String({ format: 'date-time' })),
    failing_since: Nullable(Type.String({ format: 'date-time', description: 'The first failed attempt since the last success' })),
    previous_secret_expires_at: Nullable(Type.String({ format: 'date-time', description: 'Until then, deliveries are signed with the previous secret too (after a rotation)' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type Endpoint = Static<typeof Endpoint>;

const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'The signing secret, shown this once (`whsec_` and base64): keep it where your receiver verifies signatures' });
export const CreatedEndpoint = Type.Composite([Endpoint, Type.Object({ secret: Secret })], { additionalProperties: false });
export const EndpointList = Type.Object({ rows: Type.Array(Endpoint) }, { additionalProperties: false });
export const DeletedEndpoint = Type.Object({ id: Type.Integer({ minimum: 1 }), deleted: Type.Literal(true) }, { additionalProperties: false });
export const RotatedSecret = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    secret: Secret,
    previous_secret_expires_at: Type.String({ format: 'date-time', description: 'Until then every delivery carries a signature with the previous secret too' }),
  },
  { additionalProperties: false },
);

export const DeliveryRow = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    endpoint_id: Type.Integer({ minimum: 1 }),
    event_id: Type.String({ description: 'The event’s id: the body’s `id` and the `webhook-id` header' }),
    event_type: Type.String(),
    status: DeliveryStatus,
    attempts: Type.Integer({ minimum: 0, description: 'Attempts made, redeliveries included' }),
    last_status_code: Nullable(Type.Integer({ description: 'The last answer’s HTTP status (null: none arrived)' })),
    next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
    last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
    response_duration_ms: Nullable(Type.Integer({ minimum: 0 })),
    response_body: Nullable(Type.String({ description: 'The first 2 KB of the last answer’s body' })),
    error: Nullable(Type.String({ description: 'Why the last attempt got no answer (timeout, refused address, connection error)' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type DeliveryRow = Static<typeof DeliveryRow>;

export const DeliveryListQuery = Type.Object({ ...PagingQuery, status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)))) }, { additionalProperties: false });
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;
export const DeliveryList = ListEnvelope(DeliveryRow);

export const RedeliverFailedBody = Type.Object(
  { since: DateTime({ description: 'Failed deliveries of events created at or after this time are queued again' }) },
  { additionalProperties: false },
);
export const RedeliverFailedResult = Type.Object(
  {
    queued: Type.Integer({ minimum: 0 }),
    more: Type.Boolean({ description: `More failed deliveries are left than one request queues (${MAX_REDELIVER}); send the request again` }),
  },
  { additionalProperties: false },
);

export const EventTypeList = Type.Object(
  {
    event_types: Type.Array(
      Type.Object(
        {
          type: Type.String(),
          version: Type.Integer({ minimum: 1 }),
          summary: Type.String(),
          description: Type.String(),
          subscribable: Type.Boolean({ description: 'false for `webhook.test`, which is sent on request only' }),
          schema: Type.Object({}, { additionalProperties: true, description: 'The JSON Schema of the event’s `data`' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
