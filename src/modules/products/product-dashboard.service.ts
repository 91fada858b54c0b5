import { hasPermission, type Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { ProductEnvironment } from '../../platform/db/schema.js';
import type { Executor } from '../../platform/db/transaction.js';
import { notFound } from '../../platform/http/errors.js';
import type { CredentialState, ProductCredentials } from './product-credentials.service.js';
import * as repo from './product-dashboard.repo.js';
import { PERFORMANCE_WINDOWS } from './product-dashboard.schemas.js';
import { toFileMetadata } from './product-files.service.js';
import { summaryOf, toReviewRecord } from './product-reviews.service.js';
import { versionsFrom } from './product-versions.service.js';
import type { ProductRecord } from './products.repo.js';
import { productRecordOrThrow, toProductRow } from './products.service.js';

/** A plugin that called within this long counts as connected; an API key used within it as active. */
const RECENT_MS = 7 * 86_400_000;
const ACTIVITY_LIMIT = 20;
const REVIEW_LIMIT = 10;

export interface PackageStatus {
  packageReady: boolean;
  lastGeneratedAt: Date | null;
  variants: string[];
  rotationOverlapSeconds: number;
}

/** What the packages module reports about a product's plugin package (the dashboard does not build packages). */
export interface PackageStatusSource {
  status(
    db: Executor,
    scope: Scope,
    productId: number,
    environment: ProductEnvironment,
  ): Promise<PackageStatus>;
  /** The same from the builds alone, for the key the caller already read (or created): one statement. */
  statusFor(db: Executor, scope: Scope, productId: number, environment: ProductEnvironment): Promise<(keyHash: string | null) => PackageStatus>;
}

export interface DashboardContext {
  db: Db;
  credentials: ProductCredentials;
  packages: PackageStatusSource;
  /** The API base URL plugins call (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
}

export function accessOf(scope: Scope) {
  return {
    analytics: hasPermission(scope, 'analytics.view'),
    reviews: hasPermission(scope, 'reviews.view'),
    files: hasPermission(scope, 'product_files.view'),
    credentials: hasPermission(scope, 'credentials.view'),
  };
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The restApi object (contract 2.9): the key only as a preview; the secret is never returned. */
export function restApiOf(ctx: DashboardContext, product: ProductRecord, environment: ProductEnvironment, state: CredentialState) {
  const lastRequest = state.credential?.last_request_at ?? null;
  const preview = state.key?.preview ?? null;
  return {
    status: state.rotationRequired ? 'rotation_required' : state.key ? 'ready' : 'missing',
    ready: state.key !== null && !state.rotationRequired,
    rotationRequired: state.rotationRequired,
    apiBaseUrl: `${ctx.publicBaseUrl}/api/licensing/v1`,
    productId: product.id,
    appId: state.credential?.app_id ?? null,
    productKey: preview,
    productKeyPreview: preview,
    environment,
    apiStatus: lastRequest === null ? 'never_used' : Date.now() - lastRequest.getTime() < RECENT_MS ? 'active' : 'idle',
    lastRequestAt: iso(lastRequest),
    created: state.created,
    secretReturned: false as const,
  };
}

/** The structured credential status of plugin-package/status (2.13). */
export function credentialStatusOf(state: CredentialState) {
  return {
    status: state.rotationRequired ? 'rotation_required' : state.key ? 'active' : 'missing',
    ready: state.key !== null && !state.rotationRequired,
    isActive: state.key?.status === 'active',
    appId: state.credential?.app_id ?? null,
    productKeyPreview: state.key?.preview ?? null,
    created: state.created,
    skipped: false,
    rotationRequired: state.rotationRequired,
  };
}

export function connectionStatusOf(state: CredentialState, environment: ProductEnvironment) {
  const last = state.credential?.last_plugin_connection_at ?? null;
  return {
    status: last === null ? 'never_connected' : Date.now() - last.getTime() < RECENT_MS ? 'connected' : 'idle',
    lastPluginConnectionAt: iso(last),
    environment,
  };
}

function performance(rows: repo.SalesWindowRow[], currency: string) {
  const today = new Date();
  const to = today.toISOString().slice(0, 10);
  return PERFORMANCE_WINDOWS.map((days) => {
    const mine = rows.find((r) => r.window === days && r.currency.trim() === currency);
    const others = rows.filter((r) => r.window === days && r.currency.trim() !== currency && r.orders + Number(r.refunds) > 0);
    const gross = BigInt(mine?.gross ?? '0');
    const refunds = BigInt(mine?.refunds ?? '0');
    return {
      window: `${days}d`,
      days,
      from: new Date(today.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10),
      to,
      currency,
      orders: mine?.orders ?? 0,
      units: mine?.units ?? 0,
      grossCents: Number(gross),
      refundsCents: Number(refunds),
      netCents: Number(gross - refunds),
      // Purchases in other currencies are not converted: they are named here and left out of the sums.
      otherCurrencies: others.map((o) => ({ currency: o.currency.trim(), orders: o.orders })),
    };
  });
}

interface Activity {
  kind: string;
  occurredAt: string;
  [field: string]: unknown;
}

/** The newest events of the product from every source, newest first: sales, refunds, serial actions and activations, catalogue changes. */
function recentActivity({ sales, refunds, serials, events }: NonNullable<repo.DashboardRead['analytics']>['activity']): Activity[] {
  const all: Array<Activity & { t: number }> = [
    ...sales.map((s) => ({
      kind: s.record_type === 'grant' || s.record_type === 'subscription' ? 'grant' : 'sale',
      t: s.at.getTime(),
      occurredAt: s.at.toISOString(),
      orderId: s.order_id,
      orderItemId: s.id,
      channel: s.channel,
      currency: s.currency.trim(),
      amountCents: s.sale_price_cents,
    })),
    ...refunds.map((r) => ({
      kind: 'refund',
      t: r.at.getTime(),
      occurredAt: r.at.toISOString(),
      orderId: r.order_id,
      orderItemId: r.id,
      currency: r.currency.trim(),
      refundedCents: r.refunded_cents,
      refundStatus: r.refund_status,
    })),
    ...serials.map((e) => ({
      kind: e.action.startsWith('runtime.') ? e.action.replace('runtime.', 'license.') : `serial.${e.action}`,
      t: e.at.getTime(),
      occurredAt: e.at.toISOString(),
      serialId: e.serial_id,
      actor: e.actor_type,
      status: e.after_status,
    })),
    ...events.map((e) => ({ kind: e.kind, t: e.at.getTime(), occurredAt: e.at.toISOString(), ...(e.data as Record<string, unknown>) })),
  ];
  return all
    .sort((a, b) => b.t - a.t)
    .slice(0, ACTIVITY_LIMIT)
    .map(({ t: _t, ...a }) => a);
}

type ItemState = 'done' | 'missing' | 'unknown';

/**
 * The product dashboard (contract 4.5). `access` comes from the caller's permissions, and a
 * section the caller may not read is never queried: its fields are null or empty.
 */
export async function productDashboard(ctx: DashboardContext, scope: Scope, productId: number, query: { currency: string; environment: ProductEnvironment }) {
  const { db } = ctx;
  const access = accessOf(scope);
  const currency = query.currency.toLowerCase();
  // One statement for the product and every section it may read; the package builds (another module's) alongside.
  const [read, packageStatusFor] = await Promise.all([
    repo.dashboardRead(db, scope, productId, access, { windows: PERFORMANCE_WINDOWS, activityLimit: ACTIVITY_LIMIT, reviewLimit: REVIEW_LIMIT, environment: query.environment }),
    access.credentials ? ctx.packages.statusFor(db, scope, productId, query.environment) : null,
  ]);
  if (!read) throw notFound('Product');
  const { product } = read;
  const versions = versionsFrom(read.versions, product);
  const workspaceUrl = read.workspaceStorefront;
  const files = read.files ?? [];
  const fileCount = read.files ? read.files.length : null;
  const ranges = read.analytics ? performance(read.analytics.sales, currency) : null;
  const kpis = read.analytics ? { customerCount: read.analytics.customers, orderCount: read.analytics.orders, downloadsTotal: Number(product.downloads_total) } : null;
  const activity = read.analytics ? recentActivity(read.analytics.activity) : [];
  const reviews = read.reviews ? read.reviews.latest.map(toReviewRecord) : [];
  const summary = read.reviews ? summaryOf(read.reviews.counts) : null;
  // With credentials access, missing credentials are provisioned (rule 5 and 7); never without it.
  const credential = access.credentials ? await ctx.credentials.ensure(db, scope, product, query.environment, read.credential ?? null) : null;
  const packageStatus = packageStatusFor && credential ? packageStatusFor(credential.key?.key_hash ?? null) : null;

  const current = versions.find((v) => v.isCurrent) ?? null;
  const ratingsVisible = access.analytics && access.reviews;
  const checklist: Array<{ key: string; label: string; state: ItemState; detail?: string }> = [
    { key: 'status_active', label: 'The product is active (on sale)', state: product.status === 'active' ? 'done' : 'missing', detail: product.status },
    { key: 'price_set', label: 'A price is set', state: product.price_cents > 0 ? 'done' : 'missing' },
    { key: 'current_version', label: 'A current version is named', state: current ? 'done' : 'missing' },
    { key: 'storefront_destination', label: 'A storefront URL (product or workspace)', state: product.storefront_url || workspaceUrl ? 'done' : 'missing' },
    { key: 'delivery_file', label: 'At least one delivery file', state: fileCount === null ? 'unknown' : fileCount > 0 ? 'done' : 'missing' },
    { key: 'credentials_ready', label: 'Product credentials are ready', state: credential === null ? 'unknown' : credential.key && !credential.rotationRequired ? 'done' : 'missing' },
    { key: 'package_generated', label: 'A plugin package was generated', state: packageStatus === null ? 'unknown' : packageStatus.lastGeneratedAt ? 'done' : 'missing' },
    { key: 'plugin_connected', label: 'A plugin has connected', state: credential === null ? 'unknown' : credential.credential?.last_plugin_connection_at ? 'done' : 'missing' },
  ];
  const known = checklist.filter((i) => i.state !== 'unknown');
  const missing = checklist.filter((i) => i.state === 'missing').map((i) => i.key);
  const storefrontDestination = product.storefront_url
    ? { url: product.storefront_url, kind: 'product' }
    : workspaceUrl
      ? { url: workspaceUrl, kind: 'workspace' }
      : { url: '', kind: 'none' };

  return {
    access,
    product: {
      ...toProductRow(product),
      ...(access.analytics && kpis ? { customerCount: kpis.customerCount, orderCount: kpis.orderCount, downloadsTotal: kpis.downloadsTotal } : {}),
      ...(access.files ? { fileCount } : {}),
    },
    health: {
      status: missing.length === 0 ? (known.length === checklist.length ? 'ready' : 'ready_as_far_as_visible') : 'incomplete',
      done: known.length - missing.length,
      checked: known.length,
      missing,
    },
    kpis: {
      customerCount: kpis?.customerCount ?? null,
      orderCount: kpis?.orderCount ?? null,
      downloadsTotal: kpis?.downloadsTotal ?? null,
      ratingAverage: ratingsVisible ? (summary?.averageRating ?? null) : null,
      ratingCount: ratingsVisible ? (summary?.ratingCount ?? null) : null,
    },
    performance: ranges
      ? { available: true, reason: null, currency, ranges }
      : { available: false, reason: 'permission_required', ranges: [] },
    reviewSummary: summary ? { available: true, ...summary } : { available: false, reason: 'permission_required' },
    readiness: { ready: missing.length === 0 && known.length === checklist.length, items: checklist },
    pluginPackage:
      packageStatus && credential
        ? {
            status: credential.rotationRequired ? 'rotation_required' : packageStatus.packageReady ? 'ready' : 'not_generated',
            packageReady: packageStatus.packageReady,
            lastGeneratedAt: iso(packageStatus.lastGeneratedAt),
            variants: packageStatus.variants,
            environment: query.environment,
          }
        : null,
    pluginConnectionStatus: credential ? connectionStatusOf(credential, query.environment) : null,
    restApi: credential ? restApiOf(ctx, product, query.environment, credential) : null,
    files: files.map(toFileMetadata),
    versions,
    reviews,
    recentActivity: activity,
    storefrontDestination,
  };
}

/** plugin-package/status (4.5): provisions missing credentials only for a caller who may see them. */
export async function packageReadiness(ctx: DashboardContext, scope: Scope, productId: number, environment: ProductEnvironment) {
  const product = await productRecordOrThrow(ctx.db, scope, productId);
  const seesCredentials = hasPermission(scope, 'credentials.view');
  const [credential, pkg] = await Promise.all([
    seesCredentials ? ctx.credentials.ensure(ctx.db, scope, product, environment) : Promise.resolve(null),
    ctx.packages.status(ctx.db, scope, productId, environment),
  ]);
  return {
    credentialStatus: credential ? credentialStatusOf(credential) : null,
    status: credential?.rotationRequired ? 'rotation_required' : pkg.packageReady ? 'ready' : 'not_generated',
    packageReady: pkg.packageReady,
    lastGeneratedAt: iso(pkg.lastGeneratedAt),
    lastPluginConnectionAt: credential ? iso(credential.credential?.last_plugin_connection_at) : null,
    supportedModes: ['validation-only', 'storefront-only', 'storefront-validation'],
    environment,
    rotationRequired: credential?.rotationRequired ?? false,
    rotationOverlapSeconds: pkg.rotationOverlapSeconds,
  };
}

/** rest-config (4.5): the restApi object, provisioning missing credentials. */
export async function restConfig(ctx: DashboardContext, scope: Scope, productId: number, environment: ProductEnvironment) {
  const product = await productRecordOrThrow(ctx.db, scope, productId);
  const credential = await ctx.credentials.ensure(ctx.db, scope, product, environment);
  return { restApi: restApiOf(ctx, product, environment, credential) };
}
