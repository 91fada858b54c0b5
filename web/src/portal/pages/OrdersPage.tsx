import { Anchor, List, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { EmptyState } from '../../kit/EmptyState';
import { formatDate, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { OrderStatus } from '../OrderStatus';
import { type Order, ORDERS_PER_PAGE, ordersQuery } from '../queries';
import { portalPath, useWorkspaceRef } from '../session';

const columns = (ref: string): Column<Order>[] => [
  {
    key: 'date',
    header: 'Order',
    render: (o) => (
      <Stack gap={0}>
        <Anchor component={Link} to={portalPath(ref, `orders/${o.order_id}`)} fw={500}>
          {formatDate(o.purchased_at)}
        </Anchor>
        <Text size="xs" c="dimmed">
          No. {o.order_id}
        </Text>
      </Stack>
    ),
  },
  {
    key: 'items',
    header: 'Items',
    render: (o) => (
      <List size="sm" listStyleType="none" spacing={2}>
        {o.items.map((item) => (
          <List.Item key={item.order_item_id}>{item.product}</List.Item>
        ))}
      </List>
    ),
  },
  { key: 'total', header: 'Total', render: (o) => formatMinor(o.total_cents, o.currency), numeric: true },
  { key: 'status', header: 'Status', render: (o) => <OrderStatus order={o} /> },
];

/** The buyer's orders at this store, newest first, paged by the server; the page is in the URL. */
export default function OrdersPage() {
  const ref = useWorkspaceRef();
  const [params, setParams] = useListParams({ page: 1 });
  const query = useQuery(ordersQuery(params.page));
  return (
    <>
      <PageHeader title="Orders" description="What you bought at this store, newest first, with refunds." />
      <QueryState query={query} label="Loading your orders">
        {(data) => (
          <PagedTable
            caption={`Your orders (${data.total})`}
            columns={columns(ref)}
            rows={data.rows}
            rowKey={(o) => o.order_id}
            total={data.total}
            page={params.page}
            pageSize={ORDERS_PER_PAGE}
            onPage={(page) => setParams({ page })}
            minWidth={420}
            empty={
              <EmptyState title="No orders here">
                Orders made with the address you signed in with appear here. Bought with another address? Sign out and sign in with that one.
              </EmptyState>
            }
          />
        )}
      </QueryState>
    </>
  );
}
