import { Type, type Static } from '@sinclair/typebox';
import { DateTime as Instant, Id as RecordId, Int, Text } from '../../platform/http/bounded.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { IMPORT_FIELD_MAX_BYTES } from '../../platform/import/import-bounds.js';
import { ListEnvelope, ListQuery, PagingQuery } from '../../platform/http/schemas.js';

export const MAX_GENERATE_QUANTITY = 10_000;

export const SerialListQuery = Type.Object(
  {
    ...ListQuery,
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Serial code substring (case and separators ignored) or a customer e-mail (exact)' })),
    status: Type.Optional(
      Type.Union([Type.Literal('available'), Type.Literal('redeemed')], { description: 'available: unassigned inventory; redeemed: in use' }),
    ),
  },
  { additionalProperties: false },
);
export type SerialListQuery = Static<typeof SerialListQuery>;

/** available-by-product lists available serials only, so it takes no `status`. */
export const AvailableQuery = Type.Object(ListQuery, { additionalProperties: false });
export type AvailableQuery = Static<typeof AvailableQuery>;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Nullable(Type.String({ format: 'date-time' }));

export const SerialStatusSchema = Type.Union(
  ['available', 'redeemed', 'suspended', 'deactivated', 'revoked'].map((s) => Type.Literal(s)),
  { description: 'available | redeemed | suspended | deactivated | revoked — see the lifecycle table in the README' },
);

export const SerialRow = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    serial: Type.String(),
    product_id: Type.Integer({ minimum: 1 }),
    product: Type.String(),
    customer_id: Type.Union([Type.Integer(), Type.Null()]),
    status: SerialStatusSchema,
    redeemed: Type.Boolean(),
    revoked: Type.Boolean(),
    active_activation_count: Type.Integer({ minimum: 0 }),
    max_activations: Type.Integer({ minimum: 0 }),
    remaining_activations: Type.Integer({ minimum: 0 }),
    origin: Type.String({ description: 'generated | imported | granted' }),
    expires_at: DateTime,
    promo_price: Type.Union([Type.Integer(), Type.Null()], { description: 'Minor currency units (cents)' }),
    promo_start: DateTime,
    promo_expires: DateTime,
    active_from: DateTime,
    active_to: DateTime,
    batch_tag: Type.Union([Type.String(), Type.Null()]),
    notes: Type.Union([Type.String(), Type.Null()]),
    order_id: Type.Union([Type.Integer(), Type.Null()]),
    redeemed_at: DateTime,
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: true },
);
export type SerialRow = Static<typeof SerialRow>;

export const SerialList = ListEnvelope(SerialRow);

export const AvailableByProduct = ListEnvelope(SerialRow, {
  products: Type.Array(
    Type.Object(
      { productId: Type.Integer(), product: Type.String(), available: Type.Integer(), total: Type.Integer() },
      { additionalProperties: true },
    ),
  ),
  promos: Type.Array(
    Type.Object(
      {
        productId: Type.Integer(),
        product: Type.String(),
        batchTag: Type.Union([Type.String(), Type.Null()]),
        promoPrice: Type.Integer(),
        promoStart: DateTime,
        promoExpires: DateTime,
        available: Type.Integer(),
      },
      { additionalProperties: true },
    ),
  ),
});

export const ResellerList = Type.Object(
  {
    resellers: Type.Array(
      Type.Object(
        {
          id: Type.Integer({ minimum: 1 }),
          name: Type.String(),
          kind: Type.String({ description: 'store | distributor | marketplace | bundle' }),
          relationship_id: Type.Integer({ minimum: 1 }),
          developer_share_bps: Type.Union([Type.Integer({ minimum: 0, maximum: 10000 }), Type.Null()]),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

const Id = RecordId();
const OptDate = Type.Optional(Type.Union([Instant(), Type.Null()]));
const Money = Int(0, 100_000_000, { description: 'Minor currency units (cents), an integer' });

/** camelCase fields and their snake_case aliases (contract §9.2); both may be sent if they agree. */
export const GenerateBody = Type.Object(
  {
    productId: Type.Optional(Id),
    product_id: Type.Optional(Id),
    quantity: Type.Optional(Int(1, MAX_GENERATE_QUANTITY, { default: 1 })),
    prefix: Type.Optional(Text(12, { pattern: '^[A-Za-z0-9]{1,12}$', description: '1–12 letters or digits; upper-cased' })),
    expiresAt: OptDate,
    expires_at: OptDate,
    promoPrice: Type.Optional(Type.Union([Money, Type.Null()])),
    promo_price: Type.Optional(Type.Union([Money, Type.Null()])),
    promoStart: OptDate,
    promo_start: OptDate,
    promoExpires: OptDate,
    promo_expires: OptDate,
    activeFrom: OptDate,
    active_from: OptDate,
    activeTo: OptDate,
    active_to: OptDate,
    batchTag: Type.Optional(Type.String({ maxLength: 100 })),
    batch_tag: Type.Optional(Type.String({ maxLength: 100 })),
    notes: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const GenerateResult = Type.Object(
  {
    message: Type.String(),
    count: Type.Integer(),
    product: Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String() }, { additionalProperties: true }),
    serials: Type.Array(SerialRow),
  },
  { additionalProperties: true },
);

export const SerialIdParams = Type.Object({ serialId: Id }, { additionalProperties: false });

export const ActionBody = Type.Union([
  Type.Object(
    { reason: Type.Optional(Type.String({ maxLength: 500 })), note: Type.Optional(Type.String({ maxLength: 2000 })) },
    { additionalProperties: true },
  ),
  Type.Null(),
]);
export type ActionBody = Static<typeof ActionBody>;

export const ActionResult = Type.Object(
  { serial: SerialRow, deactivatedActivations: Type.Integer({ minimum: 0 }) },
  { additionalProperties: true },
);

export const PortalOrderResult = Type.Object(
  {
    serialId: Type.Integer(),
    serial: Type.String(),
    orderId: Type.Integer(),
    customerPortalHidden: Type.Boolean(),
  },
  { additionalProperties: true },
);

export const SerialEventsQuery = Type.Object(PagingQuery, { additionalProperties: false });
export const SerialEventList = ListEnvelope(
  Type.Object(
    {
      id: Type.Integer(),
      action: Type.String(),
      actor_type: Type.String({ description: 'developer | runtime | system | customer (a buyer in the customer portal)' }),
      actor_account_id: Type.Union([Type.Integer(), Type.Null()]),
      reason: Type.Union([Type.String(), Type.Null()]),
      note: Type.Union([Type.String(), Type.Null()]),
      before_status: Type.Union([Type.String(), Type.Null()]),
      after_status: Type.Union([Type.String(), Type.Null()]),
      data: Type.Object({}, { additionalProperties: true }),
      created_at: Type.String({ format: 'date-time' }),
    },
    { additionalProperties: true },
  ),
);

const cell = (description: string) => Type.Optional(Type.Unknown({ description }));
export const SerialImportJson = Type.Object(
  {
    serials: Type.Array(
      Type.Object(
        {
          serialCode: cell('string (required): 4–64 letters, digits or dashes; unique across the service'),
          productId: cell('integer ≥ 1, or a key of productMappings'),
          productName: cell('string, or a key of productMappings'),
          email: cell('string, e-mail format: assigns the serial to this customer'),
          firstName: cell('string'),
          lastName: cell('string'),
        },
        { additionalProperties: true },
      ),
      { maxItems: IMPORT_MAX_ROWS, description: `At most ${IMPORT_MAX_ROWS} rows` },
    ),
    productMappings: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
export const SerialImportMultipart = Type.Object(
  {
    file: Type.Optional(Type.Unknown({ format: 'binary', maxLength: IMPORT_MAX_BYTES, description: 'CSV with the demo-csv columns' })),
    productMappings: Type.Optional(Type.String({ maxLength: IMPORT_FIELD_MAX_BYTES, description: 'JSON object' })),
  },
  { additionalProperties: true },
);

export const ActivationParams = Type.Object({ serialId: Id, activationId: Id }, { additionalProperties: false });

export const ActivationListQuery = Type.Object(
  {
    ...PagingQuery,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('released')], { description: 'active: holds a seat; released: history' })),
  },
  { additionalProperties: false },
);
export type ActivationListQuery = Static<typeof ActivationListQuery>;

export const ActivationRow = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    serial_id: Type.Integer({ minimum: 1 }),
    machine_id: Type.String(),
    machine_name: Type.Union([Type.String(), Type.Null()]),
    platform: Type.Union([Type.String(), Type.Null()]),
    app_version: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('released')]),
    first_seen_at: Type.String({ format: 'date-time', description: 'When the machine took the seat' }),
    last_seen_at: Type.String({ format: 'date-time', description: 'Last activation or validation (validation refreshes it at most hourly)' }),
    released_at: DateTime,
    release_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'self-service (the plugin released it), support (released through the API; the reason is in the audit trail), deactivate or revoke (a serial action)',
    }),
  },
  { additionalProperties: true },
);
export type ActivationRow = Static<typeof ActivationRow>;

export const ActivationList = ListEnvelope(ActivationRow);

/** Releasing a seat is a support action on a customer's licence: the reason is required and kept in the audit trail. */
export const ReleaseBody = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'Why the seat is released (audit trail)' }),
    note: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
export type ReleaseBody = Static<typeof ReleaseBody>;

export const ReleaseResult = Type.Object(
  {
    released: Type.Boolean({ description: 'false: the seat had already been released (nothing changed)' }),
    activation: ActivationRow,
    serial: SerialRow,
  },
  { additionalProperties: true },
);
