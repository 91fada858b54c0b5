import { type Expression, type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import type { PageResult } from './paged-list.js';

/** The list's total and version, one row: the maintained counters for the unfiltered list, a count of the matches otherwise. */
export interface ListTotals {
  total: number;
  version: number;
}

/**
 * One page and its total in one statement: the totals (one row) left-joined to the page's rows, so an empty
 * page still brings its total. A list request used to make one statement for the rows and another for the
 * total (plus the counters for a deep page); at 1,000,000 rows each statement's round trip and planning were
 * a large part of a page's cost (docs/performance.md, "Lists in one statement").
 *
 * `page` must select an `id` that is never null (how a missing page row is told apart), and no column named
 * `list_total` or `list_version`; `order` orders the outer rows as the page orders them, on the alias `r`.
 * No totals row (a workspace whose counters were never written) means an empty list.
 */
export async function pageWithTotal<R extends { id: number }>(
  db: Executor,
  totals: Expression<ListTotals>,
  page: Expression<R>,
  order: RawBuilder<unknown>,
): Promise<PageResult<R>> {
  const result = await sql<R & { list_total: number; list_version: number }>`
    select t.total as list_total, t.version as list_version, r.*
    from ${totals} as t left join ${page} as r on true
    order by ${order}`.execute(db);
  const first = result.rows[0];
  if (!first) return { rows: [], total: 0, version: 0 };
  const rows: R[] = [];
  for (const row of result.rows) {
    if (row.id === null) continue;
    const { list_total: _total, list_version: _version, ...rest } = row;
    rows.push(rest as unknown as R);
  }
  return { rows, total: Number(first.list_total), version: Number(first.list_version) };
}
