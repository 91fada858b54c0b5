import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { foldCounters, vacuumCounterDeltas } from '../../src/platform/counters/counters.js';
import { onPostgres, type SeededWorkspace, seedWorkspace, useTestApp } from '../helpers/app.js';
import { now, refund, sale, signedEvent, WEBHOOK_SECRET } from './checkout-helpers.js';

// The workspace counters and the dashboard's daily sales are delta rows summed on read (issue 26):
// sales of one workspace never wait on one counter row, and every reader sees exact figures before
// and after the deltas are folded.

// No background folding here: the tests fold when they choose to.
const ctx = useTestApp({ checkout: { webhookSecrets: [WEBHOOK_SECRET] }, jobs: { run: false } });

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

/** What the counters say, next to what counting the rows says. */
async function figures(workspaceId: number, productId: number) {
  const db = ctx().database.db;
  const counters = await sql<{ active_customers: number; serials: number; order_items: number; customers_version: string; order_items_version: number }>`
    select active_customers, serials, order_items, customers_version::text, order_items_version from workspace_stats where workspace_id = ${workspaceId}`.execute(db);
  const counted = await sql<{ active_customers: number; serials: number; order_items: number }>`
    select (select count(*) from developer_customers where workspace_id = ${workspaceId} and status = 'active')::int as active_customers,
           (select count(*) from serials where workspace_id = ${workspaceId})::int as serials,
           (select count(*) from order_items where workspace_id = ${workspaceId})::int as order_items`.execute(db);
  const daily = await sql<{ orders: number; gross: string; refunds: string }>`
    select coalesce(sum(orders), 0)::int as orders, coalesce(sum(gross_cents), 0)::text as gross, coalesce(sum(refunds_cents), 0)::text as refunds
    from product_sales_daily where workspace_id = ${workspaceId} and product_id = ${productId}`.execute(db);
  const items = await sql<{ orders: number; gross: string; refunds: string }>`
    select count(*)::int as orders, coalesce(sum(sale_price_cents), 0)::text as gross, coalesce(sum(refunded_cents), 0)::text as refunds
    from order_items where workspace_id = ${workspaceId} and product_id = ${productId} and status in ('paid', 'imported')`.execute(db);
  const c = counters.rows[0]!;
  return {
    counters: { active_customers: c.active_customers, serials: c.serials, order_items: c.order_items },
    versions: { customers: c.customers_version, items: c.order_items_version },
    counted: counted.rows[0]!,
    daily: daily.rows[0]!,
    items: items.rows[0]!,
  };
}

const deltasOf = async (workspaceId: number) =>
  (
    await sql<{ n: number }>`
      select ((select count(*) from workspace_stats_deltas where workspace_id = ${workspaceId})
            + (select count(*) from product_sales_daily_deltas where workspace_id = ${workspaceId}))::int as n`.execute(ctx().database.db)
  ).rows[0]!.n;

/** Folds until none of the workspace's deltas is left (on a shared PostgreSQL database another test file's folder may hold the turn). */
async function foldAll(workspaceId: number): Promise<void> {
  for (let i = 0; i < 100 && (await deltasOf(workspaceId)) > 0; i++) {
    if ((await foldCounters(ctx().database.db)) === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(await deltasOf(workspaceId)).toBe(0);
}

async function sell(ws: SeededWorkspace, count: number): Promise<string[]> {
  const orders: string[] = [];
  for (let i = 0; i < count; i++) {
    const event = sale(ws, [{ product: 'p2', subtotal: 1000 + i }]);
    const res = await signedEvent(ctx(), event);
    expect(res.json().outcome).toBe('recorded');
    orders.push(event.data.order_id);
  }
  return orders;
}

describe('workspace counters and daily sales (delta rows)', () => {
  it('counts exactly what the rows hold, before and after the deltas are folded, and a fold changes no figure', async () => {
    const ws = await seedWorkspace(ctx());
    const p2 = ws.ids.products.p2!;
    const orders = await sell(ws, 5);
    expect((await signedEvent(ctx(), refund(ws, orders[0]!, 'p2', 400))).json().outcome).toBe('recorded');
    const before = await figures(ws.workspaceId, p2);
    expect(before.counters).toEqual(before.counted);
    expect(before.counters.order_items).toBe(5);
    expect(before.daily).toEqual(before.items);
    expect(before.daily).toEqual({ orders: 5, gross: String(5 * 1000 + 10), refunds: '400' });

    await foldAll(ws.workspaceId);
    // What the folder does after a large fold, outside any transaction.
    await vacuumCounterDeltas(ctx().database.db);
    const after = await figures(ws.workspaceId, p2);
    // The list versions too: a fold is not a change of the list.
    expect(after).toEqual(before);

    // Sales after a fold add to the folded part.
    await sell(ws, 2);
    const more = await figures(ws.workspaceId, p2);
    expect(more.counters).toEqual(more.counted);
    expect(more.counters.order_items).toBe(7);
    expect(more.daily).toEqual(more.items);
    expect(Number(more.versions.items)).toBeGreaterThan(Number(after.versions.items));
  });

  it('folds a batch whose sum is below zero (a customer removed after an earlier fold took its creation)', async () => {
    const ws = await seedWorkspace(ctx(), { customers: [{ key: 'gone', email: 'gone@x.test' }, { key: 'stays', email: 'stays@x.test' }] });
    await foldAll(ws.workspaceId);
    const res = await ctx().app.inject({
      method: 'DELETE',
      url: `/api/developer/customers/${ws.ids.customers.gone!}`,
      headers: { authorization: `Bearer ${ws.owner}` },
      payload: { confirm: true },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    // The fold of the removal's -1 alone used to be refused by a CHECK on the row proposed for insertion.
    await foldAll(ws.workspaceId);
    const after = await figures(ws.workspaceId, ws.ids.products.p2!);
    expect(after.counters).toEqual(after.counted);
    expect(after.counters.active_customers).toBe(1);
  });

  it('writes a sale’s counters as new rows, never as an update of a shared row', async () => {
    const ws = await seedWorkspace(ctx());
    const db = ctx().database.db;
    await sell(ws, 1);
    await foldAll(ws.workspaceId);
    const foldedRow = async () => (await sql<{ row: string }>`select (s.*)::text as row from workspace_stats_folded s where workspace_id = ${ws.workspaceId}`.execute(db)).rows[0]?.row;
    const check = async () => {
      const rowBefore = await foldedRow();
      expect(rowBefore).toBeDefined();
      await sell(ws, 2);
      expect(await foldedRow()).toBe(rowBefore);
      expect(await deltasOf(ws.workspaceId)).toBeGreaterThanOrEqual(4);
    };
    // On a shared PostgreSQL database, hold the folders' turn (other test files fold) while the sales are written;
    // the embedded database is this file's alone, and its one connection cannot be held aside.
    if (!onPostgres) return check();
    await db.connection().execute(async (session) => {
      await sql`select pg_advisory_lock(hashtext('fold_counters'))`.execute(session);
      try {
        await check();
      } finally {
        await sql`select pg_advisory_unlock(hashtext('fold_counters'))`.execute(session);
      }
    });
  });
});

describe.runIf(onPostgres)('sales of one workspace in parallel (PostgreSQL)', () => {
  it('books 16 parallel sales of one workspace while another transaction holds uncommitted counter changes of it, with exact counts', async () => {
    const ws = await seedWorkspace(ctx());
    const p2 = ws.ids.products.p2!;
    const [first] = await sell(ws, 1);
    const db = ctx().database.db;
    const item = (await sql<{ id: number; customer_id: number }>`
      select id, customer_id from order_items where workspace_id = ${ws.workspaceId} and external_reference = ${first}`.execute(db)).rows[0]!;
    const customer = (await sql<{ id: number }>`
      select id from developer_customers where workspace_id = ${ws.workspaceId} and account_id = ${item.customer_id}`.execute(db)).rows[0];
    expect(customer).toBeDefined();

    // Another writer of the same workspace, product and day holds its counter changes open: with one
    // counter row per workspace (and per product and day) every sale below would wait for it to end.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const blocker = db.transaction().execute(async (tx) => {
      await sql`update order_items set refunded_cents = refunded_cents + 1, refunded_at = now() where workspace_id = ${ws.workspaceId} and id = ${item.id}`.execute(tx);
      if (customer) await sql`update developer_customers set status = status where workspace_id = ${ws.workspaceId} and id = ${customer.id}`.execute(tx);
      holding();
      await released;
    });
    await held;
    try {
      const events = Array.from({ length: 16 }, (_, i) => ({ ...sale(ws, [{ product: 'p2', subtotal: 2000 + i }]), created: now() }));
      const answers = await Promise.race([
        Promise.all(events.map((e) => signedEvent(ctx(), e))),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the sales waited on the open transaction')), 20_000)),
      ]);
      expect(answers.map((a) => a.json().outcome)).toEqual(Array(16).fill('recorded'));
    } finally {
      release();
      await blocker;
    }
    const after = await figures(ws.workspaceId, p2);
    expect(after.counters).toEqual(after.counted);
    expect(after.counters.order_items).toBe(17);
    expect(after.daily).toEqual(after.items);
    expect(after.daily.orders).toBe(17);
    expect(after.daily.refunds).toBe('1');
    await foldCounters(db);
    expect(await figures(ws.workspaceId, p2)).toEqual(after);
  });
});
