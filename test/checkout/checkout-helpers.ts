import { sql } from 'kysely';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { seedWorkspace, type SeededWorkspace, type TestContext, unique } from '../helpers/app.js';

// What the checkout webhook tests share: signing and posting an event, event builders, balances.

export const WEBHOOK_SECRET = 'whsec_test_0123456789abcdef0123456789abcdef';

export const now = () => Math.floor(Date.now() / 1000);

export function signedEvent(c: TestContext, event: object, opts: { secret?: string; at?: number; header?: string } = {}) {
  const body = JSON.stringify(event);
  const header = opts.header ?? signCheckoutPayload(opts.secret ?? WEBHOOK_SECRET, body, opts.at ?? now());
  return c.app.inject({ method: 'POST', url: '/api/checkout/events', headers: { 'content-type': 'application/json', 'patchbay-signature': header }, payload: body });
}

export const sale = (ws: SeededWorkspace, items: Array<{ product: string; subtotal: number; discount?: number }>, extra: object = {}) => ({
  id: `evt_${unique()}`,
  type: 'sale.captured',
  // A second ahead: the seeded agreements take effect at the moment they are written, and a sale before that is not theirs.
  created: now() + 1,
  data: {
    workspace_id: ws.workspaceId,
    order_id: `ord_${unique()}`,
    currency: 'usd',
    customer: { email: `buyer-${unique()}@customer.test`, name: 'Ada Buyer' },
    items: items.map((i) => ({ product_id: ws.ids.products[i.product]!, subtotal_cents: i.subtotal, discount_cents: i.discount ?? 0 })),
    ...extra,
  },
});

export const refund = (ws: SeededWorkspace, orderId: string, product: string, amount: number) => ({
  id: `evt_${unique()}`,
  type: 'refund.created',
  created: now(),
  data: { workspace_id: ws.workspaceId, order_id: orderId, product_id: ws.ids.products[product]!, amount_cents: amount },
});

/** Each ledger account's balance in the workspace, keyed `account` or `account:agreement`. */
export async function balances(c: TestContext, workspaceId: number) {
  const rows = await sql<{ account: string; agreement_id: number | null; total: string }>`
    select account, agreement_id, sum(amount)::text as total from ledger_entries where workspace_id = ${workspaceId} group by account, agreement_id`.execute(c.database.db);
  return Object.fromEntries(rows.rows.map((r) => [r.agreement_id ? `${r.account}:${r.agreement_id}` : r.account, BigInt(r.total)]));
}

/** A workspace with an active affiliate (20 %) and a collaborator on p1 (30 %). */
export async function programs(c: TestContext, consents: Array<'developer' | 'recipient'> = ['developer', 'recipient']) {
  return seedWorkspace(c, {
    programs: [
      { key: 'aff', kind: 'affiliate', name: 'Aff', recipientEmail: `aff-${unique()}@partner.test`, rateBps: 2000, status: 'active', consents },
      { key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: `co-${unique()}@partner.test`, rateBps: 0, productRates: [{ product: 'p1', rateBps: 3000 }], status: 'active', consents },
    ],
  });
}
