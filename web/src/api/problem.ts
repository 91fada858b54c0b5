/** A field the API named in a problem's `errors` (`path` is `body/email`, `querystring/page`, …). */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * An answer that was not a success, read from its problem+json body (RFC 9457 with Patchbay's
 * `code` and `requestId`), or a request that never got an answer (`status` 0, code NETWORK).
 */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string | undefined,
    readonly errors: FieldProblem[],
    readonly requestId: string | undefined,
    /** The whole problem body: some codes carry data the page can act on (the current versions, say). */
    readonly body: Record<string, unknown>,
    /** Seconds to wait before trying again, from a 429 or 503 answer's `Retry-After` (in seconds or as a date). */
    readonly retryAfter?: number,
  ) {
    super(detail ?? title);
    this.name = 'ApiProblem';
  }

  static fromAnswer(response: Response, body: unknown): ApiProblem {
    const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
    const errors = Array.isArray(record.errors)
      ? record.errors.flatMap((e: unknown) => {
          const item = e && typeof e === 'object' ? (e as Record<string, unknown>) : {};
          const path = text(item.path) ?? text(item.field) ?? text(item.column);
          const message = text(item.message) ?? text(item.code);
          return path && message ? [{ path, message }] : [];
        })
      : [];
    return new ApiProblem(
      response.status,
      text(record.code) ?? `HTTP_${response.status}`,
      text(record.title) ?? (response.statusText || 'The request failed'),
      text(record.detail),
      errors,
      text(record.requestId) ?? response.headers.get('x-request-id') ?? undefined,
      record,
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }

  static network(cause: unknown): ApiProblem {
    const detail = 'The server could not be reached. Check your connection and try again.';
    const problem = new ApiProblem(0, 'NETWORK', 'No answer from the server', detail, [], undefined, {});
    problem.cause = cause;
    return problem;
  }

  /** The message for one form field: `fieldError('email')` matches `body/email`. */
  fieldError(field: string): string | undefined {
    return this.errors.find((e) => e.path === `body/${field}` || e.path === field || e.path.endsWith(`/${field}`))?.message;
  }
}

function retryAfterSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) : Math.ceil((Date.parse(header) - Date.now()) / 1000);
  return Number.isFinite(seconds) ? Math.max(0, seconds) : undefined;
}

export const isProblem = (error: unknown, status?: number): error is ApiProblem =>
  error instanceof ApiProblem && (status === undefined || error.status === status);
