import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, expect } from 'vitest';
import { signCheckoutPayload } from '../../src/modules/checkout/checkout.signature.js';
import { Recipients } from '../../src/modules/recipients/recipients.service.js';
import { transferIdempotencyKey } from '../../src/modules/payouts/providers.js';
import { bearer, seedWorkspace, type SeededWorkspace, type TestContext, unique } from '../helpers/app.js';

// A live collaborator with payable money, through the same doors as in production: the signed
// checkout webhook sells, the partner portal sets up the sandbox wallet. Shared by the payout tests.

export const CHECKOUT_SECRET = 'whsec_flow_0123456789abcdef0123456789abcdef';
const PROGRAMS = '/api/developer/partners/programs';
const now = () => Math.floor(Date.now() / 1000);

export async function postCheckoutEvent(c: TestContext, event: object) {
  const body = JSON.stringify(event);
  const res = await c.app.inject({
    method: 'POST',
    url: '/api/checkout/events',
    headers: { 'content-type': 'application/json', 'patchbay-signature': signCheckoutPayload(CHECKOUT_SECRET, body, now()) },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A managed-checkout sale of `product`; a 50 % collaborator on p1 earns 45 % of it (after the 10 % platform share). */
export async function sell(c: TestContext, ws: SeededWorkspace, product: string, cents: number): Promise<string> {
  const orderId = `ord_${unique()}`;
  await postCheckoutEvent(c, {
    id: `evt_${unique()}`,
    type: 'sale.captured',
    created: now() + 1,
    data: { workspace_id: ws.workspaceId, order_id: orderId, currency: 'usd', customer: { email: `b-${unique()}@customer.test` }, items: [{ product_id: ws.ids.products[product], subtotal_cents: cents, discount_cents: 0 }] },
  });
  return orderId;
}

type Member = { key: string; permissions: string[]; products: 'all' | string[] };

/** A workspace with an active collaborator (50 % of p1), both live consents unless told otherwise, and the partner's session. */
export async function collaboration(c: TestContext, opts: { email?: string; consents?: Array<'developer' | 'recipient'>; members?: Member[] } = {}) {
  const email = opts.email ?? `co-${unique()}@partner.test`;
  const ws = await seedWorkspace(c, {
    members: opts.members ?? [],
    programs: [
      { key: 'co', kind: 'collaborator', name: 'Co', recipientEmail: email, rateBps: 0, productRates: [{ product: 'p1', rateBps: 5000 }], status: 'active', consents: opts.consents ?? ['developer', 'recipient'] },
    ],
  });
  const session = (await new Recipients(c.database.db).operatorSession(email)).token;
  return { ws, email, session, co: ws.ids.programs.co! };
}

export async function wallet(c: TestContext, session: string) {
  return c.app.inject({ method: 'POST', url: '/api/partner-portal/programs/payouts/wallet-provider', headers: bearer(session), payload: { livemode: false, confirm_verified_email: true } });
}

/** A collaborator with a ready sandbox wallet and 4500 payable (a 10000 sale); `tag` picks a sandbox behaviour (`fail`, `timeout`, `lost`). */
export async function payablePartner(c: TestContext, tag?: 'fail' | 'timeout' | 'lost') {
  const partner = await collaboration(c, { email: `co-${unique()}${tag ? `+${tag}` : ''}@partner.test` });
  await sell(c, partner.ws, 'p1', 10000);
  expect((await wallet(c, partner.session)).statusCode).toBe(200);
  return partner;
}

export async function accounting(c: TestContext, ws: SeededWorkspace, co: number) {
  const res = await c.app.inject({ method: 'GET', url: `${PROGRAMS}/accounting`, headers: bearer(ws.owner) });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json(), partner: res.json().balance_details.find((d: { agreement_id: number | null }) => d.agreement_id === co) };
}

export interface TransferRow {
  id: number;
  status: string;
  amount: string;
  attempts: number;
  run_id: string | null;
  lease_until: Date | null;
  provider_reference: string | null;
  failure_reason: string | null;
}

export async function transfersOf(c: TestContext, agreementId: number): Promise<TransferRow[]> {
  const result = await sql<TransferRow>`
    select id::int as id, status, amount::text, attempts, run_id, lease_until, provider_reference, failure_reason
    from partner_transfers where agreement_id = ${agreementId} order by id`.execute(c.database.db);
  return result.rows;
}

/** What the sandbox provider paid for a transfer: its payouts under the transfer's idempotency key. */
export async function sandboxPayouts(c: TestContext, transferId: number) {
  const result = await sql<{ amount: string; outcome: string }>`
    select amount::text, outcome from payout_sandbox_transfers where idempotency_key = ${transferIdempotencyKey(transferId)}`.execute(c.database.db);
  return result.rows;
}

/**
 * On PostgreSQL, a database of this test file's own, dropped after its tests. A payout run covers
 * the whole service: in the shared test database, another file's run would pay this file's
 * partners (and this file's runs theirs) while a test looks at them. Undefined on PGlite, where
 * every file has its own database anyway.
 */
export async function privateDatabaseUrl(name: string): Promise<string | undefined> {
  const shared = process.env.DATABASE_URL;
  if (!shared) return undefined;
  const url = new URL(shared);
  const database = `${url.pathname.slice(1)}_${name}_${unique()}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new pg.Client({ connectionString: shared });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  afterAll(async () => {
    const client = new pg.Client({ connectionString: shared });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });
  url.pathname = `/${database}`;
  return url.toString();
}
