import { DEFAULT_PAGE_SIZE } from '../http/schemas.js';
import { type Anchors, DEEP_PAGE_OFFSET, type PageAnchorCache } from './page-anchors.js';

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

/** What one statement of a list answers: the page's rows, the exact total, and the unfiltered list's version. */
export interface PageResult<R> {
  rows: R[];
  total: number;
  /** Changes whenever the unfiltered list changes (maintained counters); only read for the unfiltered list. */
  version: number;
}

/** What a module provides for one list: one statement for a page and its total, and for the unfiltered list its anchors. */
export interface PagedSource<R, A> {
  /** True when the request lists the whole workspace (all products, no filter): deep pages may use anchors. */
  unfiltered: boolean;
  /** Every `every`-th sort key of the unfiltered list, newest first, and the list version they belong to (one statement). */
  anchors(every: number): Promise<Anchors<A>>;
  /** One page and the exact total of the rows the filters match, in one statement; `atOrBefore` starts at a sort key found from the anchors. */
  page(page: { limit: number; offset: number; atOrBefore?: A }): Promise<PageResult<R>>;
}

export function pageWindow(query: PageQuery): { page: number; pageSize: number; offset: number } {
  const page = query.page ?? 1;
  const pageSize = query.limit ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

/** Rebuilds of the anchors one deep page may ask for while the list keeps changing, before it walks the offset instead. */
const ANCHOR_ATTEMPTS = 2;

/**
 * The paged-list flow of every list: rows and exact total in one statement. Deep pages (offset ≥ 10,000) of the
 * unfiltered list start from a cached sort key instead of walking the offset, so page 10,000 costs about what
 * page 1 costs; the page's statement also reads the list's version, and the page is used only when the anchors
 * belong to that version (otherwise they are rebuilt and the page read again). Filtered lists use plain OFFSET
 * over an index-only scan.
 */
export async function pagedList<R, A>(cache: PageAnchorCache<A>, workspaceId: number, query: PageQuery, source: PagedSource<R, A>): Promise<Page<R>> {
  const { page, pageSize, offset } = pageWindow(query);
  if (offset >= DEEP_PAGE_OFFSET && source.unfiltered) {
    let anchors = cache.peek(workspaceId) ?? (await cache.rebuild(workspaceId, () => source.anchors(cache.every)));
    for (let attempt = 0; ; attempt++) {
      const start = cache.locate(anchors.anchors, offset);
      if (!start) break;
      const result = await source.page({ limit: pageSize, offset: start.skip, atOrBefore: start.atOrBefore });
      if (result.version === anchors.version) return { rows: result.rows, total: result.total, page, pageSize };
      if (attempt === ANCHOR_ATTEMPTS) break;
      anchors = await cache.rebuild(workspaceId, () => source.anchors(cache.every));
    }
  }
  const { rows, total } = await source.page({ limit: pageSize, offset });
  return { rows, total, page, pageSize };
}

/**
 * A page whose rows are already JSON text (`rows` holds one element: the array, as PostgreSQL wrote it), as the
 * list envelope's JSON text: `rows`, `total`, `page`, `pageSize`, in ListEnvelope's order, then the list's own
 * envelope fields (`extra`, in the order given).
 */
export function listEnvelopeJson(page: Page<string>, extra: Record<string, boolean | number> = {}): string {
  let fields = '';
  for (const [name, value] of Object.entries(extra)) fields += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  return `{"rows":${page.rows[0] ?? '[]'},"total":${page.total},"page":${page.page},"pageSize":${page.pageSize}${fields}}`;
}
