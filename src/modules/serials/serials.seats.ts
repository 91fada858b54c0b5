import type { RecordAccess } from '../../platform/auth/define-route.js';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import { pageWindow } from '../../platform/paging/paged-list.js';
import { announceSerialChanges } from './serials.changes.js';
import * as repo from './serials.repo.js';
import type { ActivationListQuery, ActivationRow, ReleaseBody } from './serials.schemas.js';
import { toSerialRow, visibleSerialOrThrow } from './serials.service.js';
import { emitWebhookEvent } from '../webhooks/index.js';

// Seat management for support: the devices holding a serial's seats, and releasing one of them.

/** What the activation row records as the release category; the human reason is in the audit trail. */
const SUPPORT_RELEASE = 'support';

function toActivationRow(a: repo.ActivationRecord): ActivationRow {
  return {
    id: a.id,
    serial_id: a.serial_id,
    machine_id: a.machine_id,
    machine_name: a.machine_name,
    platform: a.platform,
    app_version: a.app_version,
    status: a.status,
    first_seen_at: a.activated_at.toISOString(),
    last_seen_at: a.last_validated_at.toISOString(),
    released_at: a.released_at ? a.released_at.toISOString() : null,
    release_reason: a.release_reason,
  };
}

export async function listActivations(db: Db, scope: Scope, record: RecordAccess, serialId: number, query: ActivationListQuery) {
  await visibleSerialOrThrow(db, scope, record, serialId);
  const { page, pageSize, offset } = pageWindow(query);
  const { rows, total } = await repo.listActivations(db, scope, serialId, { status: query.status }, { limit: pageSize, offset });
  return { rows: rows.map(toActivationRow), total, page, pageSize };
}

/**
 * Frees one seat. The serial row is locked before the seat is released and the seats recounted,
 * as activation locks it before counting, so parallel releases and activations keep the count
 * exact. A seat already released (by the plugin, an earlier call or a serial action) answers the
 * same 200 with `released: false` and writes nothing: a retried DELETE is harmless.
 */
export async function releaseActivation(db: Db, scope: Scope, record: RecordAccess, serialId: number, activationId: number, body: ReleaseBody) {
  await visibleSerialOrThrow(db, scope, record, serialId);
  return inTransaction(db, async (tx) => {
    const serial = await repo.findSerial(tx, scope, serialId, true);
    if (!serial) throw notFound('Serial');
    const before = await repo.findActivation(tx, scope, serialId, activationId);
    if (!before) throw notFound('Activation');
    const released = before.status === 'active' && (await repo.releaseOneActivation(tx, scope, serialId, activationId, SUPPORT_RELEASE));
    if (released) {
      announceSerialChanges(tx, scope.workspaceId, [serialId]);
      await repo.recordEvents(tx, scope.workspaceId, [
        {
          serialId,
          action: 'activation.released',
          actorType: 'developer',
          actorAccountId: scope.accountId,
          reason: body.reason.trim(),
          note: body.note ?? null,
          beforeStatus: serial.status,
          afterStatus: serial.status,
          data: { activationId, machineId: before.machine_id },
        },
      ]);
      await emitWebhookEvent(tx, scope.workspaceId, 'activation.released', { activation_id: activationId, serial_id: serialId, product_id: serial.product_id, machine_id: before.machine_id, released_by: 'developer', reason: body.reason.trim() });
    }
    const activation = await repo.findActivation(tx, scope, serialId, activationId);
    const after = await repo.findSerial(tx, scope, serialId);
    return { released, activation: toActivationRow(activation!), serial: toSerialRow(after!) };
  });
}
