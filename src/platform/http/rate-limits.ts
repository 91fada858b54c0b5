import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError, CommonErrors } from './errors.js';

type Limiter = (req: FastifyRequest) => Promise<{ isExceeded: boolean; ttlInSeconds: number; max: number }>;

declare module 'fastify' {
  interface FastifyInstance {
    createRateLimit(options: { max: number; timeWindow: number; keyGenerator: (req: FastifyRequest) => string }): Limiter;
  }
}

export interface RateLimitStore {
  /** Shared counters: every instance that uses the same Redis and namespace counts together. */
  redis?: Redis | undefined;
  /** Key prefix in Redis (tests give each app its own). */
  namespace?: string;
}

/**
 * Registers the rate-limit plugin once for the whole app (no global limit: each route family
 * creates its limiters). With Redis the counters are shared by every instance (fixed windows,
 * INCR + PEXPIRE in one script); without it they are per process, so N instances allow N times
 * the limit. While Redis is unreachable requests are let through (`skipOnError`): a licensing
 * check of a paying customer must not fail because a counter store is down.
 */
export async function registerRateLimits(app: FastifyInstance, store: RateLimitStore): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    ...(store.redis ? { redis: store.redis, nameSpace: store.namespace ?? 'patchbay:rate:' } : {}),
  });
}

const limitHooks = new WeakSet<object>();

/** Whether a route hook is one of `enforceLimits`: the OpenAPI document gives such a route its 429. */
export const isLimitHook = (hook: unknown): boolean => typeof hook === 'function' && limitHooks.has(hook);

/** A hook that refuses the request with 429 RATE_LIMITED and Retry-After when any limiter is exceeded. */
export function enforceLimits(app: FastifyInstance, limits: Array<{ max: number; windowMs: number; key: (req: FastifyRequest) => string }>) {
  const limiters = limits.map((l) => app.createRateLimit({ max: l.max, timeWindow: l.windowMs, keyGenerator: l.key }));
  const hook = async (request: FastifyRequest) => {
    for (const limiter of limiters) {
      const result = await limiter(request);
      if (result.isExceeded) {
        throw new AppError(CommonErrors.RATE_LIMITED, `Rate limit of ${result.max} requests per window exceeded; retry in ${result.ttlInSeconds} s`, {
          headers: { 'retry-after': String(Math.max(1, result.ttlInSeconds)) },
        });
      }
    }
  };
  limitHooks.add(hook);
  return hook;
}
