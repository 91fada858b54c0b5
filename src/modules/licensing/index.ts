// The licensing module's face: the plugin runtime's routes for app.ts, the service they call, and
// what other modules may use of it. The customer portal's offline activation claims a seat and
// signs its license token through `activate`, exactly as a plugin's activation does; packages and
// the operator tooling use the workspace's signing keys.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { ConnectionTracker } from './licensing.connections.js';
import type { LicenseKeyring } from './licensing.keys.js';
import { licensingRoutes, type LicensingRouteOptions } from './licensing.routes.js';
import { LicensingService } from './licensing.service.js';

/** The runtime service, with plugin connections written every `connectionFlushMs` (and once more when the app closes). */
export function createLicensing(app: FastifyInstance, deps: { db: Db; keyring: LicenseKeyring; connectionFlushMs?: number | undefined }): LicensingService {
  const connections = new ConnectionTracker(deps.db, app.log, deps.connectionFlushMs);
  const service = new LicensingService(deps.db, deps.keyring, connections);
  app.addHook('onClose', async () => {
    service.close();
    await connections.stop();
  });
  return service;
}

export function register(app: FastifyInstance, deps: LicensingRouteOptions): void {
  registerRoutes(app, licensingRoutes(app, deps));
}

export { LicensingService } from './licensing.service.js';
export { LicenseKeyring } from './licensing.keys.js';
export type { SeatClaimant } from './licensing.repo.js';
export { ActivateBody } from './licensing.schemas.js';
export { LicensingErrors } from './licensing.errors.js';
/** Named in the OpenAPI document. */
export { ActivateResult, DeactivateResult, Jwks, ValidateResult } from './licensing.schemas.js';
