import { Type, type Static } from '@sinclair/typebox';

const AppId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_\\-]+$', description: 'The productAppId shipped in the plugin' });
const Serial = Type.String({ minLength: 4, maxLength: 100, description: 'Serial code; case, spaces and dashes are ignored' });
const MachineId = Type.String({ minLength: 1, maxLength: 200, description: 'Stable machine fingerprint computed by the plugin' });
const Nonce = Type.String({ minLength: 1, maxLength: 200, description: 'Echoed back and bound into the token to prevent replay' });
const OptText = (max: number) => Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]));

export const ActivateBody = Type.Object(
  {
    productAppId: AppId,
    serial: Serial,
    machineId: MachineId,
    machineName: OptText(200),
    platform: OptText(50),
    appVersion: OptText(50),
    nonce: Type.Optional(Nonce),
  },
  { additionalProperties: true },
);
export type ActivateBody = Static<typeof ActivateBody>;

export const ValidateBody = Type.Object(
  { productAppId: AppId, serial: Serial, machineId: MachineId, nonce: Type.Optional(Nonce) },
  { additionalProperties: true },
);
export type ValidateBody = Static<typeof ValidateBody>;

export const DeactivateBody = Type.Object({ productAppId: AppId, serial: Serial, machineId: MachineId }, { additionalProperties: true });
export type DeactivateBody = Static<typeof DeactivateBody>;

const DateTime = Type.String({ format: 'date-time' });
const SeatState = Type.Object({
  status: Type.String(),
  maxActivations: Type.Integer(),
  activeActivations: Type.Integer(),
  remainingActivations: Type.Integer(),
  expiresAt: Type.Union([DateTime, Type.Null()]),
});

export const ActivateResult = Type.Object(
  {
    activation: Type.Object({
      id: Type.Integer(),
      machineId: Type.String(),
      machineName: Type.Union([Type.String(), Type.Null()]),
      platform: Type.Union([Type.String(), Type.Null()]),
      appVersion: Type.Union([Type.String(), Type.Null()]),
      activatedAt: DateTime,
    }),
    serial: SeatState,
    token: Type.String({ description: 'Compact JWS (EdDSA) license token; verify with GET /api/licensing/v1/keys' }),
    tokenExpiresAt: DateTime,
    nonce: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: true },
);

export const VALIDATION_CODES = ['VALID', 'NOT_FOUND', 'SUSPENDED', 'REVOKED', 'DEACTIVATED', 'EXPIRED', 'NOT_ACTIVE_YET', 'MACHINE_NOT_ACTIVATED'] as const;
export type ValidationCode = (typeof VALIDATION_CODES)[number];

export const ValidateResult = Type.Object(
  {
    valid: Type.Boolean(),
    code: Type.Union(VALIDATION_CODES.map((c) => Type.Literal(c))),
    detail: Type.String(),
    nonce: Type.Union([Type.String(), Type.Null()]),
    token: Type.Optional(Type.String()),
    tokenExpiresAt: Type.Optional(DateTime),
  },
  { additionalProperties: true },
);

export const DeactivateResult = Type.Object(
  { released: Type.Boolean({ description: 'false when this machine held no seat (the call is idempotent)' }), serial: SeatState },
  { additionalProperties: true },
);

export const KeysQuery = Type.Object({ productAppId: AppId }, { additionalProperties: false });
export const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        { kty: Type.String(), crv: Type.String(), x: Type.String(), kid: Type.String(), alg: Type.String(), use: Type.String() },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

/** Sent by plugin packages beside the body (`x-product-key`). */
export const ProductKeyHeader = Type.Object({
  'x-product-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The product key a plugin package embeds. Optional; when sent it must belong to the appId (else 401 INVALID_PRODUCT_KEY), and the call counts for the REST status.',
    }),
  ),
});
