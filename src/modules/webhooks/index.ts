// The webhooks module's face: its routes, delivery runner and relay for app.ts, and for every other
// module one call that records events in the transaction of the change they describe:
// `emitWebhookEvent(tx, scope.workspaceId, 'customer.removed', { … })`.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { JobRunner, type RunnerLogger } from '../../platform/jobs/runner.js';
import { parseAllowList, type Resolver, systemResolver } from '../../platform/net/address-policy.js';
import { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_TIMEOUT_MS, Deliverer } from './webhooks.delivery.js';
import { WebhookClient } from './webhooks.http.js';
import { registerWebhookJobs } from './webhooks.jobs.js';
import { webhookMetrics } from './webhooks.metrics.js';
import { WebhookRelay } from './webhooks.relay.js';
import { webhookRoutes } from './webhooks.routes.js';
import { WebhookEndpoints } from './webhooks.service.js';

export { emitWebhookEvent, emitWebhookEvents, wantsWebhookEvents } from './webhooks.emit.js';
export { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType, type WebhookEventData, type WebhookEventType } from './webhooks.events.js';
export { WEBHOOK_SIGNATURE_SCHEME, webhooksSection } from './webhooks.openapi.js';
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_TIMEOUT_MS } from './webhooks.delivery.js';

/** What the deployment decides (WEBHOOK_* settings); tests shorten the schedule, inject a resolver and move the clock. */
export interface WebhookOptions {
  /** Host names, addresses and CIDR ranges deliveries may reach although they are not public (and plain http may go to). */
  allowedHosts?: readonly string[];
  /** Attempts running at once in this instance (default 16). */
  concurrency?: number;
  /** Per attempt (default 15 s). */
  timeoutMs?: number;
  /** Delays before each retry (default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  retryScheduleMs?: readonly number[];
  /** How long a rotated secret keeps signing beside the new one (default 24 h). */
  rotationOverlapHours?: number;
  /** How host names are resolved (default: the system's resolver). */
  resolve?: Resolver;
  /** The clock the 5-day failure window is judged by. */
  clock?: () => Date;
}

export interface WebhooksDeps {
  db: Db;
  /** The service's key: endpoint secrets are sealed with it. */
  encryptionKey: Buffer;
  /** False: events are recorded but neither relayed nor delivered (tests that inspect the queue). */
  run: boolean;
  pollIntervalMs?: number | undefined;
  log: RunnerLogger;
  options?: WebhookOptions | undefined;
}

export interface WebhooksHandle {
  /** Resolves once no event waits to be fanned out and no due delivery is left (tests). */
  idle(): Promise<void>;
  runner: JobRunner;
}

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhooksHandle;
  }
}

export function register(app: FastifyInstance, deps: WebhooksDeps): void {
  const options = deps.options ?? {};
  const { allowList, problems } = parseAllowList(options.allowedHosts ?? []);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const resolve = options.resolve ?? systemResolver;
  const pollIntervalMs = deps.pollIntervalMs ?? 2_000;
  const client = new WebhookClient(timeoutMs);
  const runner = new JobRunner(deps.db, { concurrency: options.concurrency ?? 64, pollIntervalMs, log: deps.log });
  runner.onOutcome((kind, outcome, durationMs) => {
    app.metrics.jobs.inc({ kind, outcome });
    app.metrics.jobDuration.observe({ kind }, durationMs / 1000);
  });
  const deliverer = new Deliverer(deps.db, client, {
    encryptionKey: deps.encryptionKey,
    allowList,
    resolve,
    retryScheduleMs: options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS,
    clock: options.clock ?? (() => new Date()),
    onOutcome: webhookMetrics(app.metrics.registry),
  });
  registerWebhookJobs(runner, deps.db, deliverer, timeoutMs);
  const relay = new WebhookRelay(deps.db, { pollIntervalMs, log: deps.log });
  if (deps.run) {
    app.addHook('onReady', async () => {
      runner.start();
      relay.start();
    });
  }
  app.addHook('onClose', async () => {
    await relay.stop();
    await runner.stop();
    client.close();
  });
  app.decorate('webhooks', {
    runner,
    async idle() {
      do {
        await relay.idle();
        await runner.idle();
      } while (relay.busy);
    },
  } satisfies WebhooksHandle);

  const endpoints = new WebhookEndpoints(deps.db, {
    encryptionKey: deps.encryptionKey,
    allowList,
    resolve,
    rotationOverlapMs: (options.rotationOverlapHours ?? 24) * 3_600_000,
  });
  registerRoutes(app, webhookRoutes({ endpoints }));
}
