import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../platform/http/bounded.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { IMPORT_FIELD_MAX_BYTES } from '../../platform/import/import-bounds.js';
import { ListEnvelope, ListQuery } from '../../platform/http/schemas.js';

export const CustomerListQuery = Type.Object(ListQuery, { additionalProperties: false });
export type CustomerListQuery = Static<typeof CustomerListQuery>;

export const CustomerRow = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'Developer-customer relationship id' }),
    customer_id: Type.Integer({
      minimum: 1,
      description: 'This workspace’s id for the customer (the relationship, equal to `id`); it says nothing about other workspaces',
    }),
    email: Type.String({ format: 'email' }),
    first_name: Type.Union([Type.String(), Type.Null()]),
    last_name: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('removed')]),
    email_verification_status: Type.Union([Type.Literal('verified'), Type.Literal('unverified')], {
      description: 'Whether the address was verified for this workspace',
    }),
    product_ids: Type.Array(Type.Integer(), { description: 'Linked products the caller can see' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: true },
);
export type CustomerRow = Static<typeof CustomerRow>;

export const CustomerList = ListEnvelope(CustomerRow);

const cell = (description: string) => Type.Optional(Type.Unknown({ description }));

/** Rows are validated one by one so that one bad row yields a 207, not a 400 for the whole file. */
export const CustomerImportRow = Type.Object(
  {
    email: cell('string, e-mail format (required)'),
    firstName: cell('string, at most 100 characters'),
    lastName: cell('string, at most 100 characters'),
    productId: cell('integer ≥ 1: a product id of this workspace, or a key of productMappings'),
    productName: cell('string: a product name of this workspace, or a key of productMappings'),
    marketingConsent: cell('boolean: the customer opted in to marketing e-mail'),
  },
  { additionalProperties: true },
);

export const CustomerImportJson = Type.Object(
  {
    customers: Type.Array(CustomerImportRow, { maxItems: IMPORT_MAX_ROWS, description: `At most ${IMPORT_MAX_ROWS} rows` }),
    productMappings: Type.Optional(
      Type.Unknown({ description: 'Object mapping a source product name or id to a product id of this workspace' }),
    ),
  },
  { additionalProperties: true },
);

export const CustomerImportMultipart = Type.Object(
  {
    file: Type.Optional(Type.Unknown({ description: 'CSV file with the demo-csv columns', format: 'binary', maxLength: IMPORT_MAX_BYTES })),
    productMappings: Type.Optional(Type.String({ maxLength: IMPORT_FIELD_MAX_BYTES, description: 'JSON object, as in the JSON form' })),
  },
  { additionalProperties: true },
);

export const CustomerIdParams = Type.Object(
  { customerId: Id({ description: 'The customer_id shown in customer rows' }) },
  { additionalProperties: false },
);

export const RemoveCustomerBody = Type.Union(
  [
    Type.Object(
      {
        confirm: Type.Optional(Type.Boolean()),
        confirmation: Type.Optional(Type.String({ maxLength: 100 })),
        reason: Type.Optional(Type.String({ maxLength: 1000 })),
      },
      { additionalProperties: true },
    ),
    Type.Null(),
  ],
);
export type RemoveCustomerBody = Static<typeof RemoveCustomerBody>;

export const RemoveCustomerResult = Type.Object(
  {
    ok: Type.Boolean(),
    alreadyRemoved: Type.Boolean(),
    already_removed: Type.Boolean(),
    customer_id: Type.Integer({ minimum: 1 }),
    developer_customer_id: Type.Union([Type.Integer(), Type.String(), Type.Null()]),
    message: Type.String(),
  },
  { additionalProperties: true },
);
export type RemoveCustomerResult = Static<typeof RemoveCustomerResult>;
