import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { ReferralContextSigner } from '../../src/modules/referrals/referral-context.js';
import { MemoryTransport } from '../../src/platform/mail/transport.js';
import { seedWorkspace, TEST_LICENSE_KEY, unique, useTestApp } from '../helpers/app.js';
import { balances, connect, deliver, entitlementStatus, events, paddleAdjustment, paddleCustomer, paddleSignature, paddleTransaction, purchases, SECRETS, serialOf, withoutHelpers } from './helpers.js';

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport } });
const referrals = new ReferralContextSigner([TEST_LICENSE_KEY]);

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

async function store() {
  const ws = await seedWorkspace(ctx(), {
    programs: [{ key: 'aff', kind: 'affiliate', name: 'Aff', recipientEmail: `aff-${unique()}@partner.test`, rateBps: 2000, includeResellerSales: true, status: 'active', consents: ['developer', 'recipient'] }],
  });
  const pro1 = `pro_${unique()}`;
  const pro2 = `pro_${unique()}`;
  const connection = await connect(ctx(), ws, 'paddle', { mapping: { [pro1]: 'p1', [pro2]: 'p2' } });
  return { ws, connection, pro1, pro2 };
}

describe('Paddle', () => {
  it('books transaction.completed for a customer its customer.created event named: purchase, serial, buyer e-mail, pb_ref from custom_data', async () => {
    const { ws, connection, pro1 } = await store();
    const customerId = `ctm_${unique()}`;
    const email = `sam-${unique()}@example.com`;
    expect((await deliver(ctx(), 'paddle', connection.id, paddleCustomer(customerId, email))).json().outcome).toBe('recorded');
    const pbRef = referrals.sign({ agreementId: ws.ids.programs.aff!, workspaceId: ws.workspaceId, visitedAt: new Date(Date.now() - 60_000) });
    const txn = paddleTransaction(customerId, [{ product: pro1, subtotal: 2500, tax: 500 }], { customData: { pb_ref: pbRef } });
    const res = await deliver(ctx(), 'paddle', connection.id, withoutHelpers(txn));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: txn.event_id, outcome: 'recorded' });
    const [row] = await purchases(ctx(), ws);
    expect(row).toMatchObject({ channel: 'external_store', provider: 'paddle', price_cents: 2500, sale_price_cents: 2500, currency: 'usd' });
    const { serial, validate, activate } = await serialOf(ctx(), ws, res.json().order_item_ids[0]);
    expect(serial.status).toBe('redeemed');
    await activate();
    expect((await validate()).valid).toBe(true);
    await ctx().app.jobs.idle();
    expect(transport.sent.some((m) => m.to === email)).toBe(true);
    expect((await balances(ctx(), ws.workspaceId))[`external_estimate:${ws.ids.programs.aff}`]).toBe(500n);
  });

  it('keeps a sale that arrives before its customer as failed, then books it once customer.created arrives', async () => {
    const { ws, connection, pro1 } = await store();
    const customerId = `ctm_${unique()}`;
    const txn = paddleTransaction(customerId, [{ product: pro1, subtotal: 1000 }]);
    const first = await deliver(ctx(), 'paddle', connection.id, withoutHelpers(txn));
    expect(first.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining(customerId) });
    expect(await purchases(ctx(), ws)).toEqual([]);
    await deliver(ctx(), 'paddle', connection.id, paddleCustomer(customerId, `late-${unique()}@example.com`));
    await ctx().app.jobs.idle();
    const log = await events(ctx(), ws, connection.id);
    expect(log.find((e) => e.provider_event_id === txn.event_id)).toMatchObject({ outcome: 'recorded' });
    expect(await purchases(ctx(), ws)).toHaveLength(1);
  });

  it('an approved full refund adjustment revokes the item’s serial; a pending one and a credit are ignored; a partial refund of one item changes no serial', async () => {
    const { ws, connection, pro1, pro2 } = await store();
    const customerId = `ctm_${unique()}`;
    await deliver(ctx(), 'paddle', connection.id, paddleCustomer(customerId, `sam-${unique()}@example.com`));
    const txn = paddleTransaction(customerId, [{ product: pro1, subtotal: 2500, tax: 500 }, { product: pro2, subtotal: 1000, tax: 200 }]);
    const items: number[] = (await deliver(ctx(), 'paddle', connection.id, withoutHelpers(txn))).json().order_item_ids;
    const [first, second] = txn.itemIds;
    const pending = paddleAdjustment(txn.data.id, [{ itemId: first!, type: 'full', total: 3000 }], { status: 'pending_approval' });
    expect((await deliver(ctx(), 'paddle', connection.id, pending)).json()).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('pending_approval') });
    expect((await deliver(ctx(), 'paddle', connection.id, paddleAdjustment(txn.data.id, [{ itemId: first!, type: 'full', total: 3000 }], { action: 'credit' }))).json().outcome).toBe('ignored');
    // Approved: adjustment.updated with the same adjustment id counts once, whichever event reports it.
    const approved = paddleAdjustment(txn.data.id, [{ itemId: first!, type: 'full', total: 3000 }], { id: pending.data.id, type: 'adjustment.updated' });
    expect((await deliver(ctx(), 'paddle', connection.id, approved)).json()).toMatchObject({ outcome: 'recorded', order_item_ids: [items[0]] });
    const again = paddleAdjustment(txn.data.id, [{ itemId: first!, type: 'full', total: 3000 }], { id: pending.data.id, type: 'adjustment.created' });
    expect((await deliver(ctx(), 'paddle', connection.id, again)).json().outcome).toBe('replayed');
    const refunded = await serialOf(ctx(), ws, items[0]!);
    expect(refunded.item.refund_status).toBe('full');
    expect(refunded.serial.status).toBe('revoked');
    expect(await refunded.validate()).toMatchObject({ valid: false, code: 'REVOKED' });
    expect(await entitlementStatus(ctx(), items[0]!)).toBe('revoked');
    // Half of the second item (incl. tax): its share of the sale price, no serial change.
    expect((await deliver(ctx(), 'paddle', connection.id, paddleAdjustment(txn.data.id, [{ itemId: second!, type: 'partial', total: 600 }]))).json().outcome).toBe('recorded');
    const partial = await serialOf(ctx(), ws, items[1]!, 'p2');
    expect(partial.item).toMatchObject({ refund_status: 'partial', refunded_cents: 500 });
    expect(partial.serial.status).toBe('redeemed');
    // Collected by Paddle: nothing of it passed through Patchbay's clearing account.
    expect((await balances(ctx(), ws.workspaceId)).checkout_clearing).toBeUndefined();
  });

  it('refuses a missing, malformed, stale or foreign Paddle-Signature with 400 and records nothing', async () => {
    const { ws, connection } = await store();
    const body = JSON.stringify(paddleCustomer(`ctm_${unique()}`, `x-${unique()}@example.com`));
    const wrong: Array<Record<string, string>> = [{}, { 'paddle-signature': 'nonsense' }, { 'paddle-signature': paddleSignature(body, SECRETS.paddle, Math.floor(Date.now() / 1000) - 60) }, { 'paddle-signature': paddleSignature(body, 'pdl_ntfset_someone_else') }];
    for (const headers of wrong) {
      const res = await deliver(ctx(), 'paddle', connection.id, body, { headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(400);
      expect(res.json().code).toBe('CHECKOUT_CONNECTION_SIGNATURE_INVALID');
    }
    expect(await events(ctx(), ws, connection.id)).toEqual([]);
  });

  it('ignores a subscription’s transactions with the reason', async () => {
    const { ws, connection, pro1 } = await store();
    const customerId = `ctm_${unique()}`;
    await deliver(ctx(), 'paddle', connection.id, paddleCustomer(customerId, `sub-${unique()}@example.com`));
    const txn = withoutHelpers(paddleTransaction(customerId, [{ product: pro1, subtotal: 900 }]));
    const renewal = { ...txn, data: { ...txn.data, subscription_id: 'sub_01h04vsc0qhwtsbsxh3422wjs4', origin: 'subscription_recurring' } };
    expect((await deliver(ctx(), 'paddle', connection.id, renewal)).json()).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('subscription') });
    expect(await purchases(ctx(), ws)).toEqual([]);
  });

  it('logs an unmapped product as failed, naming it', async () => {
    const { ws, connection } = await store();
    const customerId = `ctm_${unique()}`;
    await deliver(ctx(), 'paddle', connection.id, paddleCustomer(customerId, `u-${unique()}@example.com`));
    const unknown = `pro_${unique()}`;
    const res = await deliver(ctx(), 'paddle', connection.id, withoutHelpers(paddleTransaction(customerId, [{ product: unknown, subtotal: 100 }])));
    expect(res.json()).toMatchObject({ outcome: 'failed', reason: expect.stringContaining(unknown) });
    expect(await purchases(ctx(), ws)).toEqual([]);
  });
});
