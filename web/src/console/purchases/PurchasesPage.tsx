import { Badge, Button, Code, Group, Stack, Text } from '@mantine/core';
import { IconGift } from '@tabler/icons-react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type paths, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import type { Column } from '../../kit/PagedTable';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { SearchField } from '../records/controls';
import { datedName, saveDownload } from '../records/download';
import { ImportDialog } from '../records/ImportDialog';
import { RecordsActions, RecordsTable } from '../records/RecordList';
import { ManualGrant } from './ManualGrant';
import { label, PURCHASE_FILTERS, PurchaseFilters, purchaseQuery } from './PurchaseFilters';

export type Purchase = paths['/api/developer/purchases']['get']['responses'][200]['content']['application/json']['rows'][number];

const PAGE_SIZE = 50;
export const purchaseKeys = { all: ['console', 'purchases'] as const };

const columns: Column<Purchase>[] = [
  { key: 'when', header: 'Purchased', render: (p) => formatDateTime(p.purchased_at) },
  {
    key: 'customer',
    header: 'Customer',
    render: (p) => (
      <Stack gap={0}>
        <Text size="sm" fw={500}>
          {p.email}
        </Text>
        <Text size="xs" c="dimmed">
          {[p.first_name, p.last_name].filter(Boolean).join(' ')}
        </Text>
      </Stack>
    ),
  },
  { key: 'product', header: 'Product', render: (p) => p.product },
  {
    key: 'channel',
    header: 'Channel',
    render: (p) => (
      <Stack gap={0}>
        <Text size="sm">{label(p.channel)}</Text>
        <Text size="xs" c="dimmed">
          {[p.provider, p.reseller].filter(Boolean).join(' · ')}
        </Text>
      </Stack>
    ),
  },
  { key: 'type', header: 'Type', render: (p) => label(p.record_type) },
  { key: 'status', header: 'Status', render: (p) => <StatusBadge status={p.status} /> },
  {
    key: 'refund',
    header: 'Refunds',
    render: (p) => (p.refund_status === 'none' ? '—' : <Badge variant="light" color="orange">{`${label(p.refund_status)} (${formatMinor(p.refunded_cents, p.currency)})`}</Badge>),
  },
  { key: 'amount', header: 'Amount', render: (p) => formatMinor(p.sale_price_cents, p.currency), numeric: true },
  { key: 'reference', header: 'Reference', render: (p) => <Code>{p.order_reference}</Code> },
];

/** One row per order item, paged on the server; the search and the eight filters live in the URL. */
export default function PurchasesPage() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const [params, setParams] = useListParams(PURCHASE_FILTERS);
  const [dialog, setDialog] = useState<'import' | 'grant' | null>(null);
  const filters = purchaseQuery(params);
  const list = useQuery({
    queryKey: [...purchaseKeys.all, 'list', params],
    queryFn: () => unwrap(api.GET('/api/developer/purchases', { params: { query: { ...filters, page: params.page, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const mayManage = access.can('purchases.manage');
  const refresh = () => void client.invalidateQueries({ queryKey: purchaseKeys.all });
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageHeader
        title="Purchases"
        description="Every order item: sales, free claims, imports and access you granted. Nothing here charges or refunds anyone."
        actions={
          <RecordsActions
            exportRun={() => saveDownload(api.GET('/api/developer/purchases/export', { params: { query: filters }, parseAs: 'blob' }), datedName('purchases'))}
            onImport={mayManage ? () => setDialog('import') : undefined}
          >
            {mayManage && (
              <Button leftSection={<IconGift size={16} aria-hidden />} onClick={() => setDialog('grant')}>
                Grant access
              </Button>
            )}
          </RecordsActions>
        }
      />
      <Stack>
        <Group align="flex-end">
          <SearchField label="Search" description="E-mail, name, product or reference" value={params.search} onSearch={(search) => setParams({ search })} />
        </Group>
        <PurchaseFilters values={params} onChange={setParams} />
        <RecordsTable
          title="Purchases"
          query={list}
          columns={columns}
          rowKey={(p) => p.order_item_id}
          page={params.page}
          pageSize={PAGE_SIZE}
          onPage={(page) => setParams({ page })}
          filtered={filtered}
          emptyFiltered={<EmptyState title="No purchase matches">Clear the search and the filters to see every purchase.</EmptyState>}
          empty={
            <EmptyState title="No purchases yet">
              Sales appear here as your checkout reports them.
              {mayManage ? ' Import the sales you made elsewhere, or grant access to someone without a payment.' : ''}
            </EmptyState>
          }
        />
      </Stack>
      {mayManage && <ImportDialog kind="purchases" noun="purchases" opened={dialog === 'import'} onClose={() => setDialog(null)} onImported={refresh} />}
      {mayManage && dialog === 'grant' && <ManualGrant onClose={() => setDialog(null)} onGranted={refresh} />}
    </>
  );
}
