import { Type } from '@sinclair/typebox';
import { Id, Int, Name } from '../../platform/http/bounded.js';

export const TokenIdParams = Type.Object({ tokenId: Id({ description: 'The API token’s record id (from the list), never the token itself' }) }, { additionalProperties: false });

const TokenFields = {
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'The token’s first 12 characters (`pat_` and 8 more), to recognise it' }),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Updated at most once a minute' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Null: no expiry (until revoked or the member is removed)' }),
  member: Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false, description: 'The member the token acts as' }),
};

export const ApiTokenRow = Type.Object(TokenFields, { additionalProperties: false });
export const ApiTokenList = Type.Object({ rows: Type.Array(ApiTokenRow) }, { additionalProperties: false });

export const CreateApiTokenBody = Type.Object(
  { name: Name({ description: 'What the token is for' }), expiresInDays: Type.Optional(Int(1, 3650, { description: 'Days until it expires; without it, it never does' })) },
  { additionalProperties: false },
);

export const CreatedApiToken = Type.Object(
  { ...TokenFields, token: Type.String({ description: 'The token (`pat_…`), shown this once: only its hash is kept. Send it as `Authorization: Bearer pat_…`' }) },
  { additionalProperties: false },
);

export const ApiTokenRevoked = Type.Object({ id: Type.Integer(), revoked: Type.Literal(true) }, { additionalProperties: false });
