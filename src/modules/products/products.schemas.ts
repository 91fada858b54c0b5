import { Type, type Static } from '@sinclair/typebox';
import { Currency as CurrencyCode, Id, Int } from '../../platform/http/bounded.js';
import { ListEnvelope, PagingQuery } from '../../platform/http/schemas.js';

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const;
const Status = Type.Union(PRODUCT_STATUSES.map((s) => Type.Literal(s)), {
  description: 'draft: being set up; active: on sale (partner programs need it); archived: no longer sold. Licensing works in every status.',
});
const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 });
const Currency = CurrencyCode({ description: 'ISO 4217 code, any case (kept lower-case)' });

export const ProductIdParams = Type.Object({ productId: Id() }, { additionalProperties: false });
export type ProductIdParams = Static<typeof ProductIdParams>;

export const ProductRow = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: Status,
    productAppId: Type.String({
      description: 'The live productAppId a plugin sends to the licensing runtime (the name the runtime, the fixtures and the banner use)',
    }),
    appId: Type.String({ description: 'The same value as `productAppId`, under its earlier name (kept for existing clients)' }),
    priceCents: Type.Integer({ minimum: 0, description: 'List price in minor units of `currency`' }),
    price: Type.String({ description: 'The list price in major units, e.g. "49.00"' }),
    currency: Type.String(),
    maxActivations: Type.Integer({ minimum: 0, description: 'Seats of new serials' }),
    offlineGraceDays: Type.Integer({ minimum: 0, description: 'How long a license token works without the network' }),
    storefrontUrl: Type.Union([Type.String(), Type.Null()]),
    currentVersion: Type.Union([Type.String(), Type.Null()], { description: 'The version the catalogue names when no version records exist' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'ProductRow', additionalProperties: true },
);
export type ProductRow = Static<typeof ProductRow>;

export const ProductListQuery = Type.Object(
  {
    ...PagingQuery,
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name' })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuery>;

export const ProductList = ListEnvelope(Type.Ref('ProductRow'));

const Name = Type.String({ minLength: 1, maxLength: 200 });
const editable = {
  description: Type.Optional(Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])),
  status: Type.Optional(Status),
  priceCents: Type.Optional(Int(0, 2_147_483_647)),
  currency: Type.Optional(Currency),
  maxActivations: Type.Optional(Int(0, 1000)),
  offlineGraceDays: Type.Optional(Int(0, 365)),
  storefrontUrl: Type.Optional(Type.Union([Url, Type.Null()])),
  currentVersion: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 50 }), Type.Null()])),
};

export const CreateProductBody = Type.Object({ name: Name, ...editable }, { additionalProperties: true });
export type CreateProductBody = Static<typeof CreateProductBody>;

export const UpdateProductBody = Type.Object({ name: Type.Optional(Name), ...editable }, { additionalProperties: true, minProperties: 1 });
export type UpdateProductBody = Static<typeof UpdateProductBody>;

export const FileMetadata = Type.Object(
  {
    id: Type.String(),
    filename: Type.String(),
    platform: Type.String(),
    type: Type.String(),
    sizeBytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
    managed: Type.Boolean({ description: 'Stored by this service (downloaded through a private link); false: hosted elsewhere' }),
    deliveryMode: Type.Union([Type.Literal('private_link'), Type.Literal('external_url')]),
    uploadedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    contentType: Type.Union([Type.String(), Type.Null()]),
    sha256: Type.Union([Type.String(), Type.Null()], { description: 'Hex SHA-256 of a stored file' }),
    externalUrl: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'FileMetadata', additionalProperties: true, description: 'Metadata only; not a download grant' },
);
export type FileMetadata = Static<typeof FileMetadata>;

export const RestApi = Type.Object(
  {
    status: Type.String({ description: 'ready, missing or rotation_required' }),
    apiBaseUrl: Type.String(),
    productId: Type.Integer({ minimum: 1 }),
    appId: Type.Union([Type.String(), Type.Null()]),
    productKey: Type.Union([Type.String(), Type.Null()], { description: 'A masked preview, never the key' }),
    productKeyPreview: Type.Union([Type.String(), Type.Null()]),
    environment: Type.String(),
    apiStatus: Type.String({ description: 'never_used, active (a request with the key in the last 7 days) or idle' }),
    lastRequestAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    secretReturned: Type.Literal(false),
    rotationRequired: Type.Boolean(),
  },
  { $id: 'RestApi', additionalProperties: true },
);
