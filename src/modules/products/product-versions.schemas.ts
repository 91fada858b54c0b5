import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Id } from '../../platform/http/bounded.js';

// Schemas of the version record routes (contract 2.11).

export const VersionRecord = Type.Object(
  {
    id: Type.Union([Type.Integer({ minimum: 1 }), Type.String()], { description: 'A saved record’s id, or "derived" for the version the catalogue names' }),
    version: Type.String(),
    changelog: Type.String(),
    releaseDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    isCurrent: Type.Boolean(),
    createdAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'VersionRecord', additionalProperties: true },
);
export type VersionRecord = Static<typeof VersionRecord>;

export const CreateVersionBody = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 50 }),
    changelog: Type.Optional(Type.String({ maxLength: 20_000 })),
    releaseDate: Type.Optional(Type.Union([DateTime(), Type.Null()])),
    isCurrent: Type.Optional(Type.Boolean({ description: 'Make this the current version (the previous current one stops being current)' })),
  },
  { additionalProperties: true },
);
export type CreateVersionBody = Static<typeof CreateVersionBody>;

export const UpdateVersionBody = Type.Object(
  {
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    changelog: Type.Optional(Type.String({ maxLength: 20_000 })),
    releaseDate: Type.Optional(Type.Union([DateTime(), Type.Null()])),
    isCurrent: Type.Optional(Type.Literal(true, { description: 'Only `true`: there is always exactly one current version; make another current instead' })),
  },
  { additionalProperties: true, minProperties: 1 },
);
export type UpdateVersionBody = Static<typeof UpdateVersionBody>;

export const VersionRecordRef = Type.Ref('VersionRecord');
export const VersionList = Type.Object({ versions: Type.Array(Type.Ref('VersionRecord')) });
export const VersionParams = Type.Object({ productId: Id(), versionId: Id() }, { additionalProperties: false });
