import { createHash } from 'node:crypto';
import { defineRoute } from '../../platform/auth/define-route.js';
import { AppError } from '../../platform/http/errors.js';
import { claimIdempotencyKey } from '../../platform/http/idempotency.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { multipartBodyPlaceholder } from '../../platform/import/import-request.js';
import { LinkAnswerSchema } from '../../platform/links/private-links.js';
import { FileBody, FileDeleted, FileList, FileMetadataRef, FileParams } from './product-files.schemas.js';
import type { ExternalFileInput, FileFields, ProductFiles } from './product-files.service.js';
import { ProductIdParams } from './products.schemas.js';

const tags = ['product files'];

export const productFileRoutes = ({ files }: { files: ProductFiles }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/files',
    policy: { auth: 'account', permission: 'product_files.view', product: 'productId' },
    schema: {
      tags,
      summary: 'Delivery files of a product',
      description: 'Metadata only, newest first. A download goes through POST …/files/{fileId}/link.',
      params: ProductIdParams,
      response: { 200: FileList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, scope }) => ({ files: await files.list(scope, request.params.productId) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/files',
    policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' },
    bodyLimit: 1024 * 1024,
    preValidation: multipartBodyPlaceholder,
    config: { longBody: true },
    schema: {
      tags,
      summary: 'Upload or register a delivery file',
      description:
        `multipart/form-data with a \`file\` part (streamed into private storage, at most ${files.maxBytes} bytes, SHA-256 recorded) and optional \`platform\`, \`type\`, \`version\` fields; ` +
        'or JSON `{ filename, url, platform?, type?, version?, sizeBytes? }` to register a file hosted elsewhere (https). 503 PRIVATE_PACKAGE_STORAGE_REQUIRED when private storage is not configured or not reachable.',
      params: ProductIdParams,
      body: FileBody(files.maxBytes),
      response: { 201: FileMetadataRef, ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
    },
    handler: async ({ request, reply, scope }) => {
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
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/developer/products/:productId/files/:fileId',
    policy: { auth: 'account', permission: 'product_files.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Delete a delivery file',
      description: 'The record goes at once; stored bytes are deleted right after (a job). Links already given out stop working.',
      params: FileParams,
      response: { 200: FileDeleted, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => files.remove(scope, request.params.productId, request.params.fileId),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/files/:fileId/link',
    policy: { auth: 'account', permission: 'product_files.view', product: 'productId' },
    schema: {
      tags,
      summary: 'A private download link for a stored file',
      description:
        'Answers `{ url, filename, expiresIn: 300 }`. The URL is absolute (under PUBLIC_BASE_URL), signed (HMAC) and works any number of times for 300 seconds: a tampered link answers 404, an expired one 410. Files hosted elsewhere answer 409 EXTERNAL_FILE with their `externalUrl`.',
      params: FileParams,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
    },
    handler: ({ request, scope }) => files.link(scope, request.params.productId, request.params.fileId),
  }),
];
