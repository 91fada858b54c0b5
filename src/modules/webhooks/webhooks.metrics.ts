import { Counter, Histogram, type Registry } from 'prom-client';

/** Per-endpoint delivery outcomes on /metrics (one series per endpoint and outcome). */
export function webhookMetrics(registry: Registry) {
  const attempts = new Counter({
    name: 'patchbay_webhook_attempts_total',
    help: 'Webhook delivery attempts by workspace, endpoint and outcome (succeeded: a 2xx answer; failed: anything else)',
    labelNames: ['workspace_id', 'endpoint_id', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'patchbay_webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempt time (until the answer was read) by outcome',
    labelNames: ['outcome'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return (a: { workspaceId: number; endpointId: number; ok: boolean; durationMs: number }) => {
    const outcome = a.ok ? 'succeeded' : 'failed';
    attempts.inc({ workspace_id: String(a.workspaceId), endpoint_id: String(a.endpointId), outcome });
    duration.observe({ outcome }, a.durationMs / 1000);
  };
}
