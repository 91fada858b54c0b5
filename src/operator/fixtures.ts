import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { isPermission, WILDCARD } from '../platform/auth/permissions.js';
import { operatorScope } from '../platform/auth/scope.js';
import { signAccessToken, type JwtSettings } from '../platform/auth/jwt.js';
import type { Db } from '../platform/db/database.js';
import { inTransaction } from '../platform/db/transaction.js';
import { importCustomers } from '../modules/customers/index.js';
import { createProduct, createVersion, importReviews, registerExternalFile } from '../modules/products/index.js';
import { seedAgreement } from '../modules/partners/index.js';
import type { AgreementStatus } from '../platform/db/schema.js';
import * as workspaces from '../modules/workspaces/index.js';
import { refuseDuplicateWorkspaceNames } from './provision.js';
import { setPortalSettings, SLUG_PATTERN } from '../modules/customer-portal/index.js';
import { CHANNELS, PURCHASE_STATUSES, RECORD_TYPES, recordOrderItems } from '../modules/purchases/index.js';
import { allocateSale, reverseRefund } from '../modules/ledger/index.js';
import { registerTypeboxFormats } from '../platform/http/typebox-formats.js';

registerTypeboxFormats();

const Key = Type.String({ minLength: 1, maxLength: 100 });

export const FixtureDocument = Type.Object(
  {
    workspaces: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            name: Type.String({ minLength: 1 }),
            billingEligible: Type.Optional(Type.Boolean()),
            storefrontUrl: Type.Optional(Type.String({ format: 'uri' })),
            partnerProgramsEnabled: Type.Optional(Type.Boolean()),
            /** The buyers' portal: its public slug (`/portal/<slug>`) and whether buyers can sign in (default on). */
            slug: Type.Optional(Type.String({ maxLength: 63, pattern: SLUG_PATTERN })),
            customerPortalEnabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    accounts: Type.Optional(
      Type.Array(Type.Object({ key: Key, email: Type.String({ format: 'email' }), emailVerified: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    ),
    memberships: Type.Optional(
      Type.Array(
        Type.Object(
          {
            account: Key,
            workspace: Key,
            owner: Type.Optional(Type.Boolean()),
            permissions: Type.Optional(Type.Array(Type.String())),
            products: Type.Optional(Type.Union([Type.Literal('all'), Type.Array(Key)])),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    products: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            workspace: Key,
            name: Type.String({ minLength: 1 }),
            maxActivations: Type.Optional(Type.Integer({ minimum: 0 })),
            priceCents: Type.Optional(Type.Integer({ minimum: 0 })),
            currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
            offlineGraceDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
            status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')])),
            storefrontUrl: Type.Optional(Type.String({ format: 'uri' })),
            currentVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    customers: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.Optional(Key),
            workspace: Key,
            email: Type.String(),
            firstName: Type.Optional(Type.String()),
            lastName: Type.Optional(Type.String()),
            products: Type.Optional(Type.Array(Key)),
            marketingConsent: Type.Optional(Type.Boolean()),
            emailVerified: Type.Optional(Type.Boolean({ description: 'The address was verified for this workspace' })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    resellers: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            workspace: Key,
            name: Type.String({ minLength: 1 }),
            kind: Type.Optional(Type.Union(['store', 'distributor', 'marketplace', 'bundle'].map((k) => Type.Literal(k)))),
            developerShareBps: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10000 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    orders: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            workspace: Key,
            customer: Key,
            reference: Type.Optional(Type.String()),
            status: Type.Optional(Type.Union(PURCHASE_STATUSES.map((v) => Type.Literal(v)))),
            totalCents: Type.Optional(Type.Integer({ minimum: 0 })),
            currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
            channel: Type.Optional(Type.Union(CHANNELS.map((v) => Type.Literal(v)))),
            provider: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,49}$' })),
            reseller: Type.Optional(Key),
            externalReference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            purchasedAt: Type.Optional(Type.String({ format: 'date-time' })),
            /** Order items; each also records the customer's entitlement. */
            items: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    product: Key,
                    priceCents: Type.Optional(Type.Integer({ minimum: 0 })),
                    salePriceCents: Type.Optional(Type.Integer({ minimum: 0 })),
                    refundedCents: Type.Optional(Type.Integer({ minimum: 0 })),
                    refundedAt: Type.Optional(Type.String({ format: 'date-time' })),
                    recordType: Type.Optional(Type.Union(RECORD_TYPES.map((v) => Type.Literal(v)))),
                    serial: Type.Optional(Key),
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    serials: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            workspace: Key,
            product: Key,
            code: Type.Optional(Type.String({ minLength: 4, maxLength: 64 })),
            customer: Type.Optional(Key),
            order: Type.Optional(Key),
            maxActivations: Type.Optional(Type.Integer({ minimum: 0 })),
            expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
            activeFrom: Type.Optional(Type.String({ format: 'date-time' })),
            activeTo: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    versions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            product: Key,
            version: Type.String({ minLength: 1, maxLength: 50 }),
            changelog: Type.Optional(Type.String()),
            releaseDate: Type.Optional(Type.String({ format: 'date-time' })),
            isCurrent: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    files: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.Optional(Key),
            product: Key,
            filename: Type.String({ minLength: 1, maxLength: 255 }),
            url: Type.String({ format: 'uri', description: 'Fixtures register files hosted elsewhere; uploads go through the API' }),
            platform: Type.Optional(Type.String()),
            type: Type.Optional(Type.String()),
            version: Type.Optional(Type.String()),
            sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    reviews: Type.Optional(
      Type.Array(
        Type.Object(
          {
            product: Key,
            rating: Type.Integer({ minimum: 1, maximum: 5 }),
            title: Type.Optional(Type.String()),
            body: Type.Optional(Type.String()),
            status: Type.Optional(Type.Union([Type.Literal('published'), Type.Literal('pending'), Type.Literal('hidden')])),
            customer: Type.Optional(Key),
            customerName: Type.Optional(Type.String()),
            customerEmail: Type.Optional(Type.String({ format: 'email' })),
            verified: Type.Optional(Type.Boolean()),
            createdAt: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    programs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            workspace: Key,
            kind: Type.Union([Type.Literal('affiliate'), Type.Literal('collaborator')]),
            name: Type.String({ minLength: 1 }),
            recipientEmail: Type.String({ format: 'email' }),
            rateBps: Type.Integer({ minimum: 0, maximum: 10_000 }),
            productRates: Type.Optional(Type.Array(Type.Object({ product: Key, rateBps: Type.Integer({ minimum: 0, maximum: 10_000 }) }, { additionalProperties: false }))),
            attributionWindowDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
            includeResellerSales: Type.Optional(Type.Boolean()),
            status: Type.Optional(Type.Union(['pending', 'accepted', 'active', 'paused', 'ended'].map((s) => Type.Literal(s)))),
            consents: Type.Optional(Type.Array(Type.Union([Type.Literal('developer'), Type.Literal('recipient')]))),
            owner: Type.Optional(Key),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    tokens: Type.Optional(
      Type.Array(
        Type.Object(
          { key: Key, account: Key, workspace: Key, ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 86_400 })) },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type FixtureDocument = Static<typeof FixtureDocument>;

export interface FixtureResult {
  ids: {
    workspaces: Record<string, number>;
    accounts: Record<string, number>;
    products: Record<string, number>;
    customers: Record<string, number>;
    /** Reseller relationship id per reseller key. */
    resellers: Record<string, number>;
    /** Reseller id (as in the resellers lists and the purchases `resellerId` filter) per reseller key. */
    resellerIds: Record<string, number>;
    orders: Record<string, number>;
    /** Order item ids per order key, in the order given. */
    orderItems: Record<string, number[]>;
    serials: Record<string, number>;
    /** Agreement id per program key. */
    programs: Record<string, number>;
    /** File id per file key. */
    files: Record<string, string>;
  };
  /** productAppId per product key: what a plugin sends to the licensing runtime. */
  appIds: Record<string, string>;
  /** Serial code per serial key. */
  serialCodes: Record<string, string>;
  tokens: Record<string, string>;
}

export class FixtureError extends Error {}

function lookup(map: Record<string, number>, kind: string, key: string): number {
  const id = map[key];
  if (id === undefined) throw new FixtureError(`Unknown ${kind} key "${key}"`);
  return id;
}

export interface FixtureOptions {
  /** Create workspaces whose name another workspace already has (refused by default). */
  allowDuplicateWorkspaces?: boolean;
}

export async function loadFixtures(db: Db, jwt: JwtSettings, input: unknown, options: FixtureOptions = {}): Promise<FixtureResult> {
  if (!Value.Check(FixtureDocument, input)) {
    const problems = [...Value.Errors(FixtureDocument, input)].slice(0, 10).map((e) => `${e.path || '/'}: ${e.message}`);
    throw new FixtureError(`Invalid fixture document:\n  ${problems.join('\n  ')}`);
  }
  const doc = input;
  for (const m of doc.memberships ?? []) {
    for (const p of m.permissions ?? []) {
      if (p !== WILDCARD && !isPermission(p)) throw new FixtureError(`Unknown permission "${p}"`);
    }
  }
  if ((doc.tokens?.length ?? 0) > 0 && !jwt.secret) throw new FixtureError('Tokens need JWT_SECRET (tokens from JWKS_URL are issued by the identity provider)');

  const ids: FixtureResult['ids'] = { workspaces: {}, accounts: {}, products: {}, customers: {}, resellers: {}, resellerIds: {}, orders: {}, orderItems: {}, serials: {}, files: {}, programs: {} };
  const workspaceOfProduct = new Map<number, number>();
  const appIds: Record<string, string> = {};
  const serialCodes: Record<string, string> = {};
  await inTransaction(db, async (tx) => {
    if (!options.allowDuplicateWorkspaces) await refuseDuplicateWorkspaceNames(tx, (doc.workspaces ?? []).map((w) => w.name));
    for (const w of doc.workspaces ?? []) {
      ids.workspaces[w.key] = await workspaces.createWorkspace(tx, { name: w.name, billingEligible: w.billingEligible ?? false, storefrontUrl: w.storefrontUrl ?? null });
      if (w.partnerProgramsEnabled === false) {
        await tx.updateTable('workspaces').set({ partner_programs_enabled: false }).where('id', '=', ids.workspaces[w.key]!).execute();
      }
      if (w.slug !== undefined || w.customerPortalEnabled !== undefined) {
        await setPortalSettings(tx, ids.workspaces[w.key]!, { ...(w.slug === undefined ? {} : { slug: w.slug }), ...(w.customerPortalEnabled === undefined ? {} : { enabled: w.customerPortalEnabled }) });
      }
    }
    for (const a of doc.accounts ?? []) {
      ids.accounts[a.key] = await workspaces.upsertAccount(tx, { email: a.email, emailVerified: a.emailVerified ?? false });
    }
    for (const p of doc.products ?? []) {
      const product = await createProduct(tx, operatorScope(lookup(ids.workspaces, 'workspace', p.workspace), 0), {
        name: p.name,
        status: p.status ?? 'active',
        maxActivations: p.maxActivations ?? 3,
        priceCents: p.priceCents ?? 0,
        currency: p.currency ?? 'usd',
        ...(p.offlineGraceDays === undefined ? {} : { offlineGraceDays: p.offlineGraceDays }),
        ...(p.storefrontUrl === undefined ? {} : { storefrontUrl: p.storefrontUrl }),
        ...(p.currentVersion === undefined ? {} : { currentVersion: p.currentVersion }),
        ...(p.description === undefined ? {} : { description: p.description }),
      });
      ids.products[p.key] = product.id;
      appIds[p.key] = product.app_id;
      workspaceOfProduct.set(product.id, lookup(ids.workspaces, 'workspace', p.workspace));
    }
    for (const m of doc.memberships ?? []) {
      const products = m.products ?? (m.owner ? 'all' : []);
      await workspaces.addMembership(tx, {
        workspaceId: lookup(ids.workspaces, 'workspace', m.workspace),
        accountId: lookup(ids.accounts, 'account', m.account),
        owner: m.owner ?? false,
        permissions: m.permissions ?? [],
        productIds: products === 'all' ? 'all' : products.map((k) => lookup(ids.products, 'product', k)),
      });
    }
    // Customers go through the import use case so fixtures obey the same rules.
    const byWorkspace = new Map<string, NonNullable<FixtureDocument['customers']>>();
    const customerAccounts: Record<string, number> = {};
    for (const c of doc.customers ?? []) byWorkspace.set(c.workspace, [...(byWorkspace.get(c.workspace) ?? []), c]);
    for (const [key, customers] of byWorkspace) {
      const workspaceId = lookup(ids.workspaces, 'workspace', key);
      const scope = operatorScope(workspaceId, 0);
      const rows = customers.flatMap((c) => {
        const products = c.products?.length ? c.products : [null];
        return products.map((p) => ({
          email: c.email,
          firstname: c.firstName,
          lastname: c.lastName,
          productid: p === null ? undefined : lookup(ids.products, 'product', p),
          marketingconsent: c.marketingConsent,
        }));
      });
      const outcome = await importCustomers(tx, scope, { rows, productMappings: undefined, source: 'json' });
      if (outcome.body.errors.length > 0) throw new FixtureError(`Invalid customers: ${JSON.stringify(outcome.body.errors.slice(0, 5))}`);
      const found = await tx
        .selectFrom('developer_customers')
        .where('workspace_id', '=', workspaceId)
        .where('email', 'in', customers.map((c) => c.email.trim()))
        .select(['id', 'email', 'account_id'])
        .execute();
      const byEmail = new Map(found.map((f) => [f.email.toLowerCase(), f]));
      const verified = customers.filter((c) => c.emailVerified).map((c) => byEmail.get(c.email.trim().toLowerCase())!.id);
      if (verified.length > 0) {
        await tx.updateTable('developer_customers').set({ email_verified: true }).where('workspace_id', '=', workspaceId).where('id', 'in', verified).execute();
      }
      for (const c of customers) {
        if (!c.key) continue;
        const row = byEmail.get(c.email.trim().toLowerCase())!;
        // The output names the relationship (the customer_id answers show); rows are wired by account.
        ids.customers[c.key] = row.id;
        customerAccounts[c.key] = row.account_id;
      }
    }

    for (const r of doc.resellers ?? []) {
      const created = await workspaces.createResellerRelationship(tx, {
        workspaceId: lookup(ids.workspaces, 'workspace', r.workspace),
        name: r.name,
        kind: r.kind ?? 'store',
        developerShareBps: r.developerShareBps ?? null,
      });
      ids.resellers[r.key] = created.relationshipId;
      ids.resellerIds[r.key] = created.resellerId;
    }
    const orderFacts = new Map<string, { channel: (typeof CHANNELS)[number]; provider: string; purchasedAt: Date }>();
    for (const o of doc.orders ?? []) {
      const channel = o.channel ?? 'managed_checkout';
      const facts = {
        channel,
        provider: o.provider ?? (channel === 'manual_grant' ? 'manual' : channel === 'managed_checkout' ? 'card-provider' : 'external'),
        purchasedAt: o.purchasedAt ? new Date(o.purchasedAt) : new Date(),
      };
      orderFacts.set(o.key, facts);
      const products = new Set<string>();
      for (const item of o.items ?? []) {
        if (products.has(item.product)) throw new FixtureError(`Order "${o.key}" lists product "${item.product}" twice`);
        products.add(item.product);
        if ((item.refundedCents ?? 0) > (item.salePriceCents ?? item.priceCents ?? 0)) throw new FixtureError(`Order "${o.key}": refundedCents exceeds salePriceCents`);
      }
      ids.orders[o.key] = await workspaces.createOrder(tx, {
        workspaceId: lookup(ids.workspaces, 'workspace', o.workspace),
        customerId: lookup(customerAccounts, 'customer', o.customer),
        reference: o.reference ?? `ORD-${o.key}`,
        status: o.status ?? 'paid',
        totalCents: o.totalCents ?? (o.items ?? []).reduce((sum, i) => sum + (i.salePriceCents ?? i.priceCents ?? 0), 0),
        currency: o.currency ?? 'usd',
        channel: facts.channel,
        provider: facts.provider,
        resellerId: o.reseller ? lookup(ids.resellerIds, 'reseller', o.reseller) : null,
        externalReference: o.externalReference ?? null,
        purchasedAt: facts.purchasedAt,
      });
    }
    for (const s of doc.serials ?? []) {
      const created = await workspaces.createSerial(tx, {
        workspaceId: lookup(ids.workspaces, 'workspace', s.workspace),
        productId: lookup(ids.products, 'product', s.product),
        code: s.code,
        customerId: s.customer ? lookup(customerAccounts, 'customer', s.customer) : null,
        orderId: s.order ? lookup(ids.orders, 'order', s.order) : null,
        maxActivations: s.maxActivations,
        expiresAt: s.expiresAt ?? null,
        activeFrom: s.activeFrom ?? null,
        activeTo: s.activeTo ?? null,
      });
      ids.serials[s.key] = created.id;
      serialCodes[s.key] = created.code;
    }
    // Items after serials, so an item can name the serial it was sold with.
    for (const o of doc.orders ?? []) {
      if (!o.items?.length) continue;
      const workspaceId = lookup(ids.workspaces, 'workspace', o.workspace);
      const facts = orderFacts.get(o.key)!;
      ids.orderItems[o.key] = await recordOrderItems(
        tx,
        operatorScope(workspaceId, 0),
        {
          orderId: ids.orders[o.key]!,
          customerId: lookup(customerAccounts, 'customer', o.customer),
          channel: facts.channel,
          provider: facts.provider,
          resellerId: o.reseller ? lookup(ids.resellerIds, 'reseller', o.reseller) : null,
          status: o.status ?? 'paid',
          currency: (o.currency ?? 'usd').toLowerCase(),
          purchasedAt: facts.purchasedAt,
          externalReference: o.externalReference ?? null,
        },
        o.items.map((i) => ({
          productId: lookup(ids.products, 'product', i.product),
          priceCents: i.priceCents ?? i.salePriceCents ?? 0,
          salePriceCents: i.salePriceCents ?? i.priceCents ?? 0,
          refundedCents: i.refundedCents ?? 0,
          refundedAt: i.refundedCents ? (i.refundedAt ? new Date(i.refundedAt) : facts.purchasedAt) : null,
          recordType: i.recordType,
          serialId: i.serial ? lookup(ids.serials, 'serial', i.serial) : null,
        })),
      );
    }
    // Catalogue content through the same use cases as the API.
    const productScope = (productKey: string) => {
      const productId = lookup(ids.products, 'product', productKey);
      return { productId, scope: operatorScope(workspaceOfProduct.get(productId)!, 0) };
    };
    for (const v of doc.versions ?? []) {
      const { productId, scope } = productScope(v.product);
      await createVersion(tx, scope, productId, {
        version: v.version,
        ...(v.changelog === undefined ? {} : { changelog: v.changelog }),
        ...(v.releaseDate === undefined ? {} : { releaseDate: v.releaseDate }),
        ...(v.isCurrent === undefined ? {} : { isCurrent: v.isCurrent }),
      });
    }
    for (const f of doc.files ?? []) {
      const { productId, scope } = productScope(f.product);
      const file = await registerExternalFile(tx, scope, productId, {
        filename: f.filename,
        url: f.url,
        ...(f.platform === undefined ? {} : { platform: f.platform }),
        ...(f.type === undefined ? {} : { type: f.type }),
        ...(f.version === undefined ? {} : { version: f.version }),
        ...(f.sizeBytes === undefined ? {} : { sizeBytes: f.sizeBytes }),
      });
      if (f.key) ids.files[f.key] = file.id;
    }
    const reviewsByProduct = new Map<string, NonNullable<FixtureDocument['reviews']>>();
    for (const r of doc.reviews ?? []) reviewsByProduct.set(r.product, [...(reviewsByProduct.get(r.product) ?? []), r]);
    for (const [productKey, reviews] of reviewsByProduct) {
      const { productId, scope } = productScope(productKey);
      const emailOf = (customerKey: string) => doc.customers?.find((c) => c.key === customerKey)?.email;
      await importReviews(tx, scope, productId, {
        reviews: reviews.map((r) => ({
          rating: r.rating,
          ...(r.title === undefined ? {} : { title: r.title }),
          ...(r.body === undefined ? {} : { body: r.body }),
          ...(r.status === undefined ? {} : { status: r.status }),
          ...(r.customerName === undefined ? {} : { customerName: r.customerName }),
          ...((r.customerEmail ?? (r.customer ? emailOf(r.customer) : undefined)) === undefined
            ? {}
            : { customerEmail: r.customerEmail ?? emailOf(r.customer!) }),
          ...(r.verified === undefined ? {} : { verified: r.verified }),
          ...(r.createdAt === undefined ? {} : { createdAt: r.createdAt }),
        })),
      });
    }
    for (const p of doc.programs ?? []) {
      const workspaceId = lookup(ids.workspaces, 'workspace', p.workspace);
      ids.programs[p.key] = await seedAgreement(tx, operatorScope(workspaceId, p.owner ? lookup(ids.accounts, 'account', p.owner) : 0), {
        kind: p.kind,
        name: p.name,
        recipientEmail: p.recipientEmail,
        rateBps: p.rateBps,
        productRates: (p.productRates ?? []).map((r) => ({ product_id: lookup(ids.products, 'product', r.product), rate_bps: r.rateBps })),
        attributionWindowDays: p.attributionWindowDays,
        includeResellerSales: p.includeResellerSales,
        status: (p.status ?? 'pending') as AgreementStatus,
        consents: p.consents ?? [],
      });
    }
    // Sales with money get their partner allocation (and refunds their reversal) through the ledger's own code.
    for (const o of doc.orders ?? []) {
      const itemIds = ids.orderItems[o.key];
      const facts = orderFacts.get(o.key)!;
      if (!itemIds || facts.channel === 'manual_grant') continue;
      const workspaceId = lookup(ids.workspaces, 'workspace', o.workspace);
      for (const [i, item] of (o.items ?? []).entries()) {
        const paid = BigInt(item.salePriceCents ?? item.priceCents ?? 0);
        if (paid === 0n || itemIds[i] === undefined) continue;
        const allocation = await allocateSale(tx, workspaceId, {
          orderItemId: itemIds[i]!,
          productId: lookup(ids.products, 'product', item.product),
          currency: (o.currency ?? 'usd').toLowerCase(),
          subtotal: paid,
          discount: 0n,
          basis: facts.channel === 'managed_checkout' ? 'managed' : 'external',
          platformFee: 0n,
          processingFee: 0n,
          soldAt: facts.purchasedAt,
          referral: null,
        });
        if (allocation !== null && (item.refundedCents ?? 0) > 0) await reverseRefund(tx, workspaceId, itemIds[i]!, BigInt(item.refundedCents!));
      }
    }
  });

  const tokens: Record<string, string> = {};
  for (const t of doc.tokens ?? []) {
    tokens[t.key] = await signAccessToken(
      { secret: jwt.secret!, issuer: jwt.issuer, audience: jwt.audience },
      { accountId: lookup(ids.accounts, 'account', t.account), workspaceId: lookup(ids.workspaces, 'workspace', t.workspace), ttlSeconds: t.ttlSeconds ?? 3600 },
    );
  }
  return { ids, appIds, serialCodes, tokens };
}
