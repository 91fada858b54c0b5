import { type CompiledQuery, type Expression, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import { isoTimestamp, neutralisedText } from '../../platform/csv/copy-out.js';
import { canSeeProduct, type Scope } from '../../platform/auth/scope.js';
import type { DB, DeveloperCustomersTable } from '../../platform/db/schema.js';
import type pg from 'pg';
import { copyLines, copyText } from '../../platform/db/copy-in.js';
import type { Executor, Tx } from '../../platform/db/transaction.js';
import type { Anchors } from '../../platform/paging/page-anchors.js';
import type { PageResult } from '../../platform/paging/paged-list.js';
import { isShallowPage, type JsonPage, type ListTotals, pageJsonWithTotal, pageLiteral } from '../../platform/paging/page-statement.js';

export interface CustomerFilter {
  search?: string | undefined;
  productId?: number | undefined;
  from: Date | null;
  to: Date | null;
}

/** A relationship as lists and exports read it, with the linked products the caller can see. */
export type CustomerRecord = Pick<
  Selectable<DeveloperCustomersTable>,
  'id' | 'account_id' | 'email' | 'first_name' | 'last_name' | 'status' | 'email_verified' | 'created_at'
> & { product_ids: number[] };

const escapeLike = (term: string) => term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/** Every customer query starts here: the workspace predicate plus the caller's product scope. */
function visible(db: Executor, scope: Scope) {
  let query = db.selectFrom('developer_customers as dc').where('dc.workspace_id', '=', scope.workspaceId);
  if (scope.products !== 'all') {
    const ids = [...scope.products];
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('customer_products as cp')
          .select(sql`1`.as('one'))
          .whereRef('cp.developer_customer_id', '=', 'dc.id')
          .where('cp.workspace_id', '=', scope.workspaceId)
          .where('cp.product_id', '=', sql<number>`any(${ids}::int[])`),
      ),
    );
  }
  return query;
}

function applyFilter<O>(query: SelectQueryBuilder<DB & { dc: DB['developer_customers'] }, 'dc', O>, scope: Scope, filter: CustomerFilter) {
  let q = query.where('dc.status', '=', 'active');
  if (filter.search) q = q.where('dc.search_text', 'like', `%${escapeLike(filter.search)}%`);
  if (filter.from) q = q.where('dc.created_at', '>=', filter.from);
  if (filter.to) q = q.where('dc.created_at', '<', filter.to);
  if (filter.productId !== undefined) {
    const productId = filter.productId;
    // A filter on a product outside the scope matches nothing: filters narrow, never widen.
    if (!canSeeProduct(scope, productId)) return q.where(sql<boolean>`false`);
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('customer_products as cpf')
          .select(sql`1`.as('one'))
          .whereRef('cpf.developer_customer_id', '=', 'dc.id')
          .where('cpf.workspace_id', '=', scope.workspaceId)
          .where('cpf.product_id', '=', productId),
      ),
    );
  }
  return q;
}

function productRestriction(scope: Scope) {
  return scope.products === 'all' ? sql`` : sql`and cp.product_id = any(${[...scope.products]}::int[])`;
}

const productIdsOf = (scope: Scope) =>
  sql<number[]>`array(select cp.product_id from customer_products cp where cp.developer_customer_id = dc.id and cp.workspace_id = dc.workspace_id ${productRestriction(scope)} order by cp.product_id)`;

function selectRecord(query: ReturnType<typeof visible>, scope: Scope) {
  return query.select([
      'dc.id',
      'dc.account_id',
      'dc.email',
      'dc.first_name',
      'dc.last_name',
      'dc.status',
      'dc.email_verified',
      'dc.created_at',
      productIdsOf(scope).as('product_ids'),
    ]);
}

/**
 * The unfiltered list's total and version come from the maintained counters. A filtered list counts its matches,
 * unless the caller knows the total at the list's current version (`known`): the version is read in the same
 * statement and the count (a subquery in the other branch of the CASE) runs only when it moved. The caller passes
 * `known` only for filters the version follows (see `listPage`).
 */
function listTotals(db: Executor, scope: Scope, filter: CustomerFilter, known?: ListTotals): Expression<ListTotals> {
  // Maintained by triggers in the same statements that add and remove relationships.
  if (isUnfiltered(scope, filter)) {
    return db
      .selectFrom('workspace_stats')
      .where('workspace_id', '=', scope.workspaceId)
      .select([sql<number>`active_customers`.as('total'), sql<number>`customers_version`.as('version')]);
  }
  const count = applyFilter(visible(db, scope), scope, filter).select(sql<number>`count(*)::int`.as('n'));
  const version = sql<number>`coalesce((select customers_version from workspace_stats where workspace_id = ${scope.workspaceId}), 0)`;
  if (!known || !versionFollows(scope, filter)) return sql<ListTotals>`(select ${count} as total, ${version} as version)`;
  return sql<ListTotals>`(
    select case when v.version = ${known.version}::bigint then ${known.total}::int else ${count} end as total, v.version
    from (select ${version} as version) v)`;
}

/**
 * Whether the list version follows every change of this filter's matches: every statement that inserts or updates
 * relationships moves it (a name change moves the search text with it), but linking a product does not, so a
 * product filter or a product-scoped member is always counted.
 */
export const versionFollows = (scope: Scope, filter: CustomerFilter) => scope.products === 'all' && filter.productId === undefined;

/** One customer as the API answers it (CustomerRow, fields in its order), from a page row `r`. */
const rowJson = sql`json_build_object(
  'id', r.id, 'customer_id', r.id, 'email', r.email, 'first_name', r.first_name, 'last_name', r.last_name, 'status', r.status,
  'email_verification_status', case when r.email_verified then 'verified' else 'unverified' end,
  'product_ids', r.product_ids, 'created_at', ${sql.raw(isoTimestamp('r.created_at'))})`;

/**
 * One page, newest first, and its exact total, in one statement, the rows as the API's JSON (CustomerRow; the
 * relationship id is also `customer_id`, never the global account id). A shallow page reads its rows directly; a
 * deeper one finds its ids first from the index alone (a deferred join), so rows skipped by OFFSET never pay for
 * joins and product subqueries. `atOrBefore` starts the page at a known id (deep-page anchors).
 */
export async function listPage(
  db: Executor,
  scope: Scope,
  filter: CustomerFilter,
  page: { limit: number; offset: number; atOrBefore?: number },
  known?: ListTotals,
): Promise<JsonPage> {
  let matches = applyFilter(visible(db, scope), scope, filter);
  if (page.atOrBefore !== undefined) matches = matches.where('dc.id', '<=', page.atOrBefore);
  const rows = isShallowPage(page)
    ? selectRecord(matches, scope).orderBy('dc.id', 'desc').limit(pageLiteral(page.limit)).offset(pageLiteral(page.offset))
    : selectRecord(visible(db, scope), scope).where('dc.id', 'in', matches.select('dc.id').orderBy('dc.id', 'desc').limit(page.limit).offset(page.offset));
  return pageJsonWithTotal(db, listTotals(db, scope, filter, known), rows, rowJson, sql`r.id desc`);
}

/**
 * Every `every`-th active relationship id of the workspace, newest first (position i·every starts at ids[i]),
 * and the list version they belong to, from one snapshot.
 */
export async function pageAnchors(db: Executor, scope: Scope, every: number): Promise<Anchors<number>> {
  const result = await sql<{ version: number | null; anchors: number[] }>`
    select (select customers_version from workspace_stats where workspace_id = ${scope.workspaceId}) as version,
      array(
        select id from (
          select id, row_number() over (order by id desc) as rn
          from developer_customers where workspace_id = ${scope.workspaceId} and status = 'active'
        ) ranked
        where (rn - 1) % ${every} = 0
        order by id desc) as anchors`.execute(db);
  const row = result.rows[0]!;
  return { version: Number(row.version ?? 0), anchors: row.anchors };
}

export const isUnfiltered = (scope: Scope, f: CustomerFilter) =>
  scope.products === 'all' && !f.search && f.productId === undefined && !f.from && !f.to;

/** Keyset batches (newest first) so an export never holds more than one batch in memory. */
export async function* customerBatches(db: Executor, scope: Scope, filter: CustomerFilter, batchSize: number): AsyncGenerator<CustomerRecord[]> {
  let before = 2147483647;
  for (;;) {
    const batch = await selectRecord(applyFilter(visible(db, scope), scope, filter), scope)
      .where('dc.id', '<', before)
      .orderBy('dc.id', 'desc')
      .limit(batchSize)
      .execute();
    if (batch.length === 0) return;
    yield batch;
    if (batch.length < batchSize) return;
    before = batch[batch.length - 1]!.id;
  }
}

/**
 * The export's rows for `COPY … TO STDOUT` (PostgreSQL): every matching relationship, newest first, with each cell
 * as the batch path writes it (`customerBatches` + the service's `exportCustomers`): the product cell is the names of
 * the linked products the caller can see, sorted (by code point, as JavaScript's sort) and joined with `; `.
 */
export function exportQuery(db: Executor, scope: Scope, filter: CustomerFilter): CompiledQuery {
  const text = (column: string) => sql<string>`${sql.raw(neutralisedText(column))}`;
  const products = sql<string>`${sql.raw(neutralisedText('p_names.names'))}`;
  return applyFilter(visible(db, scope), scope, filter)
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('customer_products as cpn')
          .innerJoin('products as pn', (join) => join.onRef('pn.id', '=', 'cpn.product_id').onRef('pn.workspace_id', '=', 'cpn.workspace_id'))
          .whereRef('cpn.developer_customer_id', '=', 'dc.id')
          .whereRef('cpn.workspace_id', '=', 'dc.workspace_id')
          .$if(scope.products !== 'all', (q) => q.where('cpn.product_id', '=', sql<number>`any(${[...(scope.products as Set<number>)]}::int[])`))
          .select(sql<string>`string_agg(pn.name, '; ' order by pn.name collate "C")`.as('names'))
          .as('p_names'),
      (join) => join.onTrue(),
    )
    .select([
      'dc.id',
      'dc.id as customer_id',
      text('dc.email').as('email'),
      text('dc.first_name').as('first_name'),
      text('dc.last_name').as('last_name'),
      text('dc.status').as('status'),
      sql<string>`case when dc.email_verified then 'verified' else 'unverified' end`.as('email_verification_status'),
      products.as('products'),
      sql<string>`${sql.raw(isoTimestamp('dc.created_at'))}`.as('created_at'),
    ])
    .orderBy('dc.id', 'desc')
    .compile();
}

/** A relationship by its id (the `customer_id` the API shows), within the caller's scope. */
export async function findById(db: Executor, scope: Scope, id: number, lock = false) {
  let query = visible(db, scope)
    .where('dc.id', '=', id)
    .select(['dc.id', 'dc.account_id', 'dc.status', 'dc.email']);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function markRemoved(tx: Tx, scope: Scope, id: number, reason: string | null): Promise<void> {
  await tx
    .updateTable('developer_customers')
    .set({ status: 'removed', removed_at: new Date(), removal_reason: reason, first_name: null, last_name: null, updated_at: new Date() })
    .where('workspace_id', '=', scope.workspaceId)
    .where('id', '=', id)
    .execute();
}

export async function deleteMarketingRecords(tx: Tx, scope: Scope, accountId: number): Promise<number> {
  const result = await tx
    .deleteFrom('marketing_consents')
    .where('workspace_id', '=', scope.workspaceId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Finds or creates the global accounts for these (normalised, distinct) e-mails. */
export async function ensureAccounts(tx: Tx, _scope: Scope, emails: string[], normalised: string[]): Promise<Map<string, number>> {
  await sql`
    insert into accounts (email, email_normalized)
    select * from unnest(${emails}::text[], ${normalised}::text[])
    on conflict (email_normalized) do nothing`.execute(tx);
  // Joined from the array so each e-mail is one unique-index lookup (`= any(array)` made the planner scan the table).
  const found = await sql<{ id: number; email_normalized: string }>`
    select a.id, a.email_normalized from unnest(${normalised}::text[]) as t(email_normalized)
    join accounts a on a.email_normalized = t.email_normalized`.execute(tx);
  return new Map(found.rows.map((r) => [r.email_normalized, r.id]));
}

export interface RelationshipInput {
  accountId: number;
  email: string;
  firstName: string | null;
  lastName: string | null;
}

/**
 * Creates relationships, re-activates removed ones and refreshes names.
 * `activated` counts relationships that became active in this call; it is exact
 * under concurrent imports because re-activation re-checks the status under the
 * row lock and `xmax = 0` marks rows this statement inserted.
 */
export async function upsertRelationships(
  tx: Tx,
  scope: Scope,
  rows: RelationshipInput[],
  source: string,
): Promise<{ ids: Map<number, number>; activated: number; activatedIds: Set<number> }> {
  const input = sql`unnest(${rows.map((r) => r.accountId)}::int[], ${rows.map((r) => r.email)}::text[],
      ${rows.map((r) => r.firstName)}::text[], ${rows.map((r) => r.lastName)}::text[]) as t(account_id, email, first_name, last_name)`;
  // A product-scoped caller may link its product to an existing customer but not
  // overwrite what the workspace already holds about them: it only fills gaps.
  const overwrite = scope.products === 'all';
  const names = overwrite ? sql`coalesce(excluded.first_name, dc.first_name)` : sql`coalesce(dc.first_name, excluded.first_name)`;
  const lastNames = overwrite ? sql`coalesce(excluded.last_name, dc.last_name)` : sql`coalesce(dc.last_name, excluded.last_name)`;
  const reactivated = await sql<{ id: number }>`
    update developer_customers dc set status = 'active', removed_at = null, removal_reason = null,
      first_name = t.first_name, last_name = t.last_name, updated_at = now()
    from ${input}
    where dc.workspace_id = ${scope.workspaceId} and dc.account_id = t.account_id and dc.status = 'removed'
    returning dc.id`.execute(tx);
  const upserted = await sql<{ id: number; account_id: number; inserted: boolean }>`
    insert into developer_customers as dc (workspace_id, account_id, email, first_name, last_name, source)
    select ${scope.workspaceId}, account_id, email, first_name, last_name, ${source} from ${input}
    on conflict (workspace_id, account_id) do update set
      first_name = ${names},
      last_name = ${lastNames},
      updated_at = now()
    returning dc.id, dc.account_id, (dc.xmax = 0) as inserted`.execute(tx);
  const activatedIds = new Set(reactivated.rows.map((r) => r.id));
  const ids = new Map<number, number>();
  for (const row of upserted.rows) {
    ids.set(row.account_id, row.id);
    if (row.inserted) activatedIds.add(row.id);
  }
  return { ids, activated: activatedIds.size, activatedIds };
}

export async function linkProducts(tx: Tx, scope: Scope, customerIds: number[], productIds: number[]): Promise<void> {
  if (customerIds.length === 0) return;
  await sql`
    insert into customer_products (workspace_id, developer_customer_id, product_id)
    select ${scope.workspaceId}, * from unnest(${customerIds}::int[], ${productIds}::int[])
    on conflict do nothing`.execute(tx);
}

export async function recordConsents(tx: Tx, scope: Scope, accountIds: number[], source: string): Promise<void> {
  if (accountIds.length === 0) return;
  await sql`
    insert into marketing_consents (workspace_id, account_id, channel, source)
    select ${scope.workspaceId}, a, 'email', ${source} from unnest(${accountIds}::int[]) as a
    on conflict do nothing`.execute(tx);
}

/** One merged row of a staged import (see `stageImport`): the e-mail's last names, its products, any consent. */
export interface StagedCustomer {
  email: string;
  emailNormalized: string;
  firstName: string | null;
  lastName: string | null;
  productIds: number[];
  marketingConsent: boolean;
}

/**
 * A large import on PostgreSQL: its merged rows COPY into a temporary staging table (dropped at commit) in the
 * order given (`seq`; sorted by e-mail, so that concurrent imports lock shared rows in one order), and the writes
 * are set-based statements over ranges of it (`mergeStaged`). The statement path (`ensureAccounts`,
 * `upsertRelationships`, `linkProducts`, `recordConsents`) sends the same rows as arrays, 5,000 at a time.
 */
export async function stageImport(tx: Tx, client: pg.PoolClient, rows: readonly StagedCustomer[]): Promise<void> {
  await sql`drop table if exists import_customers, import_accounts, import_written, import_activated`.execute(tx);
  await sql`
    create temporary table import_customers (
      seq integer primary key, email text not null, email_normalized text not null, first_name text, last_name text,
      product_ids integer[] not null, consent boolean not null
    ) on commit drop`.execute(tx);
  // Per range: each row's account, the relationship each account has, and the relationships made active.
  await sql`create temporary table import_accounts (seq integer primary key, account_id integer not null) on commit drop`.execute(tx);
  await sql`create temporary table import_written (account_id integer primary key, customer_id integer not null) on commit drop`.execute(tx);
  await sql`create temporary table import_activated (customer_id integer primary key) on commit drop`.execute(tx);
  await copyLines(
    client,
    'import_customers (seq, email, email_normalized, first_name, last_name, product_ids, consent)',
    (function* () {
      for (let i = 0; i < rows.length; i += 1) {
        const r = rows[i]!;
        yield `${i}\t${copyText(r.email)}\t${copyText(r.emailNormalized)}\t${copyText(r.firstName)}\t${copyText(r.lastName)}\t{${r.productIds.join(',')}}\t${r.marketingConsent ? 't' : 'f'}\n`;
      }
    })(),
  );
  // Temporary tables have no statistics until analysed: the planner would guess their size.
  await sql`analyze import_customers`.execute(tx);
}

/**
 * Writes the staged rows with seq in [from, to): the accounts, the relationships (re-activating removed ones), the
 * product links and the consents, by the statement path's rules (`upsertRelationships`: a product-scoped caller
 * only fills gaps in names). Returns how many relationships became active in the range.
 */
export async function mergeStaged(tx: Tx, scope: Scope, from: number, to: number, source: string): Promise<number> {
  const range = sql`s.seq >= ${from} and s.seq < ${to}`;
  // The accounts it creates come back from the insert; only e-mails that had one are looked up (at 1,000,000
  // accounts a lookup of every row cost 0.25-1.1 s per 20,000 rows on a loaded machine).
  await sql`
    with made as (
      insert into accounts (email, email_normalized)
      select s.email, s.email_normalized from import_customers s where ${range} order by s.seq
      on conflict (email_normalized) do nothing
      returning id, email_normalized)
    insert into import_accounts (seq, account_id)
    select s.seq, made.id from made join import_customers s on s.email_normalized = made.email_normalized where ${range}`.execute(tx);
  await sql`
    insert into import_accounts (seq, account_id)
    select s.seq, a.id from import_customers s join accounts a on a.email_normalized = s.email_normalized
    where ${range} and not exists (select 1 from import_accounts ia where ia.seq = s.seq)`.execute(tx);
  const reactivated = await sql`
    with r as (
      update developer_customers dc set status = 'active', removed_at = null, removal_reason = null,
        first_name = s.first_name, last_name = s.last_name, updated_at = now()
      from import_customers s join import_accounts ia on ia.seq = s.seq
      where ${range} and dc.workspace_id = ${scope.workspaceId} and dc.account_id = ia.account_id and dc.status = 'removed'
      returning dc.id)
    insert into import_activated (customer_id) select id from r`.execute(tx);
  const overwrite = scope.products === 'all';
  const names = overwrite ? sql`coalesce(excluded.first_name, dc.first_name)` : sql`coalesce(dc.first_name, excluded.first_name)`;
  const lastNames = overwrite ? sql`coalesce(excluded.last_name, dc.last_name)` : sql`coalesce(dc.last_name, excluded.last_name)`;
  const inserted = await sql`
    with up as (
      insert into developer_customers as dc (workspace_id, account_id, email, first_name, last_name, source)
      select ${scope.workspaceId}, ia.account_id, s.email, s.first_name, s.last_name, ${source}
      from import_customers s join import_accounts ia on ia.seq = s.seq
      where ${range}
      order by s.seq
      on conflict (workspace_id, account_id) do update set first_name = ${names}, last_name = ${lastNames}, updated_at = now()
      returning dc.id, dc.account_id, (dc.xmax = 0) as inserted
    ), written as (
      insert into import_written (account_id, customer_id) select account_id, id from up
    )
    insert into import_activated (customer_id) select id from up where inserted`.execute(tx);
  await sql`
    insert into customer_products (workspace_id, developer_customer_id, product_id)
    select ${scope.workspaceId}, w.customer_id, p.product_id
    from import_customers s join import_accounts ia on ia.seq = s.seq join import_written w on w.account_id = ia.account_id
    cross join unnest(s.product_ids) as p(product_id)
    where ${range}
    order by s.seq
    on conflict do nothing`.execute(tx);
  await sql`
    insert into marketing_consents (workspace_id, account_id, channel, source)
    select ${scope.workspaceId}, ia.account_id, 'email', ${source}
    from import_customers s join import_accounts ia on ia.seq = s.seq
    where ${range} and s.consent
    order by s.seq
    on conflict do nothing`.execute(tx);
  return Number(reactivated.numAffectedRows ?? 0) + Number(inserted.numAffectedRows ?? 0);
}

/** The relationships a staged import made active with seq in [from, to), in row order, as `customer.created` tells them. */
export async function stagedActivations(tx: Tx, from: number, to: number) {
  const { rows } = await sql<{ customer_id: number; email: string; first_name: string | null; last_name: string | null }>`
    select w.customer_id, s.email, s.first_name, s.last_name
    from import_customers s join import_accounts ia on ia.seq = s.seq join import_written w on w.account_id = ia.account_id
    join import_activated x on x.customer_id = w.customer_id
    where s.seq >= ${from} and s.seq < ${to}
    order by s.seq`.execute(tx);
  return rows;
}
