import { Table } from '@mantine/core';
import type { ReactNode } from 'react';

export interface Column<Row> {
  key: string;
  header: ReactNode;
  render: (row: Row) => ReactNode;
  /** Numbers read better aligned right. */
  numeric?: boolean;
}

/** Rows as a table with a caption (its accessible name) that scrolls sideways on a narrow screen. */
export function DataTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  minWidth = 560,
}: {
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string | number;
  /** Below this width the table scrolls sideways; a table of few columns can fit a phone with less. */
  minWidth?: number;
}) {
  return (
    // A phone scrolls a wide table sideways; the region is focusable so the keyboard can scroll it too.
    <Table.ScrollContainer minWidth={minWidth} type="native" tabIndex={0} role="region" aria-label={caption}>
      <Table striped highlightOnHover verticalSpacing="xs" captionSide="top">
        <Table.Caption>{caption}</Table.Caption>
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) => (
              <Table.Th key={c.key} scope="col" ta={c.numeric ? 'right' : undefined}>
                {c.header}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={rowKey(row)}>
              {columns.map((c) => (
                <Table.Td key={c.key} ta={c.numeric ? 'right' : undefined}>
                  {c.render(row)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
