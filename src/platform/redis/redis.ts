import { Redis } from 'ioredis';

export interface RedisLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
}

/**
 * A Redis connection for state several instances share (rate-limit counters). It fails fast
 * while Redis is away (no offline queue, one attempt per command) so a request never waits on
 * it; callers decide what a failed command means. Connection errors are logged, never thrown
 * at the process, and the client reconnects by itself.
 */
export function openRedis(url: string, log?: RedisLogger): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let reported = false;
  client.on('error', (error: Error & { code?: string }) => {
    // One line per outage, not one per reconnection attempt.
    if (!reported) log?.warn({ redis: { code: error.code, message: error.message } }, 'Redis unavailable; shared rate limits are skipped until it is back');
    reported = true;
  });
  client.on('ready', () => {
    reported = false;
  });
  return client;
}
