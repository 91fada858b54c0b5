import type { Permission } from '../../platform/auth/permissions.js';
import { hasPermission, type Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { ImportKind } from '../../platform/db/schema.js';
import { forbidden, notFound } from '../../platform/http/errors.js';
import type { ImportFinishedListener, ImportRunner } from '../../platform/import/import-runner.js';
import { findImport } from '../../platform/import/imports.repo.js';
import { emitWebhookEvent } from '../webhooks/index.js';

const VIEW: Record<ImportKind, Permission> = { customers: 'customers.view', serials: 'serials.view', purchases: 'purchases.view' };

/**
 * An import is visible to the member who started it, and to all-products members who may read
 * what it imports; anyone else (another workspace, a product-scoped teammate) gets 404, because
 * its counts and row errors describe records outside their scope.
 */
export async function getImport(db: Db, runner: ImportRunner, scope: Scope, importId: number) {
  const record = await findImport(db, scope, importId);
  if (!record || (record.account_id !== scope.accountId && scope.products !== 'all')) throw notFound('Import');
  if (record.account_id !== scope.accountId && !hasPermission(scope, VIEW[record.kind])) throw forbidden(VIEW[record.kind]);
  return runner.resource(record);
}

/** The import runner's listener: a queued import that ended is announced to the workspace's webhooks (`import.finished`). */
export const announceImportFinished: ImportFinishedListener = (tx, f) =>
  emitWebhookEvent(tx, f.workspaceId, 'import.finished', {
    import_id: f.importId,
    kind: f.kind,
    state: f.state,
    imported_count: f.importedCount,
    inserted_count: f.insertedCount,
    failed_count: f.failedCount,
    failure: f.failure,
  });
