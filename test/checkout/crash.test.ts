import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { buildTestApp, onPostgres, TEST_JWT, unique } from '../helpers/app.js';
import { childEnv, CLI_ENTRY, migratedDataDir, spawnTracked, startServer } from '../helpers/process.js';
import { now, WEBHOOK_SECRET } from './checkout-helpers.js';

// kill -9 during a burst of sales, which the server books in groups: a group is one transaction,
// so what the dead process had committed is booked whole and what it had not is not booked at all.
// The checkout sends every unanswered event again to the next instance, which books each event and
// each order once: no order without its items, serials, allocations and ledger entries.

describe('a server killed with SIGKILL while it books a burst of sales', () => {
  it('leaves nothing half-written, and the resent events book each sale once', { timeout: 300_000 }, async () => {
    const dir = await migratedDataDir('patchbay-checkout-crash-');
    const env: Record<string, string> = {
      JWT_SECRET: TEST_JWT.secret!,
      DEMO: '0',
      CHECKOUT_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    };
    const tag = unique();
    const fixture = path.join(dir, '..', `${path.basename(dir)}-fixture.json`);
    await fs.writeFile(
      fixture,
      JSON.stringify({
        workspaces: [{ key: 'ws', name: `Checkout crash ${tag}`, billingEligible: true }],
        accounts: [{ key: 'owner', email: `checkout-crash-${tag}@dev.test`, emailVerified: true }],
        memberships: [{ account: 'owner', workspace: 'ws', owner: true }],
        products: ['a', 'b'].map((key) => ({ key, workspace: 'ws', name: `Crash ${key} ${tag}`, priceCents: 1_000, status: 'active' })),
        programs: [{ key: 'co', workspace: 'ws', kind: 'collaborator', name: 'Co', recipientEmail: `co-${tag}@partner.test`, rateBps: 0, productRates: [{ product: 'a', rateBps: 3000 }], status: 'active', consents: ['developer', 'recipient'], owner: 'owner' }],
      }),
    );
    const loaded = await spawnTracked([CLI_ENTRY, 'fixtures', 'load', fixture], childEnv(dir, env)).outcome;
    await fs.rm(fixture, { force: true });
    expect(loaded.code, loaded.stderr).toBe(0);
    const { ids } = JSON.parse(loaded.stdout) as { ids: { workspaces: { ws: number }; products: { a: number; b: number } } };
    const created = now() + 1;
    const events = Array.from({ length: 120 }, (_, i) => ({
      id: `evt_crash_${tag}_${i}`,
      type: 'sale.captured',
      created,
      data: {
        workspace_id: ids.workspaces.ws,
        order_id: `ord_crash_${tag}_${i}`,
        currency: 'usd',
        customer: { email: `buyer-${i % 7}-${tag}@customer.test`, name: 'Crash Buyer' },
        items: [{ product_id: i % 2 ? ids.products.a : ids.products.b, subtotal_cents: 1_000, discount_cents: 0 }],
      },
    }));
    const post = (address: string, event: object) => {
      const body = JSON.stringify(event);
      return fetch(`${address}/api/checkout/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(WEBHOOK_SECRET, body, now()) }, body });
    };

    let server = await startServer(dir, env);
    let answered = 0;
    const first = events.map((event) =>
      post(server.address, event).then(
        (res) => void (res.ok && (answered += 1)),
        () => undefined,
      ),
    );
    // Some groups are booked and answered, others are in flight: then the process dies.
    for (let waited = 0; answered < 15 && waited < 60_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const answeredBeforeTheKill = answered;
    server.child.kill('SIGKILL');
    expect((await server.outcome).signal).toBe('SIGKILL');
    await Promise.all(first);
    expect(answeredBeforeTheKill).toBeGreaterThanOrEqual(15);
    // The burst was cut short: some events were never answered.
    expect(answered).toBeLessThan(events.length);

    // The checkout sends every event again (those answered before too: a lost answer looks the same to it).
    server = await startServer(dir, env);
    const again = await Promise.all(events.map((event) => post(server.address, event).then(async (res) => ({ status: res.status, outcome: ((await res.json()) as { outcome?: string }).outcome }))));
    expect(again.map((a) => a.status)).toEqual(events.map(() => 200));
    expect(again.every((a) => a.outcome === 'recorded' || a.outcome === 'replayed')).toBe(true);
    server.child.kill('SIGTERM');
    await server.outcome;

    const check = await buildTestApp(onPostgres ? {} : { dataDir: dir, databaseUrl: '' });
    try {
      const db = check.database.db;
      const ws = ids.workspaces.ws;
      const counts = await sql<{ events: number; orders: number; items: number; serials: number; allocations: number; sales: number; receipts: number }>`
        select (select count(*)::int from checkout_events where workspace_id = ${ws}) as events,
               (select count(*)::int from orders where workspace_id = ${ws}) as orders,
               (select count(*)::int from order_items where workspace_id = ${ws}) as items,
               (select count(*)::int from order_items where workspace_id = ${ws} and serial_id is not null) as serials,
               (select count(*)::int from partner_allocations where workspace_id = ${ws}) as allocations,
               (select count(*)::int from ledger_transactions where workspace_id = ${ws} and kind = 'sale') as sales,
               (select count(*)::int from jobs where workspace_id = ${ws} and kind = 'email.send') as receipts`.execute(db);
      expect(counts.rows[0]).toEqual({ events: 120, orders: 120, items: 120, serials: 120, allocations: 120, sales: 120, receipts: 120 });
      const clearing = await sql<{ total: string }>`select coalesce(sum(amount), 0)::text as total from ledger_entries where workspace_id = ${ws} and account = 'checkout_clearing'`.execute(db);
      expect(clearing.rows[0]!.total).toBe(String(-120 * 1_000));
      expect(await unbalancedTransactions(db)).toEqual([]);
    } finally {
      await check.app.close();
      await check.database.close();
    }
  });
});
