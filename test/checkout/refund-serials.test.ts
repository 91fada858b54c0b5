import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { bearer, type SeededWorkspace, useTestApp } from '../helpers/app.js';
import { programs, refund, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// A refunded sale stops licensing on the managed checkout too: a full refund revokes the serial
// sold with the item (audited as the system's revoke with reason `refund`), a partial refund
// changes no serial, and a workspace that keeps serials on refund keeps them active.

const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] } });

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

async function sold(ws: SeededWorkspace, subtotal = 1000) {
  const event = sale(ws, [{ product: 'p1', subtotal }]);
  const res = await signedEvent(ctx(), event);
  expect(res.statusCode, res.body).toBe(200);
  const itemId: number = res.json().order_item_ids[0];
  const db = ctx().database.db;
  const item = await db.selectFrom('order_items').select('serial_id').where('id', '=', itemId).executeTakeFirstOrThrow();
  const serial = await db.selectFrom('serials').select(['id', 'code']).where('id', '=', item.serial_id!).executeTakeFirstOrThrow();
  const runtime = (path: 'activate' | 'validate') =>
    ctx().app.inject({ method: 'POST', url: `/api/licensing/v1/${path}`, payload: { productAppId: ws.appIds.p1, serial: serial.code, machineId: 'studio-mac' } });
  expect((await runtime('activate')).statusCode).toBe(201);
  expect((await runtime('validate')).json().valid).toBe(true);
  const state = async () => ({
    serial: (await db.selectFrom('serials').select('status').where('id', '=', serial.id).executeTakeFirstOrThrow()).status,
    entitlement: (await db.selectFrom('entitlements').select('status').where('order_item_id', '=', itemId).executeTakeFirstOrThrow()).status,
    validation: (await runtime('validate')).json() as { valid: boolean; code: string },
    revocations: await db.selectFrom('serial_events').select(['actor_type', 'reason', 'before_status']).where('serial_id', '=', serial.id).where('action', '=', 'revoke').execute(),
  });
  return { orderId: event.data.order_id, itemId, state };
}

describe('managed checkout refunds and serials', () => {
  it('a partial refund changes no serial; the refund that completes it revokes the serial, audited with reason refund', async () => {
    const ws = await programs(ctx());
    const s = await sold(ws);
    expect((await signedEvent(ctx(), refund(ws, s.orderId, 'p1', 400))).statusCode).toBe(200);
    expect(await s.state()).toMatchObject({ serial: 'redeemed', entitlement: 'active', validation: { valid: true }, revocations: [] });
    expect((await signedEvent(ctx(), refund(ws, s.orderId, 'p1', 600))).statusCode).toBe(200);
    expect(await s.state()).toMatchObject({
      serial: 'revoked',
      entitlement: 'revoked',
      validation: { valid: false, code: 'REVOKED' },
      revocations: [{ actor_type: 'system', reason: 'refund', before_status: 'redeemed' }],
    });
    const audit = await ctx().database.db.selectFrom('audit_log').select('data').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'purchases.checkout_refund').orderBy('id').execute();
    expect(audit.map((a) => (a.data as { revokedSerialIds: number[] }).revokedSerialIds.length)).toEqual([0, 1]);
  });

  it('keeps the serial active on a full refund when the workspace keeps serials on refund', async () => {
    const ws = await programs(ctx());
    const setting = await ctx().app.inject({ method: 'PATCH', url: '/api/developer/workspace', headers: bearer(ws.owner), payload: { keep_serials_on_refund: true } });
    expect(setting.json().keep_serials_on_refund).toBe(true);
    const s = await sold(ws);
    expect((await signedEvent(ctx(), refund(ws, s.orderId, 'p1', 1000))).statusCode).toBe(200);
    expect(await s.state()).toMatchObject({ serial: 'redeemed', entitlement: 'revoked', validation: { valid: true }, revocations: [] });
  });

  it('leaves a serial that was revoked by hand as it is', async () => {
    const ws = await programs(ctx());
    const s = await sold(ws);
    const serialId = (await ctx().database.db.selectFrom('order_items').select('serial_id').where('id', '=', s.itemId).executeTakeFirstOrThrow()).serial_id!;
    const revoked = await ctx().app.inject({ method: 'POST', url: `/api/developer/serials/${serialId}/revoke`, headers: bearer(ws.owner), payload: { reason: 'chargeback' } });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await signedEvent(ctx(), refund(ws, s.orderId, 'p1', 1000))).statusCode).toBe(200);
    expect((await s.state()).revocations).toEqual([{ actor_type: 'developer', reason: 'chargeback', before_status: 'redeemed' }]);
  });
});
