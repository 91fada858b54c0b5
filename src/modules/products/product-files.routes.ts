import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireScope } from '../../platform/auth/policy.js';
import { AppError } from '../../platform/http/errors.js';
import { claimIdempotencyKey } from '../../platform/http/idempotency.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { LinkAnswerSchema } from '../../platform/links/private-links.js';
import { multipartBodyPlaceholder } from '../../platform/import/import-request.js';
import { type ExternalFileInput, FILE_PLATFORMS, FILE_TYPES, type FileFields, type ProductFiles } from './product-files.service.js';

const tags = ['product files'];


const FileParams = Type.Object(
  { productId: Type.Integer({ minimum: 1, maximum: 2147483647 }), fileId: Type.String({ pattern: '^file_[a-z0-9]{20}$' }) },
  { additionalProperties: false },
);
const ProductParams = Type.Object({ productId: Type.Integer({ minimum: 1, maximum: 2147483647 }) }, { additionalProperties: false });

const ExternalFileBody = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    url: Type.String({ format: 'uri', pattern: '^https://', maxLength: 2000, description: 'Where the file is hosted (https)' }),
    platform: Type.Optional(Type.Union(FILE_PLATFORMS.map((p) => Type.Literal(p)))),
    type: Type.Optional(Type.Union(FILE_TYPES.map((t) => Type.Literal(t)))),
    version: Type.Optional(Type.String({ maxLength: 50 })),
    sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: true },
);
const UploadForm = Type.Object(
  {
    // Required, but checked while the form streams (the schema sees the form before its parts are read).
    file: Type.Optional(Type.String({ format: 'binary', description: 'Required: the file (fields may come before or after it)' })),
    platform: Type.Optional(Type.String({ description: FILE_PLATFORMS.join(', ') })),
    type: Type.Optional(Type.String({ description: FILE_TYPES.join(', ') })),
    version: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const productFileRoutes: FastifyPluginAsyncTypebox<{ files: ProductFiles }> = async (app, { files }) => {
  app.get(
    '/api/developer/products/:productId/files',
    {
      config: { policy: { auth: 'account', permission: 'product_files.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'Delivery files of a product',
        description: 'Metadata only, newest first. A download goes through POST …/files/{fileId}/link.',
        params: ProductParams,
        response: { 200: Type.Object({ files: Type.Array(Type.Ref('FileMetadata')) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ files: await files.list(requireScope(request), request.params.productId) }),
  );

  app.post(
    '/api/developer/products/:productId/files',
    {
      bodyLimit: 1024 * 1024,
      preValidation: multipartBodyPlaceholder,
      config: { policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' }, longBody: true },
      schema: {
        tags,
        summary: 'Upload or register a delivery file',
        description:
          `multipart/form-data with a \`file\` part (streamed into private storage, at most ${files.maxBytes} bytes, SHA-256 recorded) and optional \`platform\`, \`type\`, \`version\` fields; ` +
          'or JSON `{ filename, url, platform?, type?, version?, sizeBytes? }` to register a file hosted elsewhere (https). 503 PRIVATE_PACKAGE_STORAGE_REQUIRED when private storage is not configured or not reachable.',
        params: ProductParams,
        body: {
          content: {
            'application/json': { schema: ExternalFileBody },
            'multipart/form-data': { schema: UploadForm },
          },
        } as unknown as typeof ExternalFileBody,
        response: { 201: Type.Ref('FileMetadata'), ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
      },
    },
    async (request, reply) => {
      const scope = requireScope(request);
      const { productId } = request.params;
      if (!request.isMultipart()) {
        const body = request.body as ExternalFileInput;
        return reply.code(201).send(await files.registerExternal(scope, productId, body));
      }
      const fields: FileFields = {};
      let staged: Awaited<ReturnType<ProductFiles['stageUpload']>> | undefined;
      try {
        for await (const part of request.parts({ limits: { fileSize: files.maxBytes, files: 1, fields: 10, fieldSize: 1024 } })) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file' || staged) {
              part.file.resume();
              throw new AppError('VALIDATION_FAILED', 'Send exactly one file, in the "file" field');
            }
            staged = await files.stageUpload(scope, productId, { filename: part.filename, contentType: part.mimetype || 'application/octet-stream', body: part.file });
            if (part.file.truncated) throw new AppError('FILE_TOO_LARGE', `The file exceeds ${files.maxBytes} bytes`);
          } else if (part.fieldname === 'platform' || part.fieldname === 'type' || part.fieldname === 'version') {
            fields[part.fieldname] = String(part.value);
          }
        }
        if (!staged) throw new AppError('VALIDATION_FAILED', 'Send the file in a "file" part', { errors: [{ path: 'body/file', message: 'is required' }] });
        // An upload's Idempotency-Key is checked against its content once the content is known.
        const digest = createHash('sha256').update(JSON.stringify([staged.stored.sha256, staged.filename, fields])).digest('hex');
        if ((await claimIdempotencyKey(request, reply, digest)) === 'replayed') {
          await files.discard(staged);
          return reply;
        }
        const metadata = await files.commitUpload(scope, productId, staged, fields);
        staged = undefined;
        return reply.code(201).send(metadata);
      } finally {
        if (staged) await files.discard(staged);
      }
    },
  );

  app.delete(
    '/api/developer/products/:productId/files/:fileId',
    {
      config: { policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' } },
      schema: {
        tags,
        summary: 'Delete a delivery file',
        description: 'The record goes at once; stored bytes are deleted right after (a job). Links already given out stop working.',
        params: FileParams,
        response: { 200: Type.Object({ deleted: Type.Literal(true), id: Type.String() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => files.remove(requireScope(request), request.params.productId, request.params.fileId),
  );

  app.post(
    '/api/developer/products/:productId/files/:fileId/link',
    {
      config: { policy: { auth: 'account', permission: 'product_files.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'A private download link for a stored file',
        description:
          'Answers `{ url, filename, expiresIn: 300 }`. The URL is signed (HMAC) and works any number of times for 300 seconds: a tampered link answers 404, an expired one 410. Files hosted elsewhere answer 409 EXTERNAL_FILE with their `externalUrl`.',
        params: FileParams,
        response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => files.link(requireScope(request), request.params.productId, request.params.fileId),
  );
};
