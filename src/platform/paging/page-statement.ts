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

/**
 * Pages up to this offset read their rows directly: the rows skipped are few, where a deferred join (the page's ids
 * from the index first, then the rows) costs a second index lookup per row of every page. Deeper pages keep the
 * deferred join. At 1,000,000 customers the direct page 1 ran at 5,600 executions/s prepared against 3,559 for the
 * deferred join (`pgbench`, docs/performance-lists.md).
 */
export const DIRECT_PAGE_MAX_OFFSET = 200;

export const isShallowPage = (page: { offset: number }) => page.offset <= DIRECT_PAGE_MAX_OFFSET;

/**
 * A shallow page's LIMIT or OFFSET as a literal, not a parameter: a parameter makes PostgreSQL assume a limit of a
 * tenth of the table in a generic plan, so the plan cache re-plans every execution; a literal gives a handful of
 * statement texts (page sizes × shallow offsets), each planned once per connection (prepared-statements.ts).
 */
export function pageLiteral(n: number) {
  const value = Number(n);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`a page's limit and offset are whole numbers (got ${value})`);
  return sql.lit(value);
}

/** A page whose rows PostgreSQL wrote as the API's JSON array (`pageJsonWithTotal`). */
export interface JsonPage {
  /** The `rows` array of the answer, as JSON text. */
  rowsJson: string;
  total: number;
  version: number;
  /** The page's `summary` aggregate when one was asked for, else null. */
  summary: unknown;
}

/**
 * One page and its total in one statement, the rows written by PostgreSQL as the JSON array the API answers
 * (`rowJson` builds one row's object from the alias `r`, fields in the response schema's order). The process then
 * neither parses the rows nor builds, checks and serializes an object per row: at 1,000,000 customers a 50-row
 * page cost the Node process about 1 ms of CPU that way (pg's row parsing, dates, the per-row objects, the
 * serializer, the garbage they leave), while PostgreSQL's backends idled (docs/performance-lists.md). `summary` is an
 * aggregate over the page's rows `r` that the envelope needs beside them (the purchase list's `canRefund`).
 */
export async function pageJsonWithTotal(
  db: Executor,
  totals: Expression<ListTotals>,
  page: Expression<unknown>,
  rowJson: RawBuilder<unknown>,
  order: RawBuilder<unknown>,
  summary: RawBuilder<unknown> = sql`null`,
): Promise<JsonPage> {
  const result = await sql<{ list_total: number; list_version: number; rows_json: string; summary: unknown }>`
    select t.total as list_total, t.version as list_version, p.rows_json, p.summary
    from ${totals} as t
    cross join (select coalesce(json_agg(${rowJson} order by ${order}), '[]')::text as rows_json, ${summary} as summary from ${page} as r) as p`.execute(db);
  const first = result.rows[0];
  if (!first) return { rowsJson: '[]', total: 0, version: 0, summary: null };
  return { rowsJson: first.rows_json, total: Number(first.list_total), version: Number(first.list_version), summary: first.summary };
}
