import { Type } from '@sinclair/typebox';
import { Id, Int, Text } from '../../platform/http/bounded.js';

// Schemas of the delivery file routes.

export const FILE_PLATFORMS = ['windows', 'macos', 'linux', 'ios', 'android', 'any'] as const;
export const FILE_TYPES = ['installer', 'plugin', 'archive', 'sample_pack', 'preset', 'manual', 'other'] as const;

export const FileParams = Type.Object({ productId: Id(), fileId: Text(25, { pattern: '^file_[a-z0-9]{20}$' }) }, { additionalProperties: false });
/** Longer than any delivery file of an audio product; the column itself is a bigint. */
const MAX_EXTERNAL_FILE_BYTES = 2 ** 40;
const longest = (values: readonly string[]) => Math.max(...values.map((v) => v.length));

export const ExternalFileBody = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    url: Type.String({ format: 'uri', pattern: '^https://', maxLength: 2000, description: 'Where the file is hosted (https)' }),
    platform: Type.Optional(Type.Union(FILE_PLATFORMS.map((p) => Type.Literal(p)))),
    type: Type.Optional(Type.Union(FILE_TYPES.map((t) => Type.Literal(t)))),
    version: Type.Optional(Type.String({ maxLength: 50 })),
    sizeBytes: Type.Optional(Int(0, MAX_EXTERNAL_FILE_BYTES)),
  },
  { additionalProperties: true },
);
/** The form streams into the handler, which checks these bounds itself (the schema sees the form before its parts are read). */
export const uploadForm = (maxBytes: number) =>
  Type.Object(
    {
      // Required, but checked while the form streams.
      file: Type.Optional(Text(maxBytes, { format: 'binary', description: 'Required: the file (fields may come before or after it)' })),
      platform: Type.Optional(Text(longest(FILE_PLATFORMS), { description: FILE_PLATFORMS.join(', ') })),
      type: Type.Optional(Text(longest(FILE_TYPES), { description: FILE_TYPES.join(', ') })),
      version: Type.Optional(Text(50)),
    },
    { additionalProperties: true },
  );

/** JSON registers a file hosted elsewhere; multipart uploads one (read by the handler as it streams). */
export const FileBody = (maxBytes: number) =>
  ({
    content: {
      'application/json': { schema: ExternalFileBody },
      'multipart/form-data': { schema: uploadForm(maxBytes) },
    },
  }) as unknown as typeof ExternalFileBody;

export const FileList = Type.Object({ files: Type.Array(Type.Ref('FileMetadata')) });
export const FileMetadataRef = Type.Ref('FileMetadata');
export const FileDeleted = Type.Object({ deleted: Type.Literal(true), id: Type.String() });
