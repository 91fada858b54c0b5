import { type Static, Type } from '@sinclair/typebox';
import { Id, List, Text } from '../../platform/http/bounded.js';
import { ListEnvelope, PagingQuery } from '../../platform/http/schemas.js';
import { PROVIDERS } from './provider-events.js';

// Schemas of the checkout connections: the developer routes' requests and answers, and the
// provider webhook's answer.

export const MAX_MAPPINGS = 500;

const Provider = Type.Union(PROVIDERS.map((p) => Type.Literal(p)), { description: '`stripe`, `paddle` or `lemonsqueezy`' });
const Outcome = Type.Union([Type.Literal('recorded'), Type.Literal('replayed'), Type.Literal('ignored'), Type.Literal('failed')]);

const SigningSecret = Text(200, {
  minLength: 6,
  description: 'The provider’s webhook signing secret (Stripe `whsec_…`, Paddle `pdl_ntfset_…`, the secret you chose in Lemon Squeezy). Kept encrypted; never shown again',
});
const ApiKey = Text(200, {
  minLength: 8,
  pattern: '^(rk|sk)_',
  examples: ['rk_live_51Hx0ExampleRestrictedKey'],
  description: 'Stripe only: a restricted key (`rk_…`) with read access to Checkout Sessions, used to list a session’s line items. Kept encrypted; never shown again',
});

export const ProductMappingEntry = Type.Object(
  {
    providerProductId: Text(200, { minLength: 1, description: 'The provider’s product id: Stripe `prod_…` (a price `price_…` also matches), Paddle `pro_…` (or a price `pri_…`), Lemon Squeezy’s product id as a string' }),
    productId: Id({ description: 'A Patchbay product of this workspace' }),
  },
  { additionalProperties: false },
);
const ProductMappingList = List(ProductMappingEntry, MAX_MAPPINGS, { description: `At most ${MAX_MAPPINGS}; each provider product id once` });

export const CreateConnectionBody = Type.Object(
  {
    provider: Provider,
    signingSecret: SigningSecret,
    productMapping: Type.Optional(ProductMappingList),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
    apiKey: Type.Optional(ApiKey),
  },
  { additionalProperties: false },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object(
  {
    signingSecret: Type.Optional(SigningSecret),
    productMapping: Type.Optional(ProductMappingList),
    enabled: Type.Optional(Type.Boolean()),
    apiKey: Type.Optional(Type.Union([ApiKey, Type.Null()], { description: 'Stripe only; null removes it' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

export const Connection = Type.Object({
  id: Type.Integer(),
  provider: Provider,
  enabled: Type.Boolean(),
  webhookUrl: Type.String({ format: 'uri', description: 'Paste it into the provider’s dashboard as the webhook (notification) destination' }),
  productMapping: Type.Array(ProductMappingEntry),
  apiKeySet: Type.Boolean({ description: 'Stripe: whether a restricted API key is stored to list line items' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Connection = Static<typeof Connection>;

export const ConnectionList = Type.Object({ rows: Type.Array(Connection) });

export const ConnectionIdParams = Type.Object({ connectionId: Id() }, { additionalProperties: false });
export const EventIdParams = Type.Object({ connectionId: Id(), eventId: Id() }, { additionalProperties: false });

export const EventRow = Type.Object({
  id: Type.Integer(),
  provider_event_id: Type.String(),
  type: Type.String(),
  outcome: Outcome,
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was ignored or failed (or replayed: what it repeated)' }),
  order_item_ids: Type.Array(Type.Integer(), { description: 'The order items the event recorded or refunded' }),
  attempts: Type.Integer({ description: 'Deliveries and re-processings that ran it (a replay of a booked event does not count)' }),
  received_at: Type.String({ format: 'date-time' }),
  processed_at: Type.String({ format: 'date-time' }),
});
export type EventRow = Static<typeof EventRow>;

export const EventListQuery = Type.Object(
  {
    ...PagingQuery,
    outcome: Type.Optional(Outcome),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

export const EventList = ListEnvelope(EventRow);

export const EventPathParams = Type.Object({ provider: Provider, connectionId: Id() }, { additionalProperties: false });

export const EventAnswer = Type.Object({
  received: Type.Literal(true),
  id: Type.String({ description: 'The provider’s event id (Lemon Squeezy: derived from the order, see the docs)' }),
  outcome: Outcome,
  reason: Type.Union([Type.String(), Type.Null()]),
  order_item_ids: Type.Array(Type.Integer()),
});
export type EventAnswer = Static<typeof EventAnswer>;
