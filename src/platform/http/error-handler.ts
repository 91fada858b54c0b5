import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, CommonErrors, errorCatalogue, type FieldError } from './errors.js';

const PROBLEM_TYPE_BASE = 'https://patchbay.dev/problems/';

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  code: string,
  detail: string,
  extra: { errors?: unknown[]; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) {
  const spec = errorCatalogue().get(code) ?? { status: 500, title: 'Internal error' };
  if (extra.headers) reply.headers(extra.headers);
  return reply
    .code(spec.status)
    .type('application/problem+json; charset=utf-8')
    .send({
      type: PROBLEM_TYPE_BASE + code.toLowerCase().replaceAll('_', '-'),
      title: spec.title,
      status: spec.status,
      detail,
      code,
      requestId: String(request.id),
      ...(extra.errors ? { errors: extra.errors } : {}),
      ...extra.body,
    });
}

interface ValidationItem {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function validationErrors(error: FastifyError): FieldError[] {
  const context = (error as { validationContext?: string }).validationContext ?? 'body';
  return ((error.validation ?? []) as ValidationItem[]).map((v) => {
    let path = v.instancePath ?? '';
    const missing = v.params?.missingProperty;
    const additional = v.params?.additionalProperty;
    if (typeof missing === 'string') path += `/${missing}`;
    if (typeof additional === 'string') path += `/${additional}`;
    const message = typeof additional === 'string' ? `unknown parameter "${additional}"` : (v.message ?? 'is invalid');
    return { path: `${context}${path}`, message };
  });
}

/** Maps PostgreSQL SQLSTATEs that are the client's concern; everything else is a 500. */
function databaseProblem(error: unknown): { code: string; detail: string } | null {
  const sqlState = (error as { code?: unknown })?.code;
  if (typeof sqlState !== 'string' || !/^[0-9A-Z]{5}$/.test(sqlState)) return null;
  if (sqlState === '23505') return { code: CommonErrors.CONFLICT, detail: 'A record with the same unique value already exists' };
  if (sqlState === '40001' || sqlState === '40P01') return { code: CommonErrors.SERIALIZATION_FAILURE, detail: 'Concurrent update; retry the request' };
  return null;
}

const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: CommonErrors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: CommonErrors.VALIDATION_FAILED,
  FST_ERR_CTP_EMPTY_JSON_BODY: CommonErrors.MALFORMED_JSON,
  FST_ERR_CTP_INVALID_JSON_BODY: CommonErrors.MALFORMED_JSON,
  FST_ERR_CTP_BODY_TOO_LARGE: CommonErrors.PAYLOAD_TOO_LARGE,
  FST_REQ_FILE_TOO_LARGE: CommonErrors.PAYLOAD_TOO_LARGE,
  FST_PARTS_LIMIT: CommonErrors.PAYLOAD_TOO_LARGE,
  FST_FILES_LIMIT: CommonErrors.PAYLOAD_TOO_LARGE,
  FST_FIELDS_LIMIT: CommonErrors.PAYLOAD_TOO_LARGE,
  FST_INVALID_MULTIPART_CONTENT_TYPE: CommonErrors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_VALIDATION: CommonErrors.VALIDATION_FAILED,
};

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      return sendProblem(reply, request, error.code, error.message, error.extra);
    }
    if (error.validation) {
      return sendProblem(reply, request, CommonErrors.VALIDATION_FAILED, 'The request does not match the documented schema', {
        errors: validationErrors(error),
      });
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) return sendProblem(reply, request, mapped, error.message);
    if (error.code === 'FST_ERR_RATE_LIMIT' || error.statusCode === 429) {
      return sendProblem(reply, request, CommonErrors.RATE_LIMITED, 'Rate limit exceeded; retry after the Retry-After interval');
    }
    if (error instanceof SyntaxError && error.statusCode === 400) {
      return sendProblem(reply, request, CommonErrors.MALFORMED_JSON, 'Request body is not valid JSON');
    }
    const db = databaseProblem(error);
    if (db) return sendProblem(reply, request, db.code, db.detail);
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      const code = error.statusCode === 413 ? CommonErrors.PAYLOAD_TOO_LARGE : error.statusCode === 415 ? CommonErrors.UNSUPPORTED_MEDIA_TYPE : CommonErrors.VALIDATION_FAILED;
      return sendProblem(reply, request, code, error.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, request, CommonErrors.INTERNAL, `An internal error occurred; quote request id ${request.id} when reporting it`);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, CommonErrors.ROUTE_NOT_FOUND, `No route ${request.method} ${request.url.split('?')[0]}`),
  );
}
