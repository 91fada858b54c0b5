import type { JwtSettings } from '../platform/auth/jwt.js';
import type { Db } from '../platform/db/database.js';
import { FixtureError, type FixtureResult, loadFixtures } from './fixtures.js';

export const DEMO_OWNER_EMAIL = 'owner@demo.patchbay.test';

const FIRST = ['Ann', 'Ben', 'Chloe', 'Dev', 'Eli', 'Fay', 'Gus', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lena', 'Milo', 'Nia', 'Omar', 'Pia'];
const LAST = ['Lee', 'Ortiz', 'Nakamura', 'Smith', 'Okafor', 'Berg', 'Rossi', 'Dubois', 'Kowalski', 'Haddad', 'Silva', 'Novak'];
const PRODUCTS = ['synth', 'reverb', 'drums'];

/** A demo workspace: an owner, a product-scoped teammate, three products and 300 customers. */
export function demoDocument() {
  const customers = Array.from({ length: 300 }, (_, i) => {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    return {
      workspace: 'demo',
      email: `${first}.${last}.${i}@customers.example`.toLowerCase(),
      firstName: first,
      lastName: last,
      products: [PRODUCTS[i % 3]!, ...(i % 5 === 0 ? [PRODUCTS[(i + 1) % 3]!] : [])],
      marketingConsent: i % 4 === 0,
    };
  });
  return {
    workspaces: [{ key: 'demo', name: 'Demo Audio', billingEligible: true }],
    accounts: [
      { key: 'owner', email: DEMO_OWNER_EMAIL, emailVerified: true },
      { key: 'support', email: 'support@demo.patchbay.test', emailVerified: true },
    ],
    products: [
      { key: 'synth', workspace: 'demo', name: 'Nebula Synth', maxActivations: 3, priceCents: 14900, currency: 'usd' },
      { key: 'reverb', workspace: 'demo', name: 'Cathedral Reverb', maxActivations: 2, priceCents: 7900, currency: 'usd' },
      { key: 'drums', workspace: 'demo', name: 'Tape Drums', maxActivations: 5, priceCents: 4900, currency: 'usd' },
    ],
    memberships: [
      { account: 'owner', workspace: 'demo', owner: true, permissions: ['*'], products: 'all' as const },
      { account: 'support', workspace: 'demo', permissions: ['customers.view', 'products.view'], products: ['reverb'] },
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
