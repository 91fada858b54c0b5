import { Anchor, Button, Code, Group, Select, Stack, Text } from '@mantine/core';
import { IconKey } from '@tabler/icons-react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDate } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import type { Column } from '../../kit/PagedTable';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { DATE_RANGES, idParam, SearchField } from '../records/controls';
import { datedName, saveDownload } from '../records/download';
import { ImportDialog } from '../records/ImportDialog';
import { useProductOptions } from '../records/products';
import { RecordsActions, RecordsTable } from '../records/RecordList';
import { GenerateSerials } from './GenerateSerials';
import { type Serial, serialKeys } from './model';

const PAGE_SIZE = 50;
const STATUS_FILTERS = [
  { value: '', label: 'Any status' },
  { value: 'available', label: 'Available (unassigned)' },
  { value: 'redeemed', label: 'Redeemed (in use)' },
];

const columns: Column<Serial>[] = [
  {
    key: 'serial',
    header: 'Serial',
    render: (s) => (
      <Anchor component={Link} to={`/serials/${s.id}`} state={{ serial: s }} ff="monospace" aria-label={`Serial ${s.serial}`}>
        {s.serial}
      </Anchor>
    ),
  },
  { key: 'product', header: 'Product', render: (s) => s.product },
  { key: 'status', header: 'Status', render: (s) => <StatusBadge status={s.status} /> },
  { key: 'seats', header: 'Devices', render: (s) => (s.max_activations === 0 ? `${s.active_activation_count} (no limit)` : `${s.active_activation_count} of ${s.max_activations}`), numeric: true },
  { key: 'customer', header: 'Customer', render: (s) => (s.customer_id === null ? '—' : `#${s.customer_id}`) },
  { key: 'batch', header: 'Batch', render: (s) => (s.batch_tag ? <Code>{s.batch_tag}</Code> : '—') },
  { key: 'created', header: 'Created', render: (s) => formatDate(s.created_at) },
];

/** Serial inventory and keys in use, paged on the server; search, status, product, date window and page live in the URL. */
export default function SerialsPage() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const products = useProductOptions();
  const [params, setParams] = useListParams({ search: '', status: '', productId: '', dateRange: '', page: 1 });
  const [dialog, setDialog] = useState<'import' | 'generate' | null>(null);
  const filters = {
    ...(params.search ? { search: params.search } : {}),
    ...(params.status === 'available' || params.status === 'redeemed' ? { status: params.status as 'available' | 'redeemed' } : {}),
    ...(idParam(params.productId) ? { productId: idParam(params.productId) } : {}),
    ...(params.dateRange ? { dateRange: params.dateRange } : {}),
  };
  const list = useQuery({
    queryKey: [...serialKeys.all, 'list', params],
    queryFn: () => unwrap(api.GET('/api/developer/serials', { params: { query: { ...filters, page: params.page, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const mayManage = access.can('serials.manage');
  const refresh = () => void client.invalidateQueries({ queryKey: serialKeys.all });
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageHeader
        title="Serials"
        description="License keys: unassigned inventory and keys in use, with their devices and audit trail."
        actions={
          <RecordsActions
            exportRun={() => saveDownload(api.GET('/api/developer/serials/export', { params: { query: filters }, parseAs: 'blob' }), datedName('serials'))}
            onImport={mayManage ? () => setDialog('import') : undefined}
          >
            {mayManage && (
              <Button leftSection={<IconKey size={16} aria-hidden />} onClick={() => setDialog('generate')}>
                Generate serials
              </Button>
            )}
          </RecordsActions>
        }
      />
      <Stack>
        <Group align="flex-end" wrap="wrap">
          <SearchField label="Search" description="Part of a serial, or a customer’s e-mail" value={params.search} onSearch={(search) => setParams({ search })} />
          <Select label="Status" data={STATUS_FILTERS} value={params.status} onChange={(value) => setParams({ status: value ?? '' })} allowDeselect={false} w={220} />
          {products.options.length > 0 && (
            <Select
              label="Product"
              data={[{ value: '', label: 'All products' }, ...products.options]}
              value={params.productId}
              onChange={(value) => setParams({ productId: value ?? '' })}
              allowDeselect={false}
              searchable
              w={240}
            />
          )}
          <Select label="Created" data={DATE_RANGES} value={params.dateRange} onChange={(value) => setParams({ dateRange: value ?? '' })} allowDeselect={false} w={200} />
        </Group>
        <RecordsTable
          title="Serials"
          query={list}
          columns={columns}
          rowKey={(s) => s.id}
          page={params.page}
          pageSize={PAGE_SIZE}
          onPage={(page) => setParams({ page })}
          filtered={filtered}
          emptyFiltered={<EmptyState title="No serial matches">Clear the search, or choose “Any status”, “All products” and “Any time”.</EmptyState>}
          empty={
            <EmptyState title="No serials yet">
              Serials are made when someone buys a product, or ahead of time in batches.
              {mayManage ? ' Generate a batch for a product, or import the keys you already sold.' : ''}
            </EmptyState>
          }
        />
        <Text size="sm" c="dimmed">
          Open a serial to change its access, see its devices and release one, read its audit trail, or hide its order from the customer portal.
        </Text>
      </Stack>
      {mayManage && <ImportDialog kind="serials" noun="serials" opened={dialog === 'import'} onClose={() => setDialog(null)} onImported={refresh} />}
      {mayManage && dialog === 'generate' && <GenerateSerials products={products.options} onClose={() => setDialog(null)} onGenerated={refresh} />}
    </>
  );
}
