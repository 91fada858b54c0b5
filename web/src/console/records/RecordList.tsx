import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { ExportButton, ImportButton } from './controls';

/**
 * One page of a list the API pages (`rows`, `total`), titled "Customers (1,204)": its loading and
 * problem states, and what to do when nothing is there — `emptyFiltered` when filters hide
 * everything, `empty` when there is nothing at all.
 */
export function RecordsTable<Row>({
  title,
  query,
  columns,
  rowKey,
  page,
  pageSize,
  onPage,
  filtered,
  emptyFiltered,
  empty,
}: {
  title: string;
  query: UseQueryResult<{ rows: Row[]; total: number }>;
  columns: Column<Row>[];
  rowKey: (row: Row) => string | number;
  page: number;
  pageSize: number;
  onPage: (page: number) => void;
  filtered: boolean;
  emptyFiltered?: ReactNode;
  empty: ReactNode;
}) {
  return (
    <QueryState query={query} label={`Loading ${title.toLowerCase()}`}>
      {(data) => (
        <PagedTable
          caption={`${title} (${data.total})`}
          columns={columns}
          rows={data.rows}
          rowKey={rowKey}
          total={data.total}
          page={page}
          pageSize={pageSize}
          onPage={onPage}
          empty={filtered ? emptyFiltered : empty}
        />
      )}
    </QueryState>
  );
}

/** A list page's actions: export what the filters match; import and the page's own action for members who may change the records. */
export function RecordsActions({ exportRun, onImport, children }: { exportRun: () => Promise<void>; onImport?: () => void; children?: ReactNode }) {
  return (
    <>
      <ExportButton label="Export CSV" run={exportRun} />
      {onImport && <ImportButton onClick={onImport} />}
      {children}
    </>
  );
}
