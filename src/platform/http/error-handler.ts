import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/db-errors.js';
import { StorageUnavailableError, storageRequired } from '../storage/storage.js';
import { DEFAULT_PROBLEM_TYPE_BASE, problemType } from './error-docs.js';
import { AppError, CommonErrors, errorCatalogue, type ErrorCode, type FieldError } from './errors.js';
import { findIllFormedText } from './text-hygiene.js';
import { fieldErrors, type ValidationItem } from './validation.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** PUBLIC_BASE_URL: problem `type` URLs point at this deployment's /docs/errors page. */
    problemTypeBase: string;
  }
}

/** The base of `type` URLs for answers of this app (raw-socket answers included). */
export const problemTypeBase = (app: FastifyInstance) => (app.hasDecorator('problemTypeBase') ? app.problemTypeBase : DEFAULT_PROBLEM_TYPE_BASE);

export function problemBody(
  code: ErrorCode,
  detail: string,
  requestId: string,
  extra: { errors?: unknown[]; body?: Record<string, unknown> } = {},
  typeBase = DEFAULT_PROBLEM_TYPE_BASE,
) {
  const spec = errorCatalogue().get(code) ?? { status: 500, title: 'Internal error' };
  return {
    type: problemType(typeBase, code),
    title: spec.title,
    status: spec.status,
    detail,
    code,
    requestId,
    ...(extra.errors ? { errors: extra.errors } : {}),
    ...extra.body,
  };
}

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  code: ErrorCode,
  detail: string,
  extra: { errors?: unknown[]; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) {
  const body = problemBody(code, detail, String(request.id), extra, problemTypeBase(request.server));
  if (extra.headers) reply.headers(extra.headers);
  return reply.code(body.status).type('application/problem+json; charset=utf-8').send(body);
}

/**
 * A complete HTTP/1.1 problem response for writing on a raw socket, where there is no reply
 * object (parser errors, a body that never arrived); the connection is closed after it.
 */
export function problemResponse(code: ErrorCode, detail: string, typeBase = DEFAULT_PROBLEM_TYPE_BASE): string {
  const requestId = randomUUID();
  const body = JSON.stringify(problemBody(code, detail, requestId, {}, typeBase));
  const spec = errorCatalogue().get(code)!;
  return (
    `HTTP/1.1 ${spec.status} ${spec.title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Errors Node's HTTP parser raises before there is a request (headers over the limit, a request
 * that did not arrive in time, bytes that are not HTTP): answered on the raw socket, still as
 * problem+json with a request id, then the connection is closed.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [CommonErrors.HEADERS_TOO_LARGE, 'The request headers exceed 16 KiB']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [CommonErrors.REQUEST_TIMEOUT, 'The request was not received in time']
        : [CommonErrors.BAD_REQUEST, 'The request is not valid HTTP'];
  this.log.debug({ err: { code: error.code, message: error.message } }, 'client error');
  if (socket.writable) socket.write(problemResponse(code, detail, problemTypeBase(this)));
  socket.destroy();
}

/** Router-level failures (a path parameter over the length limit, an undecodable URL). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(reply, request, CommonErrors.URI_TOO_LONG, 'A path parameter exceeds the length limit');
  return sendProblem(reply, request, CommonErrors.BAD_REQUEST, 'The request URL cannot be decoded');
}

// busboy's messages for a body that is not valid multipart (it gives them no codes).
const MULTIPART_FORMAT = /^(Multipart: Boundary not found|Malformed part header|Unexpected end of (form|file)|Part terminated early|Malformed urlencoded form|Unexpected end of multipart data)/i;

export function isMalformedMultipart(error: unknown): boolean {
  const message = (error as { message?: unknown })?.message;
  return typeof message === 'string' && MULTIPART_FORMAT.test(message);
}

function validationErrors(error: FastifyError): FieldError[] {
  return fieldErrors((error.validation ?? []) as ValidationItem[], (error as { validationContext?: string }).validationContext ?? 'body');
}

/** Maps PostgreSQL SQLSTATEs that are the client's concern; everything else is a 500. */
function databaseProblem(error: unknown): { code: ErrorCode; detail: string } | null {
  const sqlState = (error as { code?: unknown })?.code;
  if (typeof sqlState !== 'string' || !/^[0-9A-Z]{5}$/.test(sqlState)) return null;
  if (sqlState === '23505') return { code: CommonErrors.CONFLICT, detail: 'A record with the same unique value already exists' };
  if (sqlState === '40001' || sqlState === '40P01') return { code: CommonErrors.SERIALIZATION_FAILURE, detail: 'Concurrent update; retry the request' };
  // What a route let through but its column cannot hold: a number over 2^31 - 1 for an integer
  // column, text with a NUL (a field read outside the text-hygiene hook, such as a multipart field).
  if (sqlState === '22003') return { code: CommonErrors.VALIDATION_FAILED, detail: 'A number in the request is outside the range that can be stored' };
  if (sqlState === '22021') return { code: CommonErrors.INVALID_TEXT, detail: 'The request contains text that cannot be stored (a NUL character)' };
  return null;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
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

export function registerErrorHandling(app: FastifyInstance, publicBaseUrl = DEFAULT_PROBLEM_TYPE_BASE): void {
  app.decorate('problemTypeBase', publicBaseUrl.replace(/\/$/, ''));

  // Text that PostgreSQL cannot store (NUL) or that is not Unicode (unpaired surrogates) is refused
  // here, for every route, before validation and long before any query.
  app.addHook('preValidation', async (request) => {
    const found =
      findIllFormedText(request.params, 'params') ?? findIllFormedText(request.query, 'querystring') ?? findIllFormedText(request.body, 'body');
    if (found) throw new AppError(CommonErrors.INVALID_TEXT, `${found.path} ${found.message}`, { errors: [found] });
  });

  // Fastify validates a body declared per content type (JSON or multipart) only when the request
  // names one of those types: without a content type and a body, the handler would get none.
  app.addHook('preValidation', async (request) => {
    const body = request.routeOptions.schema?.body as { content?: Record<string, unknown> } | undefined;
    if (body?.content && request.body === undefined && !request.isMultipart()) {
      throw new AppError(CommonErrors.VALIDATION_FAILED, `Send a body as ${Object.keys(body.content).join(' or ')}`, {
        errors: [{ path: 'body', message: 'is required' }],
      });
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      return sendProblem(reply, request, error.code, error.message, error.extra);
    }
    if (error.validation) {
      return sendProblem(reply, request, CommonErrors.VALIDATION_FAILED, 'The request does not match the documented schema', {
        errors: validationErrors(error),
      });
    }
    if (isMalformedMultipart(error)) return sendProblem(reply, request, CommonErrors.MALFORMED_MULTIPART, error.message);
    if (error instanceof StorageUnavailableError) {
      request.log.warn({ storage: error.message }, 'private storage unavailable');
      const problem = storageRequired(error);
      return sendProblem(reply, request, problem.code, problem.message, { headers: { 'retry-after': '30' } });
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
    if (db) {
      // Still worth a look: the route checks less than its columns need.
      if (db.code === CommonErrors.VALIDATION_FAILED || db.code === CommonErrors.INVALID_TEXT) {
        request.log.warn({ db: { code: (error as { code?: string }).code, message: error.message } }, 'input the route let through was refused by the database');
      }
      return sendProblem(reply, request, db.code, db.detail);
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ db: { code: (error as { code?: string }).code, message: error.message } }, 'database unavailable');
      return sendProblem(reply, request, CommonErrors.SERVICE_UNAVAILABLE, 'The database is unreachable; retry shortly', { headers: { 'retry-after': '2' } });
    }
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
