import { timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db/database.js';
import type { JobRunner } from '../jobs/runner.js';
import { TEXT_LIMITS, Text } from './bounded.js';
import { AppError, CommonErrors } from './errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
  }
}

/** The service's Prometheus metrics; one registry per app (tests build several in one process). */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'patchbay_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'patchbay_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly licensing = new Counter({ name: 'patchbay_licensing_outcomes_total', help: 'Licensing runtime answers by operation and code', labelNames: ['operation', 'code'], registers: [this.registry] });
  readonly jobs = new Counter({ name: 'patchbay_jobs_total', help: 'Job attempts by kind and outcome (succeeded, retried, failed)', labelNames: ['kind', 'outcome'], registers: [this.registry] });
  readonly jobDuration = new Histogram({
    name: 'patchbay_job_duration_seconds',
    help: 'Job run time by kind',
    labelNames: ['kind'],
    buckets: [0.01, 0.05, 0.25, 1, 5, 30, 120, 600],
    registers: [this.registry],
  });

  constructor(options: { db: Db; pool?: pg.Pool | undefined; runner: JobRunner; processMetrics?: boolean }) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'patchbay_' });
    const pool = options.pool;
    if (pool) {
      new Gauge({
        name: 'patchbay_db_pool_connections',
        help: 'PostgreSQL pool connections by state (total, idle, waiting requests)',
        labelNames: ['state'],
        registers: [this.registry],
        collect() {
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'waiting' }, pool.waitingCount);
        },
      });
    }
    const runner = options.runner;
    new Gauge({
      name: 'patchbay_jobs_queue_depth',
      help: 'Jobs waiting (queued) or running, by kind',
      labelNames: ['kind', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await runner.queueDepth()) this.set({ kind: row.kind, state: row.state }, row.n);
      },
    });
    options.runner.onOutcome((kind, outcome, durationMs) => {
      this.jobs.inc({ kind, outcome });
      this.jobDuration.observe({ kind }, durationMs / 1000);
    });
  }
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Counts every request by route template (not by URL, so ids do not explode the label set) and
 * serves `GET /metrics` in the Prometheus text format, behind `METRICS_TOKEN` when one is set.
 */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics, token: string | undefined): void {
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
  });
  app.get(
    '/metrics',
    {
      config: { policy: { auth: 'public' } },
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics',
        description: 'Request counts and latency by route and status, database pool, job queue depth and outcomes, licensing outcomes by code. With METRICS_TOKEN set, send it as a bearer token.',
        headers: Type.Object({ authorization: Type.Optional(Text(TEXT_LIMITS.header)) }),
        response: { 200: Type.String({ description: 'text/plain; version=0.0.4' }) },
      },
    },
    async (request, reply) => {
      if (token) {
        const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
        if (!given || !sameToken(given, token)) {
          throw new AppError(CommonErrors.UNAUTHENTICATED, 'The metrics need the METRICS_TOKEN bearer token', { headers: { 'www-authenticate': 'Bearer' } });
        }
      }
      reply.header('cache-control', 'no-store').type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}
