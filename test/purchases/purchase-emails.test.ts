import { describe, expect, it } from 'vitest';
import { itemsForEmail } from '../../src/modules/purchases/purchase-emails.repo.js';
import { seedWorkspace, useTestApp } from '../helpers/app.js';

// The receipts of a burst of sales read their items together (purchases.emails.ts batches the reads):
// one statement answers each key by position, and only from the workspace the key names.

const ctx = useTestApp();

describe('itemsForEmail', () => {
  it('answers each item of its own workspace by position, and nothing for an item named with another workspace', async () => {
    const a = await seedWorkspace(ctx(), { customers: [{ key: 'c', email: `ea-${Date.now()}@buyer.test` }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p1', priceCents: 1_200 }, { product: 'p2', priceCents: 300 }] }] });
    const b = await seedWorkspace(ctx(), { customers: [{ key: 'c' }], orders: [{ key: 'o', customer: 'c', items: [{ product: 'p3', priceCents: 700 }] }] });
    const [a1, a2] = a.ids.orderItems.o!;
    const [b1] = b.ids.orderItems.o!;
    const read = await itemsForEmail(ctx().database.db, [
      { workspaceId: a.workspaceId, orderItemId: a2! },
      { workspaceId: b.workspaceId, orderItemId: a1! },
      { workspaceId: b.workspaceId, orderItemId: b1! },
      { workspaceId: a.workspaceId, orderItemId: a1! },
      { workspaceId: a.workspaceId, orderItemId: 2_000_000_000 },
    ]);
    expect(read).toHaveLength(5);
    expect(read[0]).toMatchObject({ sale_price_cents: 300, customerStatus: 'active' });
    expect(read[1]).toBeUndefined();
    expect(read[2]).toMatchObject({ sale_price_cents: 700 });
    expect(read[3]).toMatchObject({ sale_price_cents: 1_200, email: expect.stringMatching(/^ea-/) });
    expect(read[4]).toBeUndefined();
    expect(await itemsForEmail(ctx().database.db, [])).toEqual([]);
  });
});
