import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';
import { noteRoute, redactText, redactUrl } from '../logging/redact.js';

export { redactUrl } from '../logging/redact.js';

/** Teaches the redaction every route as it is registered (call before any route is). */
export function registerLogRedaction(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => noteRoute(route.url));
}

/** An error as pino serialises it, with credentials in its message and stack redacted. */
function redactedError(error: unknown): unknown {
  const serialised = stdSerializers.err(error as Error) as unknown;
  if (!serialised || typeof serialised !== 'object') return typeof serialised === 'string' ? redactText(serialised) : serialised;
  const out: Record<string, unknown> = { ...(serialised as Record<string, unknown>) };
  for (const key of ['message', 'stack']) if (typeof out[key] === 'string') out[key] = redactText(out[key] as string);
  return out;
}

/** Pino options for the service: JSON lines; credentials and personal query values redacted (see platform/logging/redact.ts). */
export function loggerOptions(level: string) {
  return {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-product-key"]', 'req.headers["idempotency-key"]'],
    hooks: {
      // Messages are written by people and may quote a URL.
      logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? redactText(a) : a)));
      },
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url, request.routeOptions?.url),
          host: request.host,
          remoteAddress: request.ip,
        };
      },
      res(reply: FastifyReply) {
        return { statusCode: reply.statusCode };
      },
      err: redactedError,
    },
  };
}
