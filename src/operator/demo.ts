import type { JwtSettings } from '../platform/auth/jwt.js';
import type { Db } from '../platform/db/database.js';
import { FixtureError, type FixtureResult, loadFixtures } from './fixtures.js';

export const DEMO_OWNER_EMAIL = 'owner@demo.patchbay.test';

const FIRST = ['Ann', 'Ben', 'Chloe', 'Dev', 'Eli', 'Fay', 'Gus', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lena', 'Milo', 'Nia', 'Omar', 'Pia'];
const LAST = ['Lee', 'Ortiz', 'Nakamura', 'Smith', 'Okafor', 'Berg', 'Rossi', 'Dubois', 'Kowalski', 'Haddad', 'Silva', 'Novak'];
const PRODUCTS = ['synth', 'reverb', 'drums'];

/** A demo workspace: an owner, a product-scoped teammate, three products, 300 customers and 120 sales. */
export function demoDocument() {
  const customers = Array.from({ length: 300 }, (_, i) => {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    return {
      key: `c${i}`,
      workspace: 'demo',
      email: `${first}.${last}.${i}@customers.example`.toLowerCase(),
      firstName: first,
      lastName: last,
      products: [PRODUCTS[i % 3]!, ...(i % 5 === 0 ? [PRODUCTS[(i + 1) % 3]!] : [])],
      marketingConsent: i % 4 === 0,
    };
  });
  // Sales history: managed-checkout sales (a few refunded), store sales through a reseller, and a free download.
  const PRICES: Record<string, number> = { synth: 14900, reverb: 7900, drums: 4900 };
  const DAY = 86_400_000;
  const orders = customers.slice(0, 120).map((c, i) => {
    const product = c.products[0]!;
    const viaStore = i % 10 === 3;
    const free = i % 25 === 7;
    const price = PRICES[product]!;
    const sale = free ? 0 : i % 6 === 0 ? Math.round(price * 0.8) : price;
    return {
      key: `o${i}`,
      workspace: 'demo',
      customer: c.key,
      channel: viaStore ? ('external_store' as const) : ('managed_checkout' as const),
      ...(viaStore ? { provider: 'plugin-store', reseller: 'store', externalReference: `PS-${10_000 + i}` } : { provider: i % 4 === 0 ? 'wallet-provider' : 'card-provider' }),
      purchasedAt: new Date(Date.UTC(2026, 10, 1) - i * 3 * DAY).toISOString(),
      items: [{ product, priceCents: price, salePriceCents: sale, ...(i % 17 === 5 && sale > 0 ? { refundedCents: sale } : {}) }],
    };
  });
  return {
    workspaces: [{ key: 'demo', name: 'Demo Audio', billingEligible: true, storefrontUrl: 'https://store.demo-audio.example' }],
    resellers: [{ key: 'store', workspace: 'demo', name: 'Plugin Store', kind: 'store' as const, developerShareBps: 7000 }],
    orders,
    accounts: [
      { key: 'owner', email: DEMO_OWNER_EMAIL, emailVerified: true },
      { key: 'support', email: 'support@demo.patchbay.test', emailVerified: true },
    ],
    products: [
      { key: 'synth', workspace: 'demo', name: 'Nebula Synth', maxActivations: 3, priceCents: 14900, currency: 'usd', storefrontUrl: 'https://store.demo-audio.example/nebula-synth' },
      { key: 'reverb', workspace: 'demo', name: 'Cathedral Reverb', maxActivations: 2, priceCents: 7900, currency: 'usd' },
      { key: 'drums', workspace: 'demo', name: 'Tape Drums', maxActivations: 5, priceCents: 4900, currency: 'usd', currentVersion: '1.2.0' },
    ],
    // One available serial per product, so a plugin can be connected from the first minute.
    serials: PRODUCTS.map((p) => ({ key: `demo-${p}`, workspace: 'demo', product: p })),
    versions: [
      { product: 'synth', version: '2.0.0', changelog: 'Wavetable engine, MPE.', releaseDate: '2026-06-01T00:00:00Z' },
      { product: 'synth', version: '2.1.0', changelog: 'Preset browser; CPU use down 30 %.', releaseDate: '2026-10-15T00:00:00Z', isCurrent: true },
      { product: 'reverb', version: '1.0.0', changelog: 'First release.', releaseDate: '2026-03-01T00:00:00Z' },
    ],
    files: [
      { product: 'synth', filename: 'NebulaSynth-2.1.0-mac.pkg', url: 'https://downloads.demo-audio.example/nebula/2.1.0/mac.pkg', platform: 'macos', type: 'installer', version: '2.1.0' },
      { product: 'synth', filename: 'NebulaSynth-2.1.0-win.exe', url: 'https://downloads.demo-audio.example/nebula/2.1.0/win.exe', platform: 'windows', type: 'installer', version: '2.1.0' },
    ],
    reviews: [
      { product: 'synth', rating: 5, title: 'Huge sound', body: 'The wavetables are wonderful.', customer: 'c0', verified: true },
      { product: 'synth', rating: 4, title: 'Great, a bit heavy on CPU', body: 'Better since 2.1.', customer: 'c3' },
      { product: 'synth', rating: 2, title: 'Crashes in my DAW', body: 'Pending support reply.', status: 'pending' as const, customerName: 'Anonymous' },
      { product: 'reverb', rating: 5, title: 'Lush', body: 'My go-to hall.', customer: 'c1' },
    ],
    memberships: [
      { account: 'owner', workspace: 'demo', owner: true, permissions: ['*'], products: 'all' as const },
      { account: 'support', workspace: 'demo', permissions: ['customers.view', 'purchases.view', 'products.view'], products: ['reverb'] },
    ],
    customers,
    tokens: [{ key: 'owner', account: 'owner', workspace: 'demo', ttlSeconds: 12 * 3600 }],
  };
}

export async function seedDemo(db: Db, jwt: JwtSettings): Promise<FixtureResult> {
  const existing = await db.selectFrom('accounts').where('email_normalized', '=', DEMO_OWNER_EMAIL).select('id').executeTakeFirst();
  if (existing) throw new FixtureError('The demo workspace already exists');
  return loadFixtures(db, jwt, demoDocument());
}

/** Each product of a workspace with its productAppId and one available serial: what a plugin needs to connect. */
export async function pluginConnectionHints(db: Db, workspaceId: number): Promise<Array<{ name: string; appId: string; serial: string | null }>> {
  const rows = await db
    .selectFrom('products as p')
    .where('p.workspace_id', '=', workspaceId)
    .select((eb) => [
      'p.name',
      'p.app_id',
      eb
        .selectFrom('serials as s')
        .whereRef('s.workspace_id', '=', 'p.workspace_id')
        .whereRef('s.product_id', '=', 'p.id')
        .where('s.status', '=', 'available')
        .select('s.code')
        .orderBy('s.id')
        .limit(1)
        .as('serial'),
    ])
    .orderBy('p.id')
    .execute();
  return rows.map((r) => ({ name: r.name, appId: r.app_id, serial: r.serial }));
}
