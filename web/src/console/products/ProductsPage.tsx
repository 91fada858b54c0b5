import { Anchor, Button, Group, Modal, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { IconPlus } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { ProductForm, type ProductSubmit, STATUS_OPTIONS } from './ProductForm';
import { type Product, productKeys, type ProductStatus } from './queries';
import { SEARCH_PAUSE_MS } from '../records/controls';

const PAGE_SIZE = 20;

const columns: Column<Product>[] = [
  {
    key: 'name',
    header: 'Product',
    render: (p) => (
      <Stack gap={0}>
        <Anchor component={Link} to={`/products/${p.id}`} fw={500}>
          {p.name}
        </Anchor>
        <Text size="xs" c="dimmed">
          {p.productAppId}
        </Text>
      </Stack>
    ),
  },
  { key: 'status', header: 'Status', render: (p) => <StatusBadge status={p.status} /> },
  { key: 'price', header: 'Price', render: (p) => formatMinor(p.priceCents, p.currency), numeric: true },
  { key: 'activations', header: 'Activation limit', render: (p) => (p.maxActivations === 0 ? 'No limit' : p.maxActivations), numeric: true },
  { key: 'grace', header: 'Offline grace', render: (p) => `${p.offlineGraceDays} days`, numeric: true },
  { key: 'version', header: 'Current version', render: (p) => p.currentVersion ?? '—' },
  { key: 'updated', header: 'Updated', render: (p) => formatDateTime(p.updatedAt) },
];

function NewProduct({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const create = useMutation({
    mutationFn: (body: ProductSubmit) =>
      unwrap(api.POST('/api/developer/products', { body })),
    onSuccess: async (product) => {
      await client.invalidateQueries({ queryKey: productKeys.all });
      notify(`${product.name} is created.`, 'green');
      onClose();
      void navigate(`/products/${product.id}`);
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title="New product" size="lg">
      <ProductForm submitLabel="Create the product" pending={create.isPending} error={create.error} onSubmit={(body) => create.mutate(body)} onCancel={onClose} />
    </Modal>
  );
}

/** The catalogue, paged on the server; the search, status and page live in the URL. */
export default function ProductsPage() {
  const access = useMemberAccess();
  const [params, setParams] = useListParams({ search: '', status: '', page: 1 });
  const [search, setSearch] = useState(params.search);
  const [creating, setCreating] = useState(false);
  const applySearch = useDebouncedCallback((value: string) => setParams({ search: value.trim() }), SEARCH_PAUSE_MS);
  const query = useQuery({
    queryKey: [...productKeys.all, 'list', params],
    queryFn: () =>
      unwrap(
        api.GET('/api/developer/products', {
          params: { query: { page: params.page, limit: PAGE_SIZE, ...(params.search ? { search: params.search } : {}), ...(params.status ? { status: params.status as ProductStatus } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const mayCreate = access.can('products.manage') && access.allProducts;
  const filtered = params.search !== '' || params.status !== '';
  return (
    <>
      <PageHeader
        title="Products"
        description="Your catalogue: prices, activation limits and what each product needs before launch."
        actions={
          mayCreate && (
            <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setCreating(true)}>
              New product
            </Button>
          )
        }
      />
      <Stack>
        <Group align="flex-end" wrap="wrap">
          <TextInput
            label="Search by name"
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              applySearch(e.currentTarget.value);
            }}
            w={260}
          />
          <Select
            label="Status"
            data={[{ value: '', label: 'All statuses' }, ...STATUS_OPTIONS]}
            value={params.status}
            onChange={(value) => setParams({ status: value ?? '' })}
            allowDeselect={false}
            w={220}
          />
        </Group>
        <QueryState query={query} label="Loading the products">
          {(data) => (
            <PagedTable
              caption={`${data.total} products`}
              columns={columns}
              rows={data.rows}
              rowKey={(p) => p.id}
              total={data.total}
              page={params.page}
              pageSize={PAGE_SIZE}
              onPage={(page) => setParams({ page })}
              empty={
                filtered ? (
                  <EmptyState title="No product matches">Clear the search or choose “All statuses” to see every product.</EmptyState>
                ) : (
                  <EmptyState
                    title="No products yet"
                    action={
                      mayCreate && (
                        <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setCreating(true)}>
                          Create your first product
                        </Button>
                      )
                    }
                  >
                    {mayCreate
                      ? 'Create a product with its price and activation limit; then add delivery files, a version and a plugin package.'
                      : 'No product is assigned to you yet. Ask the workspace owner to assign one.'}
                  </EmptyState>
                )
              }
            />
          )}
        </QueryState>
      </Stack>
      {mayCreate && <NewProduct opened={creating} onClose={() => setCreating(false)} />}
    </>
  );
}
