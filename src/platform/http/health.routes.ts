import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { AppError, CommonErrors } from './errors.js';
import { errorResponses } from './schemas.js';

export function healthRoutes(app: FastifyInstance, db: Db): void {
  const Status = Type.Object({ status: Type.String() });
  app.get(
    '/healthz',
    { config: { policy: { auth: 'public' } }, schema: { tags: ['health'], summary: 'Process is up', response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: { policy: { auth: 'public' } },
      schema: { tags: ['health'], summary: 'Database is reachable', response: { 200: Status, ...errorResponses(503) } },
    },
    async () => {
      try {
        await sql`select 1`.execute(db);
      } catch {
        throw new AppError(CommonErrors.SERVICE_UNAVAILABLE, 'Database unreachable');
      }
      return { status: 'ready' };
    },
  );
}
