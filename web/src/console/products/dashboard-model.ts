import type { Dashboard } from './queries';

/**
 * The dashboard declares several sections as open objects (contract 2.8: "inner fields not
 * shown"); these readers give the fields the service documents (docs/api/products.md) a type
 * without trusting them blindly, so a field the API drops shows as missing instead of breaking
 * the page.
 */
const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});
const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const int = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export interface Range {
  window: string;
  days: number;
  currency: string;
  orders: number;
  units: number;
  grossCents: number;
  refundsCents: number;
  netCents: number;
  otherCurrencies: Array<{ currency: string; orders: number }>;
}

export function ranges(dashboard: Dashboard): Range[] {
  return dashboard.performance.ranges.map((r) => ({
    window: text(r.window),
    days: int(r.days),
    currency: text(r.currency),
    orders: int(r.orders),
    units: int(r.units),
    grossCents: int(r.grossCents),
    refundsCents: int(r.refundsCents),
    netCents: int(r.netCents),
    otherCurrencies: Array.isArray(r.otherCurrencies) ? r.otherCurrencies.map((o) => ({ currency: text(record(o).currency), orders: int(record(o).orders) })) : [],
  }));
}

export type ItemState = 'done' | 'missing' | 'unknown';
export interface ReadinessItem {
  key: string;
  label: string;
  state: ItemState;
  detail: string | null;
}

export function readiness(dashboard: Dashboard): { ready: boolean; items: ReadinessItem[] } {
  const r = record(dashboard.readiness);
  const items = Array.isArray(r.items) ? r.items : [];
  return {
    ready: r.ready === true,
    items: items.map((i) => {
      const item = record(i);
      const state = text(item.state);
      return {
        key: text(item.key),
        label: text(item.label, text(item.key)),
        state: state === 'done' || state === 'missing' ? state : 'unknown',
        detail: typeof item.detail === 'string' ? item.detail : null,
      };
    }),
  };
}

export function health(dashboard: Dashboard) {
  const h = record(dashboard.health);
  return { status: text(h.status, 'unknown'), done: int(h.done), checked: int(h.checked) };
}

export interface ReviewSummary {
  total: number;
  published: number;
  pending: number;
  hidden: number;
  averageRating: number | null;
  ratingCount: number;
  distribution: Array<{ stars: number; count: number }>;
}

/** Null when the caller may not read reviews (the summary says `available: false`). */
export function reviewSummary(dashboard: Dashboard): ReviewSummary | null {
  const s = record(dashboard.reviewSummary);
  if (s.available !== true) return null;
  const distribution = record(s.distribution);
  return {
    total: int(s.total),
    published: int(s.published),
    pending: int(s.pending),
    hidden: int(s.hidden),
    averageRating: numberOrNull(s.averageRating),
    ratingCount: int(s.ratingCount),
    distribution: [5, 4, 3, 2, 1].map((stars) => ({ stars, count: int(distribution[String(stars)]) })),
  };
}

export interface Activity {
  kind: string;
  occurredAt: string;
  fields: Record<string, unknown>;
}

export function activity(dashboard: Dashboard): Activity[] {
  return dashboard.recentActivity.map((a) => ({ kind: text(a.kind, 'event'), occurredAt: text(a.occurredAt), fields: a }));
}

export function pluginPackage(dashboard: Dashboard) {
  if (!dashboard.pluginPackage) return null;
  const p = record(dashboard.pluginPackage);
  return {
    status: text(p.status, 'unknown'),
    packageReady: p.packageReady === true,
    lastGeneratedAt: typeof p.lastGeneratedAt === 'string' ? p.lastGeneratedAt : null,
    variants: Array.isArray(p.variants) ? p.variants.map((v) => text(v)) : [],
  };
}

export function connection(dashboard: Dashboard) {
  if (!dashboard.pluginConnectionStatus) return null;
  const c = record(dashboard.pluginConnectionStatus);
  return { status: text(c.status, 'unknown'), lastPluginConnectionAt: typeof c.lastPluginConnectionAt === 'string' ? c.lastPluginConnectionAt : null };
}
