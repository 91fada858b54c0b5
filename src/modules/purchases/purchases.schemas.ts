import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, ListQuery } from '../../platform/http/schemas.js';
import { DateTime, Id, List, Text } from '../../platform/http/bounded.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { IMPORT_FIELD_MAX_BYTES } from '../../platform/import/import-bounds.js';
import { SerialRow } from '../serials/index.js';

export const CHANNELS = ['managed_checkout', 'external_store', 'manual_grant', 'import'] as const;
export const RECORD_TYPES = ['sale', 'free', 'grant', 'subscription'] as const;
export const REFUND_STATUSES = ['none', 'partial', 'full'] as const;
export const PURCHASE_STATUSES = ['pending', 'paid', 'granted', 'imported', 'cancelled'] as const;
export const GRANT_TYPES = ['perpetual', 'subscription', 'existing_serial'] as const;

/** Comma-separated list of enum values, e.g. `sale,free`. */
const enumList = (values: readonly string[]) => `^(${values.join('|')})(,(${values.join('|')}))*$`;

const DATE_OR_TIME = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2}))?$';
/** The longest value DATE_OR_TIME admits: `2026-11-24T10:00:00.123456+05:30`. */
const DATE_OR_TIME_LENGTH = 32;
export const PROVIDER_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$';

export const PurchaseListQuery = Type.Object(
  {
    ...ListQuery,
    channel: Type.Optional(
      Type.String({ pattern: enumList(CHANNELS), maxLength: 200, description: `One or more of ${CHANNELS.join(', ')}, comma-separated` }),
    ),
    productIds: Type.Optional(
      // 100 ids of at most 10 digits and the commas between them.
      Text(1_099, {
        pattern: '^[1-9]\\d{0,9}(,[1-9]\\d{0,9}){0,99}$',
        description: 'Up to 100 product ids, comma-separated (`12,15`). Combined with `productId`, both must match. Ids outside your scope match nothing.',
      }),
    ),
    resellerId: Type.Optional(
      Text(10, {
        pattern: '^([1-9]\\d{0,9}|none)$',
        description: 'A reseller `id` (as in filter-options and the serials resellers list), or `none` for direct sales only',
      }),
    ),
    provider: Type.Optional(
      // 20 slugs of at most 50 characters and the commas between them.
      Text(1_019, {
        pattern: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}(,[A-Za-z0-9][A-Za-z0-9_.-]{0,49}){0,19}$`,
        description: 'Up to 20 provider slugs, comma-separated, case-insensitive (e.g. `card-provider,gumroad`); see filter-options',
      }),
    ),
    refundStatus: Type.Optional(
      Type.String({ pattern: enumList(REFUND_STATUSES), maxLength: 100, description: `One or more of ${REFUND_STATUSES.join(', ')}, comma-separated` }),
    ),
    recordType: Type.Optional(
      Type.String({ pattern: enumList(RECORD_TYPES), maxLength: 100, description: `One or more of ${RECORD_TYPES.join(', ')}, comma-separated` }),
    ),
    dateFrom: Type.Optional(
      Text(DATE_OR_TIME_LENGTH, { pattern: DATE_OR_TIME, description: 'Purchased at or after: `YYYY-MM-DD` (start of that UTC day) or an RFC 3339 date-time' }),
    ),
    dateTo: Type.Optional(
      Text(DATE_OR_TIME_LENGTH, { pattern: DATE_OR_TIME, description: 'Purchased at or before: `YYYY-MM-DD` (the whole UTC day included) or an RFC 3339 date-time' }),
    ),
  },
  { additionalProperties: false },
);
export type PurchaseListQuery = Static<typeof PurchaseListQuery>;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PurchaseRow = Type.Object(
  {
    order_id: Type.Integer({ minimum: 1 }),
    order_item_id: Type.Integer({ minimum: 1 }),
    product_id: Type.Integer({ minimum: 1 }),
    product: Type.String(),
    customer_id: Type.Integer({ minimum: 1, description: 'The customer_id of customer rows (this workspace’s id for the customer)' }),
    email: Type.String({ format: 'email' }),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    status: Type.Union(PURCHASE_STATUSES.map((s) => Type.Literal(s)), { description: 'pending, paid (managed checkout), granted (manual grant), imported (historical/external), cancelled' }),
    invoice_available: Type.Boolean({ description: 'true for paid managed-checkout orders only' }),
    channel: Type.Union(CHANNELS.map((s) => Type.Literal(s))),
    provider: Type.String({ description: 'Payment provider or source store slug' }),
    reseller_id: Nullable(Type.Integer({ minimum: 1 })),
    reseller: Nullable(Type.String()),
    record_type: Type.Union(RECORD_TYPES.map((s) => Type.Literal(s))),
    refund_status: Type.Union(REFUND_STATUSES.map((s) => Type.Literal(s))),
    currency: Type.String({ pattern: '^[a-z]{3}$' }),
    price_cents: Type.Integer({ minimum: 0, description: 'List price in minor units' }),
    sale_price_cents: Type.Integer({ minimum: 0, description: 'Amount charged in minor units (0 for grants and free records)' }),
    refunded_cents: Type.Integer({ minimum: 0 }),
    price: Type.String({ description: 'price_cents in major units, e.g. "49.99"' }),
    sale_price: Type.String(),
    order_reference: Type.String(),
    external_reference: Nullable(Type.String()),
    serial_id: Nullable(Type.Integer({ minimum: 1 })),
    serial_code: Nullable(Type.String()),
    customer_portal_hidden: Type.Boolean(),
    can_refund: Type.Boolean({ description: 'A managed-checkout order, paid, not fully refunded, and you hold purchases.refund' }),
    purchased_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: true },
);
export type PurchaseRow = Static<typeof PurchaseRow>;

export const PurchaseList = ListEnvelope(PurchaseRow, {
  canRefund: Type.Boolean({ description: 'You hold purchases.refund and at least one row of this page is refundable' }),
});

export const FilterOptions = Type.Object(
  {
    products: Type.Array(Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String() }, { additionalProperties: true })),
    resellers: Type.Array(
      Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String(), kind: Type.String() }, { additionalProperties: true }),
    ),
    channels: Type.Array(Type.String()),
    providers: Type.Array(Type.String(), { description: 'Providers present in purchases you can see' }),
    refundStatuses: Type.Array(Type.String()),
    recordTypes: Type.Array(Type.String()),
  },
  { additionalProperties: true },
);

const cell = (description: string) => Type.Optional(Type.Unknown({ description }));

export const PurchaseImportRow = Type.Object(
  {
    email: cell('string, e-mail format (required)'),
    firstName: cell('string, at most 100 characters'),
    lastName: cell('string, at most 100 characters'),
    productId: cell('integer ≥ 1: a product id of this workspace, or a key of productMappings (productId or productName required)'),
    productName: cell('string: a product name of this workspace, or a key of productMappings'),
    serialCode: cell('string: assigned to the customer; created (origin imported) if it does not exist'),
    price: cell('list price in major units, e.g. 49.99 (default: salePrice, else 0)'),
    salePrice: cell('amount paid in major units (default: price); 0 makes the record type free'),
    date: cell('purchase date: YYYY-MM-DD or RFC 3339 date-time, not in the future (default: now)'),
    currency: cell('three-letter code (default: the product currency)'),
    externalReference: cell('order id in the source store; with product and customer it is the natural key that makes re-imports create nothing twice'),
    provider: cell('source store slug, e.g. gumroad (default: external)'),
    resellerId: cell('a reseller id of this workspace, when the sale came through a reseller'),
  },
  { additionalProperties: true },
);

export const PurchaseImportJson = Type.Object(
  {
    purchases: Type.Array(PurchaseImportRow, { maxItems: IMPORT_MAX_ROWS, description: `At most ${IMPORT_MAX_ROWS} rows` }),
    productMappings: Type.Optional(Type.Unknown({ description: 'Object mapping a source product name or id to a product id of this workspace' })),
  },
  { additionalProperties: true },
);

export const PurchaseImportMultipart = Type.Object(
  {
    file: Type.Optional(Type.Unknown({ description: 'CSV file with the demo-csv columns', format: 'binary', maxLength: IMPORT_MAX_BYTES })),
    productMappings: Type.Optional(Type.String({ maxLength: IMPORT_FIELD_MAX_BYTES, description: 'JSON object, as in the JSON form' })),
  },
  { additionalProperties: true },
);

export const ManualGrantBody = Type.Object(
  {
    productId: Type.Optional(Id()),
    productIds: Type.Optional(List(Id(), 50, { minItems: 1, uniqueItems: true })),
    customerId: Type.Optional(Id({ description: 'customer_id of an existing customer you can see' })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'The customer is created in this workspace if new' })),
    firstName: Type.Optional(Type.String({ maxLength: 100 })),
    lastName: Type.Optional(Type.String({ maxLength: 100 })),
    grantType: Type.Optional(
      Type.Union(GRANT_TYPES.map((g) => Type.Literal(g)), {
        default: 'perpetual',
        description:
          'perpetual: lasting access and a new serial per product. subscription: access until accessUntil (default one year) and a serial expiring then; never authorises recurring charges; one product. existing_serial: assigns the available serial serialId; one product.',
      }),
    ),
    grantRequestId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[A-Za-z0-9._:-]+$',
        description: 'Idempotency key, unique per workspace: the same key with the same body returns the first result; with another body, 409 GRANT_REQUEST_CONFLICT',
      }),
    ),
    reason: Type.String({ minLength: 1, maxLength: 1000, description: 'Why access is granted; kept for reconciliation (required)' }),
    note: Type.Optional(Type.String({ maxLength: 2000 })),
    serialId: Type.Optional(Id({ description: 'Required for existing_serial, refused otherwise' })),
    accessUntil: Type.Optional(DateTime({ description: 'subscription only: end of access, in the future' })),
    sendProductPurchaseEmails: Type.Optional(Type.Boolean({ default: false, description: 'Queue a product e-mail to the customer for each product granted' })),
  },
  { additionalProperties: true },
);
export type ManualGrantBody = Static<typeof ManualGrantBody>;

export const GrantOutcome = Type.Object(
  {
    productId: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal('created'), Type.Literal('skipped')]),
    reason: Nullable(Type.String({ description: 'Why a product was skipped: already_entitled or serial_already_assigned' })),
    orderItemId: Nullable(Type.Integer()),
    entitlementId: Nullable(Type.Integer()),
    serialId: Nullable(Type.Integer()),
  },
  { additionalProperties: true },
);

export const GrantOrder = Type.Object(
  {
    order_id: Type.Integer({ minimum: 1 }),
    reference: Type.String(),
    channel: Type.Literal('manual_grant'),
    status: Type.Literal('granted'),
    customer_id: Type.Integer({ minimum: 1 }),
    currency: Type.String(),
    total_cents: Type.Integer({ minimum: 0 }),
    grant_request_id: Nullable(Type.String()),
    purchased_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: true },
);

export const Entitlement = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    customer_id: Type.Integer({ minimum: 1 }),
    product_id: Type.Integer({ minimum: 1 }),
    source: Type.Union([Type.Literal('purchase'), Type.Literal('grant'), Type.Literal('import')]),
    kind: Type.Union([Type.Literal('perpetual'), Type.Literal('subscription')]),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
    order_item_id: Type.Integer({ minimum: 1 }),
    serial_id: Nullable(Type.Integer()),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: true },
);

export const ManualGrantResult = Type.Object(
  {
    success: Type.Boolean(),
    grantType: Type.Union(GRANT_TYPES.map((g) => Type.Literal(g))),
    grantId: Type.Integer({ minimum: 1 }),
    grantRequestId: Nullable(Type.String()),
    count: Type.Integer({ minimum: 0, description: 'Products requested' }),
    createdCount: Type.Integer({ minimum: 0 }),
    skippedCount: Type.Integer({ minimum: 0 }),
    created: Type.Boolean({ description: 'true when at least one product was granted' }),
    customer: Type.Object(
      { customer_id: Type.Integer({ minimum: 1 }), email: Type.String(), created: Type.Boolean({ description: 'The customer relationship was created by this grant' }) },
      { additionalProperties: true },
    ),
    grants: Type.Array(GrantOutcome, { description: 'One outcome per requested product' }),
    products: Type.Array(Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String() }, { additionalProperties: true })),
    purchases: Type.Array(GrantOrder, { description: 'The order that records the grant (empty when everything was skipped)' }),
    items: Type.Array(PurchaseRow, { description: 'The order items created, as purchase rows' }),
    entitlements: Type.Array(Entitlement),
    serials: Type.Array(SerialRow, { description: 'Serials issued or assigned by this grant' }),
    emailsQueued: Type.Integer({ minimum: 0 }),
    reason: Type.String(),
  },
  { additionalProperties: true },
);
export type ManualGrantResult = Static<typeof ManualGrantResult>;
