// The workspaces module's face: the workspace settings routes for app.ts, and the operator-level
// reads and writes (no caller scope: they create the tenants scopes are built from) that the
// fixtures, the demo seed, the CLI and the server's start-up use.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { settingsRoutes } from './settings.routes.js';

export function register(app: FastifyInstance, deps: { db: Db; publicBaseUrl: string }): void {
  registerRoutes(app, settingsRoutes(deps));
}

/** Refunds read whether the workspace keeps serials active after a full refund. */
export { keepsSerialsOnRefund } from './settings.repo.js';
export {
  addMembership,
  countOwners,
  countWorkspaces,
  createAccount,
  createOrder,
  createResellerRelationship,
  createSerial,
  createWorkspace,
  findAccount,
  findMember,
  findWorkspace,
  listMembers,
  listWorkspaces,
  lockMemberships,
  lockWorkspaceNames,
  type MemberRecord,
  membershipsOf,
  productsOfWorkspace,
  removeMembership,
  updateMembership,
  upsertAccount,
  workspacesNamed,
} from './workspaces.repo.js';
