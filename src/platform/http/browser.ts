import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/** Headers a browser client may read from answers (the default set hides them). */
export const EXPOSED_HEADERS = ['x-request-id', 'idempotent-replayed', 'content-disposition', 'retry-after', 'location', 'deprecation', 'sunset', 'link'];
const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-workspace-id', 'x-request-id', 'x-product-key', 'prefer'];

/**
 * Browser readiness. CORS for the origins in `origins` only (an allowlist; none by default, so
 * no other site's scripts can call the API); preflights are answered for every route. Security
 * headers through helmet: an API answers data, never pages, so its content policy forbids
 * everything; the API reference under /docs sets its own.
 */
export async function registerBrowserSupport(app: FastifyInstance, origins: string[]): Promise<void> {
  const allowed = new Set(origins.map((o) => o.replace(/\/$/, '')));
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  });
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    // Answers are fetched cross-origin by allowlisted consoles.
    crossOriginResourcePolicy: { policy: 'same-site' },
    referrerPolicy: { policy: 'no-referrer' },
  });
}
