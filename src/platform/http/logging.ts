import type { FastifyReply, FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';

// Query parameters whose values can be personal data (a searched e-mail address or name):
// their values never reach the log.
const PERSONAL_PARAMS = /^(search|email|q|name|firstname|lastname|token)$/i;

// Path segments that are credentials (invitation tokens): never written to the log.
const SECRET_PATHS = /^(\/api\/partner-portal\/programs\/invitations\/(?!accept(?:[/?]|$))|\/api\/payouts\/sandbox\/onboarding\/)[^/?]+/;

/** The request URL with the values of personal query parameters, and credentials in the path, replaced by `[redacted]`. */
export function redactUrl(rawUrl: string): string {
  const url = rawUrl.replace(SECRET_PATHS, '$1[redacted]');
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const params = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return eq >= 0 && PERSONAL_PARAMS.test(decoded.replace(/[_-]/g, '')) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, mark)}?${params.join('&')}`;
}

/** Pino options for the service: JSON lines, credentials and personal query values redacted. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-product-key"]', 'req.headers["idempotency-key"]'],
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
        };
      },
      res(reply: FastifyReply) {
        return { statusCode: reply.statusCode };
      },
      err: stdSerializers.err,
    },
  };
}
