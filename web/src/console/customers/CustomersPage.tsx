import { Badge, Group, Select, Stack, Text, VisuallyHidden } from '@mantine/core';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type paths, unwrap } from '../../api/client';
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
import { RemoveCustomer, RemoveCustomerButton } from './RemoveCustomer';

export type Customer = paths['/api/developer/customers']['get']['responses'][200]['content']['application/json']['rows'][number];

const PAGE_SIZE = 50;
export const customerKeys = { all: ['console', 'customers'] as const };

/** Customers of the workspace within the member's products, paged on the server; search, product, date window and page live in the URL. */
export default function CustomersPage() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const products = useProductOptions();
  const [params, setParams] = useListParams({ search: '', productId: '', dateRange: '', page: 1 });
  const [importing, setImporting] = useState(false);
  const [removing, setRemoving] = useState<Customer | null>(null);
  const filters = {
    ...(params.search ? { search: params.search } : {}),
    ...(idParam(params.productId) ? { productId: idParam(params.productId) } : {}),
    ...(params.dateRange ? { dateRange: params.dateRange } : {}),
  };
  const list = useQuery({
    queryKey: [...customerKeys.all, 'list', params],
    queryFn: () => unwrap(api.GET('/api/developer/customers', { params: { query: { ...filters, page: params.page, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const mayManage = access.can('customers.manage');
  const refresh = () => void client.invalidateQueries({ queryKey: customerKeys.all });

  const columns: Column<Customer>[] = [
    {
      key: 'customer',
      header: 'Customer',
      render: (c) => (
        <Stack gap={0}>
          <Text fw={500}>{c.email}</Text>
          <Text size="sm" c="dimmed">
            {[c.first_name, c.last_name].filter(Boolean).join(' ') || 'No name given'}
          </Text>
        </Stack>
      ),
    },
    { key: 'status', header: 'Status', render: (c) => <StatusBadge status={c.status} /> },
    { key: 'verified', header: 'E-mail', render: (c) => (c.email_verification_status === 'verified' ? 'Verified' : 'Not verified') },
    {
      key: 'products',
      header: 'Products',
      render: (c) =>
        c.product_ids.length === 0 ? (
          '—'
        ) : (
          <Group gap={4}>
            {c.product_ids.map((id) => (
              <Badge key={id} variant="outline" color="gray">
                {products.name(id)}
              </Badge>
            ))}
          </Group>
        ),
    },
    { key: 'since', header: 'Customer since', render: (c) => formatDate(c.created_at) },
    {
      key: 'actions',
      header: <VisuallyHidden>Actions</VisuallyHidden>,
      render: (c) => (mayManage && c.status === 'active' ? <RemoveCustomerButton customer={c} onClick={() => setRemoving(c)} /> : null),
    },
  ];
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageHeader
        title="Customers"
        description="Everyone who bought, was granted or was imported for your products."
        actions={
          <RecordsActions
            exportRun={() => saveDownload(api.GET('/api/developer/customers/export', { params: { query: filters }, parseAs: 'blob' }), datedName('customers'))}
            onImport={mayManage ? () => setImporting(true) : undefined}
          />
        }
      />
      <Stack>
        <Group align="flex-end" wrap="wrap">
          <SearchField label="Search" description="E-mail or name" value={params.search} onSearch={(search) => setParams({ search })} />
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
          <Select
            label="Customer since"
            data={DATE_RANGES}
            value={params.dateRange}
            onChange={(value) => setParams({ dateRange: value ?? '' })}
            allowDeselect={false}
            w={200}
          />
        </Group>
        <RecordsTable
          title="Customers"
          query={list}
          columns={columns}
          rowKey={(c) => c.id}
          page={params.page}
          pageSize={PAGE_SIZE}
          onPage={(page) => setParams({ page })}
          filtered={filtered}
          emptyFiltered={<EmptyState title="No customer matches">Clear the search or choose “All products” and “Any time” to see every customer.</EmptyState>}
          empty={
            <EmptyState title="No customers yet">
              Customers appear when someone buys through your checkout or you grant access.
              {mayManage ? ' To bring existing customers over, use Import with a CSV file or the demo template.' : ''}
            </EmptyState>
          }
        />
      </Stack>
      {mayManage && <ImportDialog kind="customers" noun="customers" opened={importing} onClose={() => setImporting(false)} onImported={refresh} />}
      {removing && <RemoveCustomer customer={removing} onClose={() => setRemoving(null)} onRemoved={refresh} />}
    </>
  );
}
