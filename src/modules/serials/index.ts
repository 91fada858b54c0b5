// The serials module's face: its routes for app.ts, and what other modules may use of the serial
// inventory inside their own transactions — purchases issue and assign serials, the licensing
// runtime writes seat events and counts remaining seats, the operator tooling generates inventory.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { serialRoutes } from './serials.routes.js';

export interface SerialsDeps {
  db: Db;
  runner: ImportRunner;
}

export function register(app: FastifyInstance, deps: SerialsDeps): void {
  registerRoutes(app, serialRoutes(deps));
}

export {
  assignSerials,
  findSerialForUpdate,
  findSerialRecords,
  generateSerials,
  issueSerials,
  lockSerialWrites,
  lookupSerialCodes,
  NO_TERMS,
  recordSerialEvents,
  revokeSerialsForRefund,
  toSerialRow,
  type NewSerial,
  type SerialAssignment,
  type SerialEventInput,
  type SerialRecord,
} from './serials.service.js';
export { remainingActivations } from './serials.lifecycle.js';
export { announceSerialChanges, onSerialChanges, type SerialChange } from './serials.changes.js';
export { GenerateBody, MAX_GENERATE_QUANTITY, SerialRow } from './serials.schemas.js';
/** Named in the OpenAPI document. */
export { ActionResult, ActivationRow, GenerateResult, PortalOrderResult } from './serials.schemas.js';
