import { DEFAULT_PAGE_SIZE } from '../http/schemas.js';
import { DEEP_PAGE_OFFSET, type PageAnchorCache } from './page-anchors.js';

export interface PageQuery {
  page?: number | undefined;
  limit?: number | undefined;
}

export interface Page<R> {
  rows: R[];
  total: number;
  page: number;
  pageSize: number;
}

/** What a module provides for one list: its query, its count, and for the unfiltered list its maintained totals. */
export interface PagedSource<R, A> {
  /** True when the request lists the whole workspace (all products, no filter): deep pages may use anchors. */
  unfiltered: boolean;
  /** The unfiltered list's exact total and a version that changes whenever the list changes (maintained counters). */
  stats(): Promise<{ total: number; version: number }>;
  /** Every `every`-th sort key of the unfiltered list, newest first. */
  anchors(every: number): Promise<A[]>;
  /** One page: `atOrBefore` starts at a sort key found from the anchors. */
  rows(page: { limit: number; offset: number; atOrBefore?: A }): Promise<R[]>;
  /** The exact number of rows the filters match. */
  count(): Promise<number>;
}

export function pageWindow(query: PageQuery): { page: number; pageSize: number; offset: number } {
  const page = query.page ?? 1;
  const pageSize = query.limit ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

/**
 * The paged-list flow of every list: rows and exact total; deep pages (offset ≥ 10,000) of the
 * unfiltered list start from a cached sort key instead of walking the offset, so page 10,000
 * costs about what page 1 costs. Filtered lists use plain OFFSET over an index-only scan.
 */
export async function pagedList<R, A>(cache: PageAnchorCache<A>, workspaceId: number, query: PageQuery, source: PagedSource<R, A>): Promise<Page<R>> {
  const { page, pageSize, offset } = pageWindow(query);
  if (offset >= DEEP_PAGE_OFFSET && source.unfiltered) {
    const stats = await source.stats();
    const anchors = await cache.get(workspaceId, stats.version, () => source.anchors(cache.every));
    const start = cache.locate(anchors, offset);
    const rows = start ? await source.rows({ limit: pageSize, offset: start.skip, atOrBefore: start.atOrBefore }) : [];
    return { rows, total: stats.total, page, pageSize };
  }
  const [rows, total] = await Promise.all([source.rows({ limit: pageSize, offset }), source.count()]);
  return { rows, total, page, pageSize };
}
