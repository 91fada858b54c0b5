import { STATUS_CODES } from 'node:http';
import { problemBody } from './error-handler.js';
import { errorCatalogue, type ErrorCode } from './errors.js';
import { exampleFor, type Json } from './openapi-examples.js';
import { assignOperationIds } from './openapi-operation-ids.js';

/**
 * The rules every operation of the document follows, applied once to the whole document after
 * @fastify/swagger has built it, so no route file has to repeat them: stable operation ids,
 * problem+json errors with one `Problem` schema, the answers every route can give (400, 401/403,
 * 404, 429, 500, 503), the `Idempotency-Key` contract, documented response headers, generated
 * examples and `servers`. What only one operation needs is the application's `amend`.
 */

type Obj = Record<string, unknown>;
export interface OpenApiDocument extends Obj {
  openapi: string;
  info: Obj;
  servers?: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: Obj & { schemas?: Record<string, Obj>; headers?: Record<string, Obj>; parameters?: Record<string, Obj>; securitySchemes?: Record<string, Obj> };
}
export interface Operation extends Obj {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Obj[];
  requestBody?: { content: Record<string, MediaType>; required?: boolean };
  responses: Record<string, Response>;
  deprecated?: boolean;
}
export interface Response extends Obj {
  description: string;
  headers?: Record<string, Obj>;
  content?: Record<string, MediaType>;
}
interface MediaType extends Obj {
  schema?: Obj;
  example?: unknown;
}

export interface FinishOptions {
  publicBaseUrl: string;
  operationIds?: Readonly<Record<string, string>>;
  amend?: (document: OpenApiDocument) => void;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
const PROBLEM = '#/components/schemas/Problem';
const PROBLEM_MEDIA = 'application/problem+json';
/** The description the shared Problem schema gives an error response that says nothing of its own. */
const PROBLEM_DESCRIPTION = 'RFC 9457 problem details';

const HEADERS: Record<string, Obj> = {
  RequestId: {
    description: 'The request id: also in the log lines of the request and in every error body (`requestId`). A well-formed incoming `X-Request-Id` is kept.',
    required: true,
    schema: { type: 'string', examples: ['7f9c2ba4-e88f-4a1d-8a4b-2f1c9f0a5b11'] },
  },
  RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1, examples: [30] } },
  IdempotentReplayed: {
    description: '`true` when this is the kept answer of an earlier request with the same `Idempotency-Key` (nothing ran again)',
    schema: { type: 'string', enum: ['true'] },
  },
  Deprecation: { description: 'When the operation was deprecated (RFC 9745: `@` and a Unix time)', required: true, schema: { type: 'string', examples: ['@1798761600'] } },
  Sunset: { description: 'When the operation goes away (RFC 8594, an HTTP date)', required: true, schema: { type: 'string', examples: ['Thu, 01 Jul 2027 00:00:00 GMT'] } },
  Link: { description: 'The successor operation (`rel="successor-version"`)', required: true, schema: { type: 'string', examples: ['</api/developer/serials>; rel="successor-version"'] } },
  ContentDisposition: { description: 'A download: `attachment` with the file name', required: true, schema: { type: 'string', examples: ['attachment; filename="export-2026-11-24.csv"'] } },
  Location: { description: 'Where the created or accepted resource is', required: true, schema: { type: 'string', examples: ['/api/developer/imports/1'] } },
  CacheControl: { description: 'Answers to authenticated callers are personal: `no-store`', schema: { type: 'string', examples: ['no-store'] } },
};
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The code a generic answer of a status shows in its example. */
const EXAMPLE_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL',
  503: 'SERVICE_UNAVAILABLE',
} as Record<number, ErrorCode>;

function problemExample(status: number, typeBase: string): Json {
  const code = EXAMPLE_CODES[status] ?? [...errorCatalogue()].filter(([, spec]) => spec.status === status).map(([c]) => c).sort()[0];
  if (!code) return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail: STATUS_CODES[status] ?? 'Error', code: 'INTERNAL', requestId: '7f9c2ba4-e88f-4a1d-8a4b-2f1c9f0a5b11' };
  const spec = errorCatalogue().get(code)!;
  return problemBody(code, spec.title, '7f9c2ba4-e88f-4a1d-8a4b-2f1c9f0a5b11', {}, typeBase) as Json;
}

const DESCRIPTIONS: Record<string, string> = {
  '400': 'The request does not match the documented schema (`VALIDATION_FAILED`, with `errors`), or is malformed',
  '401': 'No valid credential (`UNAUTHENTICATED`)',
  '403': 'Not allowed: `FORBIDDEN` names the missing permission; `WORKSPACE_ACCESS_DENIED`, and the operation’s own codes',
  '404': 'Not found, or not visible to the caller (records of other workspaces and of unassigned products answer 404)',
  '409':
    'Conflicts with the current state (`code` says how); `IDEMPOTENCY_KEY_IN_USE`, with `Retry-After`, while a request with the same `Idempotency-Key` still runs',
  '410': 'Gone: the link has expired',
  '422': 'Understood but not processable (`code` says why); `IDEMPOTENCY_KEY_REUSED` when the `Idempotency-Key` was used for a different request',
  '429': 'Too many requests (`RATE_LIMITED`); retry after `Retry-After`',
  '500': 'Unexpected failure (`INTERNAL`); nothing was half-written. Quote the `requestId` when reporting it',
  '503': 'A dependency is unavailable (`SERVICE_UNAVAILABLE` when it is the database); retry after `Retry-After` when it is given',
};

/** `#/components/responses/NotFound`, … : one shared problem answer per status. */
const responseName = (status: number) => (STATUS_CODES[status] ?? `Status ${status}`).replace(/[^A-Za-z0-9 ]/g, '').replace(/(?:^|\s)(\w)/g, (_m, c: string) => c.toUpperCase());

function problemResponse(status: number, typeBase: string): Response {
  const headers: Record<string, Obj> = { 'X-Request-Id': header('RequestId') };
  if (status === 429) headers['Retry-After'] = { ...HEADERS.RetryAfter, required: true };
  else if (status === 503 || status === 409) headers['Retry-After'] = header('RetryAfter');
  return {
    description: DESCRIPTIONS[String(status)] ?? `${STATUS_CODES[status] ?? 'Error'} (\`code\` says why)`,
    headers,
    content: { [PROBLEM_MEDIA]: { schema: { $ref: PROBLEM }, example: problemExample(status, typeBase) } },
  };
}

function kindOf(op: Operation): 'account' | 'recipient' | 'public' {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.includes('bearer')) return 'account';
  if (schemes.some((s) => s.startsWith('recipient'))) return 'recipient';
  return 'public';
}

function resolver(doc: OpenApiDocument) {
  return (ref: string) => {
    const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
    return match ? (doc.components.schemas?.[decodeURIComponent(match[1]!)] as Obj | undefined) : undefined;
  };
}

function exampleForMedia(doc: OpenApiDocument, mediaType: string, media: MediaType): unknown {
  if (mediaType.startsWith('text/csv')) return 'id,email,created_at\r\n1,ann.lee@example.com,2026-11-24T10:00:00.000Z\r\n';
  return exampleFor(media.schema, resolver(doc));
}

export function finishDocument(doc: OpenApiDocument, options: FinishOptions): OpenApiDocument {
  doc.servers = [{ url: options.publicBaseUrl.replace(/\/$/, ''), description: 'This deployment (PUBLIC_BASE_URL)' }];
  doc.components.headers = { ...HEADERS, ...doc.components.headers };
  doc.components.parameters = {
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: the first answer is kept for 24 hours per caller and key; the same request again gets it back with `Idempotent-Replayed: true`.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$', examples: ['9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'] },
    },
    ...doc.components.parameters,
  };

  // First, so that the rules below see what it changed (a content type, a security requirement).
  options.amend?.(doc);

  const operations: Array<{ path: string; method: string; op: Operation }> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) if (item[method]) operations.push({ path, method, op: item[method]! });
  }
  const ids = assignOperationIds(
    operations.map(({ path, method }) => ({ method, path })),
    options.operationIds ?? {},
  );

  const shared = new Map<number, string>();
  for (const { path, method, op } of operations) {
    op.operationId = ids.get(`${method.toUpperCase()} ${path}`)!;
    const kind = kindOf(op);
    const idempotent = kind === 'account' && MUTATING.has(method);
    const responses = op.responses;

    const addDefault = (status: string) => {
      responses[status] ??= { description: '' };
    };
    // What any route can answer: the query is validated everywhere (an unknown parameter is a 400).
    addDefault('400');
    if (kind !== 'public') addDefault('401');
    if (kind === 'account') addDefault('403');
    if (path.includes('{')) addDefault('404');
    // Public API routes share a cap of requests in progress per client address.
    if (kind === 'public' && path.startsWith('/api/')) addDefault('429');
    if (idempotent) {
      addDefault('409');
      addDefault('422');
      op.parameters = op.parameters ?? [];
      if (!op.parameters.some((p) => String(p.name).toLowerCase() === 'idempotency-key')) op.parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
    }
    addDefault('500');
    if (path !== '/healthz' && path !== '/metrics') addDefault('503');
    // Imports (the 201/207/422 flow) above the row threshold run as jobs: 202 and the resource to poll.
    if (responses['207'] && !responses['202'] && doc.components.schemas?.ImportResource) {
      responses['202'] = {
        description: 'Too many rows to answer at once: the import runs as a job; poll the import resource (`Location`)',
        headers: { Location: header('Location') },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ImportResource' } } },
      };
    }

    for (const [status, response] of Object.entries(responses)) {
      const code = Number(status);
      if (code < 400) response.headers = { 'X-Request-Id': header('RequestId'), ...response.headers };
      const has = (name: string) => Object.keys(response.headers!).some((h) => h.toLowerCase() === name.toLowerCase());
      const add = (name: string, ref: keyof typeof HEADERS, extra: Obj = {}) => {
        if (!has(name)) response.headers![name] = Object.keys(extra).length ? { ...HEADERS[ref], ...extra } : header(ref);
      };
      if (code >= 400) {
        // One error shape everywhere, whatever the success content type (CSV routes included).
        // A route that describes an error its own way keeps its words; the rest share a component.
        const own = response.description && response.description !== PROBLEM_DESCRIPTION ? response.description : null;
        const name = responseName(code);
        shared.set(code, name);
        responses[status] = own ? { ...problemResponse(code, options.publicBaseUrl), description: own } : ({ $ref: `#/components/responses/${name}` } as unknown as Response);
        continue;
      }
      if (response.description === 'Default Response') response.description = STATUS_CODES[code] ?? 'Answer';
      if (code >= 200 && code < 300) {
        if (idempotent) add('Idempotent-Replayed', 'IdempotentReplayed');
        if (kind !== 'public') add('Cache-Control', 'CacheControl');
        if (op.deprecated) {
          add('Deprecation', 'Deprecation');
          add('Sunset', 'Sunset');
          add('Link', 'Link');
        }
        const types = Object.keys(response.content ?? {});
        if (types.some((t) => t.startsWith('text/csv') || t === 'application/octet-stream')) add('Content-Disposition', 'ContentDisposition');
      }
      for (const [mediaType, media] of Object.entries(response.content ?? {})) {
        if (media.example === undefined && media.schema) media.example = exampleForMedia(doc, mediaType, media);
      }
    }

    for (const [mediaType, media] of Object.entries(op.requestBody?.content ?? {})) {
      if (media.example === undefined && media.schema) media.example = exampleForMedia(doc, mediaType, media);
    }
    for (const parameter of op.parameters ?? []) {
      if (parameter.$ref || parameter.example !== undefined || !parameter.schema) continue;
      parameter.example = exampleFor(parameter.schema, resolver(doc), String(parameter.name));
    }
  }
  const responses = [...shared].sort(([a], [b]) => a - b).map(([status, name]) => [name, problemResponse(status, options.publicBaseUrl)]);
  doc.components.responses = { ...Object.fromEntries(responses), ...(doc.components.responses as Obj | undefined) };
  return doc;
}
