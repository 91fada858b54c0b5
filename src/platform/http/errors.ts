/**
 * The closed error catalogue. A code is stable API: clients branch on it.
 * Modules add their codes with `defineErrors` at import time.
 */
export interface ErrorSpec {
  status: number;
  title: string;
}

const catalogue = new Map<string, ErrorSpec>();

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

export function errorCatalogue(): ReadonlyMap<string, ErrorSpec> {
  return catalogue;
}

export const CommonErrors = defineErrors({
  VALIDATION_FAILED: { status: 400, title: 'Request validation failed' },
  MALFORMED_JSON: { status: 400, title: 'Request body is not valid JSON' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  FORBIDDEN: { status: 403, title: 'Permission denied' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such route' },
  CONFLICT: { status: 409, title: 'Conflict with the current state' },
  SERIALIZATION_FAILURE: { status: 409, title: 'Concurrent update; retry the request' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported content type' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INTERNAL: { status: 500, title: 'Internal error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
});

export interface FieldError {
  path: string;
  message: string;
}

/** A domain failure the client can act on. Thrown by services, rendered by the error handler. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: string,
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
