// The imports module's face: the import resource that 202 answers point at. Other modules and app.ts
// import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { importRoutes } from './imports.routes.js';

export { registerImportJobs } from './imports.jobs.js';
export { announceImportFinished } from './imports.service.js';

export interface ImportsDeps {
  db: Db;
  runner: ImportRunner;
}

export function register(app: FastifyInstance, deps: ImportsDeps): void {
  registerRoutes(app, importRoutes(deps));
}
