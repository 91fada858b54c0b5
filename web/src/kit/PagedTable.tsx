import { Group, Pagination, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { type Column, DataTable } from './DataTable';
import { formatCount } from './format';

export type { Column };

/**
 * One page of a list that pages on the server: the rows the API answered, its total, and page
 * controls that change the URL (see useListParams). `caption` names the table for assistive
 * technology; `empty` says what to do when there is nothing (use EmptyState).
 */
export function PagedTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  total,
  page,
  pageSize,
  onPage,
  empty,
  minWidth,
}: {
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string | number;
  total: number;
  page: number;
  pageSize: number;
  onPage: (page: number) => void;
  empty: ReactNode;
  minWidth?: number;
}) {
  if (total === 0 && rows.length === 0) return <>{empty}</>;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = (page - 1) * pageSize + 1;
  return (
    <>
      <DataTable caption={caption} columns={columns} rows={rows} rowKey={rowKey} minWidth={minWidth} />
      {pages > 1 || page > 1 ? (
        <Group justify="space-between" mt="sm" wrap="wrap">
          <Text size="sm" c="dimmed">
            {formatCount(first)}–{formatCount(Math.min(total, first + rows.length - 1))} of {formatCount(total)}
          </Text>
          <Pagination
            total={pages}
            value={Math.min(page, pages)}
            onChange={onPage}
            getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
            getControlProps={(control) => ({ 'aria-label': `${control[0]!.toUpperCase()}${control.slice(1)} page` })}
          />
        </Group>
      ) : null}
    </>
  );
}
