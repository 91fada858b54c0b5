/**
 * The closed error catalogue. A code is stable API: clients branch on it.
 * Modules add their codes with `defineErrors` at import time.
 */
export interface ErrorSpec {
  status: number;
  title: string;
  /** When a client meets it and what to do: docs/errors.md and the page at /docs/errors are generated from it. */
  description?: string;
}

const catalogue = new Map<string, ErrorSpec>();

/**
 * Every error code of the service, as a closed type: each module that defines codes adds them
 * here by declaration merging (`interface ErrorCodeRegistry extends CodesOf<typeof specs> {}`),
 * so `new AppError('NOT_FUOND')` does not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ErrorCodeRegistry extends CodesOf<typeof commonSpecs> {}
export type ErrorCode = Extract<keyof ErrorCodeRegistry, string>;
export type CodesOf<T> = { readonly [K in keyof T]: true };

export function defineErrors<const T extends Record<string, ErrorSpec>>(specs: T): { [K in keyof T]: K } {
  const codes = {} as { [K in keyof T]: K };
  for (const [code, spec] of Object.entries(specs)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(code)) throw new Error(`Error code ${code} is not UPPER_SNAKE`);
    const existing = catalogue.get(code);
    if (existing && (existing.status !== spec.status || existing.title !== spec.title)) {
      throw new Error(`Error code ${code} is defined twice with different meanings`);
    }
    catalogue.set(code, spec);
    (codes as Record<string, string>)[code] = code;
  }
  return codes;
}

export function errorCatalogue(): ReadonlyMap<ErrorCode, ErrorSpec> {
  return catalogue as ReadonlyMap<ErrorCode, ErrorSpec>;
}

const commonSpecs = {
  VALIDATION_FAILED: { status: 400, title: 'Request validation failed', description: 'query, params, headers or body do not match the schema; `errors` lists each problem' },
  MALFORMED_JSON: { status: 400, title: 'Request body is not valid JSON', description: 'the body is not valid JSON (or is empty with a JSON content type)' },
  MALFORMED_MULTIPART: { status: 400, title: 'Request body is not valid multipart/form-data', description: 'the body is not valid multipart/form-data: no boundary, a broken part, or cut off before its end' },
  INVALID_TEXT: { status: 400, title: 'Text contains characters that cannot be stored', description: 'text with a NUL character or an unpaired surrogate; `errors` names the field' },
  BAD_REQUEST: { status: 400, title: 'Malformed HTTP request', description: 'the request is not valid HTTP, or its URL cannot be decoded' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required', description: 'missing, malformed, forged, expired or misaddressed token (a product key is not a developer token either)' },
  FORBIDDEN: { status: 403, title: 'Permission denied', description: 'the caller lacks the route\'s permission' },
  NOT_FOUND: { status: 404, title: 'Not found', description: 'no such record in the caller\'s scope (also for records of other workspaces)' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such route', description: 'no such route' },
  CONFLICT: { status: 409, title: 'Conflict with the current state', description: 'a unique value already exists' },
  SERIALIZATION_FAILURE: { status: 409, title: 'Concurrent update; retry the request', description: 'a concurrent update won; retry the request' },
  REQUEST_TIMEOUT: { status: 408, title: 'The request was not received in time', description: 'the request (headers or body) did not arrive in time; the connection is closed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large', description: 'a body over the route\'s byte limit (1 MiB; imports 32 MiB)' },
  URI_TOO_LONG: { status: 414, title: 'Request URL too long', description: 'a path parameter is longer than 100 characters' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported content type', description: 'neither JSON nor multipart' },
  RATE_LIMITED: { status: 429, title: 'Too many requests', description: 'too many requests (or too many in progress from one address); see `Retry-After`' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request headers too large', description: 'the request headers exceed 16 KiB' },
  INTERNAL: { status: 500, title: 'Internal error', description: 'unexpected failure; nothing was half-written' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable', description: 'the database is unreachable (any route that needs it, and `/readyz`); retry after `Retry-After`' },
} as const satisfies Record<string, ErrorSpec>;
export const CommonErrors = defineErrors(commonSpecs);

export interface FieldError {
  path: string;
  message: string;
}

/** A domain failure the client can act on. Thrown by services, rendered by the error handler. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly extra: { errors?: unknown[]; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
  ) {
    const spec = catalogue.get(code);
    if (!spec) throw new Error(`Unknown error code ${code}`);
    super(detail ?? spec.title);
    this.status = spec.status;
  }
}

export const notFound = (what = 'Resource') => new AppError(CommonErrors.NOT_FOUND, `${what} not found`);
export const forbidden = (permission: string) =>
  new AppError(CommonErrors.FORBIDDEN, `This action requires the "${permission}" permission`);
