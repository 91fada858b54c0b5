import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { HttpLimits } from '../../src/platform/http/limits.js';
import type { PrivateStorage } from '../../src/platform/storage/storage.js';
import { afterAll, beforeAll, inject } from 'vitest';
import { type App, type AppOptions, buildApp } from '../../src/app.js';
import type { JwtSettings } from '../../src/platform/auth/jwt.js';
import { type MailTransport, MemoryTransport } from '../../src/platform/mail/transport.js';
import { migrate, openDatabase, type Database } from '../../src/platform/db/database.js';
import { type FixtureDocument, type FixtureResult, loadFixtures } from '../../src/operator/fixtures.js';

export const TEST_JWT: JwtSettings = {
  secret: 'test-secret-test-secret-test-secret-0123456789',
  issuer: 'patchbay',
  audience: 'patchbay-api',
  jwksUrl: undefined,
};

export const TEST_LICENSE_KEY = Buffer.alloc(32, 7);

export const onPostgres = Boolean(process.env.DATABASE_URL);

// Test files share one PostgreSQL database; each file works its own job queue (test/helpers/per-file.ts), so one
// file's runner never runs (and sends the e-mail of) another file's jobs.

export interface TestContext {
  app: App;
  database: Database;
}

/** A fresh app per test file: in-memory PGlite, or the PostgreSQL server named by DATABASE_URL. */
export async function buildTestApp(
  options: {
    rateLimit?: { perIp: number; perSerial: number; perSerialTotal?: number };
    mail?: { transport: MailTransport; outbox?: boolean };
    accounts?: AppOptions['accounts'];
    trustProxy?: AppOptions['trustProxy'];
    redis?: Redis;
    rateLimitNamespace?: string;
    httpLimits?: Partial<HttpLimits>;
    /** Another URL for the same test database (a fault-injecting proxy, say). */
    databaseUrl?: string;
    /** The embedded database in this directory instead of memory (shared with child processes, one at a time). */
    dataDir?: string;
    jobs?: { pollIntervalMs?: number; concurrency?: number; run?: boolean };
    onQuery?: (sql: string) => void;
    storage?: PrivateStorage;
    encryptionKey?: Buffer;
    corsOrigins?: string[];
    metricsToken?: string;
    imports?: { asyncThreshold?: number; leaseSeconds?: number };
    packages?: { buildSlots?: number; downloadsPerMinute?: number; minBuildMs?: number; liveRotationOverlapDays?: number };
    partners?: AppOptions['partners'];
    checkout?: AppOptions['checkout'];
    checkoutConnections?: AppOptions['checkoutConnections'];
    web?: AppOptions['web'];
    webhooks?: AppOptions['webhooks'];
    /** A logger to inspect what the service logs (default: none). */
    loggerInstance?: AppOptions['loggerInstance'];
  } = {},
): Promise<TestContext> {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  // In memory, the database starts as a copy of the run's migrated template (test/helpers/global-setup.ts); the
  // migrate below then finds nothing to do. Without the template (on PostgreSQL, in a directory) it migrates.
  const template = databaseUrl || options.dataDir ? null : inject('pgliteTemplate');
  const database = await openDatabase({
    databaseUrl,
    dataDir: options.dataDir ?? null,
    ...(template ? { template } : {}),
    poolSize: 10,
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
  });
  await migrate(database.db);
  const app = await buildApp({
    database,
    jwt: TEST_JWT,
    licensing: {
      encryptionKey: options.encryptionKey ?? TEST_LICENSE_KEY,
      connectionFlushMs: 100,
      rateLimit: { perIp: 1_000_000, perSerial: 1_000_000, perSerialTotal: 1_000_000, ...options.rateLimit },
    },
    redis: options.redis,
    ...(options.httpLimits ? { httpLimits: options.httpLimits } : {}),
    ...(options.rateLimitNamespace ? { rateLimitNamespace: options.rateLimitNamespace } : {}),
    mail: { transport: options.mail?.transport ?? new MemoryTransport(), ...(options.mail?.outbox ? { outbox: true } : {}) },
    ...(options.accounts ? { accounts: options.accounts } : {}),
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    jobs: { pollIntervalMs: 200, ...options.jobs },
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    // Imports stay synchronous up to the row limit unless a test asks for the job path.
    imports: { asyncThreshold: 100_000, ...options.imports },
    publicBaseUrl: 'http://patchbay.test',
    ...(options.storage ? { storage: options.storage } : {}),
    ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
    ...(options.packages ? { packages: options.packages } : {}),
    ...(options.partners ? { partners: options.partners } : {}),
    ...(options.checkout ? { checkout: options.checkout } : {}),
    ...(options.checkoutConnections ? { checkoutConnections: options.checkoutConnections } : {}),
    ...(options.web ? { web: options.web } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : {}),
  });
  await app.ready();
  return { app, database };
}

/** Registers beforeAll/afterAll and returns a getter for the context. */
export function useTestApp(options: Parameters<typeof buildTestApp>[0] = {}): () => TestContext {
  let ctx: TestContext | undefined;
  beforeAll(async () => {
    ctx = await buildTestApp(options);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.database.close();
  });
  return () => {
    if (!ctx) throw new Error('test app not ready');
    return ctx;
  };
}

export const unique = () => randomUUID().slice(0, 8);

export interface SeededWorkspace extends FixtureResult {
  workspaceId: number;
  suffix: string;
  /** Token of the owner (all permissions, all products). */
  owner: string;
}

/**
 * Creates an isolated workspace: owner, products `p1`,`p2`,`p3`, and the extra
 * members, customers and tokens given. Emails and names are made unique so
 * tests never collide, on PGlite or on a shared PostgreSQL database.
 */
export async function seedWorkspace(
  ctx: TestContext,
  extra: {
    billingEligible?: boolean;
    members?: Array<{ key: string; permissions: string[]; products: 'all' | string[] }>;
    customers?: Array<{ key?: string; email?: string; firstName?: string; lastName?: string; products?: string[]; marketingConsent?: boolean }>;
    /** Serials of products p1..p3; `customer` and `order` name keys of this workspace. */
    serials?: Array<{ key: string; product: string; code?: string; customer?: string; order?: string; maxActivations?: number; expiresAt?: string; activeFrom?: string; activeTo?: string }>;
    /** Orders (managed checkout by default) with optional items; `customer`, `reseller`, `items[].product` and `items[].serial` name keys. */
    orders?: Array<Omit<NonNullable<FixtureDocument['orders']>[number], 'workspace'>>;
    resellers?: Array<{ key: string; name: string; kind?: 'store' | 'distributor' | 'marketplace' | 'bundle'; developerShareBps?: number | null }>;
    productSettings?: { maxActivations?: number; offlineGraceDays?: number };
    /** Delivery files hosted elsewhere (fixtures register external files). */
    files?: Array<{ key: string; product: string; filename: string; url: string }>;
    /** Partner agreements in any state (fixtures' `programs`, workspace filled in). */
    programs?: Array<Omit<NonNullable<FixtureDocument['programs']>[number], 'workspace'>>;
    partnerProgramsEnabled?: boolean;
    /** The buyers' portal of the workspace: its slug and switch (fixtures' `slug`, `customerPortalEnabled`). */
    slug?: string;
    customerPortalEnabled?: boolean;
  } = {},
): Promise<SeededWorkspace> {
  const s = unique();
  const members = extra.members ?? [];
  const result = await loadFixtures(ctx.database.db, TEST_JWT, {
    workspaces: [
      {
        key: 'ws',
        name: `Workspace ${s}`,
        billingEligible: extra.billingEligible ?? true,
        ...(extra.partnerProgramsEnabled === false ? { partnerProgramsEnabled: false } : {}),
        ...(extra.slug === undefined ? {} : { slug: extra.slug }),
        ...(extra.customerPortalEnabled === undefined ? {} : { customerPortalEnabled: extra.customerPortalEnabled }),
      },
    ],
    accounts: [
      { key: 'owner', email: `owner-${s}@dev.test`, emailVerified: true },
      ...members.map((m) => ({ key: m.key, email: `${m.key}-${s}@dev.test`, emailVerified: true })),
    ],
    products: ['p1', 'p2', 'p3'].map((key) => ({
      key,
      workspace: 'ws',
      name: `Product ${key} ${s}`,
      maxActivations: extra.productSettings?.maxActivations ?? 2,
      priceCents: 4900,
      ...(extra.productSettings?.offlineGraceDays === undefined ? {} : { offlineGraceDays: extra.productSettings.offlineGraceDays }),
    })),
    memberships: [
      { account: 'owner', workspace: 'ws', owner: true, permissions: ['*'], products: 'all' },
      ...members.map((m) => ({ account: m.key, workspace: 'ws', permissions: m.permissions, products: m.products })),
    ],
    customers: (extra.customers ?? []).map((c, i) => ({
      key: c.key,
      workspace: 'ws',
      email: c.email ?? `c${i}-${s}@cust.test`,
      firstName: c.firstName,
      lastName: c.lastName,
      products: c.products,
      marketingConsent: c.marketingConsent,
    })),
    resellers: (extra.resellers ?? []).map((r) => ({ ...r, workspace: 'ws' })),
    orders: (extra.orders ?? []).map((o) => ({ ...o, workspace: 'ws' })),
    serials: (extra.serials ?? []).map((x) => ({ ...x, workspace: 'ws' })),
    files: extra.files ?? [],
    programs: (extra.programs ?? []).map((p) => ({ owner: 'owner', ...p, workspace: 'ws' })),
    tokens: [
      { key: 'owner', account: 'owner', workspace: 'ws' },
      ...members.map((m) => ({ key: m.key, account: m.key, workspace: 'ws' })),
    ],
  });
  return { ...result, workspaceId: result.ids.workspaces.ws!, suffix: s, owner: result.tokens.owner! };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The global account behind a customer_id (a relationship id), for tests that look at raw rows. */
export async function accountIdOf(ctx: TestContext, customerId: number): Promise<number> {
  const row = await ctx.database.db.selectFrom('developer_customers').where('id', '=', customerId).select('account_id').executeTakeFirstOrThrow();
  return row.account_id;
}
