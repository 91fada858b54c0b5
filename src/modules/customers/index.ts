// The customers module's face: its routes for app.ts, and what other modules may use of it —
// creating or refreshing customer relationships inside their own transaction (imports, grants,
// sales), finding an active one, and the e-mail normalisation every module keys customers by.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { customerRoutes } from './customers.routes.js';

export interface CustomersDeps {
  db: Db;
  runner: ImportRunner;
  /** PostgreSQL's pool, for exports through COPY (absent on the embedded database). */
  pool?: pg.Pool | undefined;
}

export function register(app: FastifyInstance, deps: CustomersDeps): void {
  registerRoutes(app, customerRoutes(deps));
}

export { type CustomerUpsert, normaliseEmail } from './customers.import.js';
export { findActiveCustomer, importCustomers, upsertCustomers } from './customers.service.js';
/** Named in the OpenAPI document. */
export { CustomerRow, RemoveCustomerResult } from './customers.schemas.js';
