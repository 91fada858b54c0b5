import { Anchor, Group, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { isProblem } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime, formatMinor } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { Fact } from '../../kit/Fact';
import { OrderStatus } from '../OrderStatus';
import { type Order, orderQuery } from '../queries';
import { portalPath, useWorkspaceRef } from '../session';

type Item = Order['items'][number];

const itemColumns: Column<Item>[] = [
  { key: 'product', header: 'Product', render: (i) => i.product },
  { key: 'paid', header: 'Paid', render: (i) => formatMinor(i.amount_cents, i.currency), numeric: true },
  { key: 'refunded', header: 'Refunded', render: (i) => (i.refunded_cents > 0 ? formatMinor(i.refunded_cents, i.currency) : '—'), numeric: true },
  { key: 'refund', header: 'Refund', render: (i) => (i.refund_status === 'none' ? '—' : <StatusBadge status={i.refund_status} />) },
];

function OrderView({ order }: { order: Order }) {
  const ref = useWorkspaceRef();
  return (
    <Stack>
      <PageHeader
        title={`Order ${order.order_id}`}
        description={`Bought ${formatDateTime(order.purchased_at)}`}
        actions={
          <Anchor component={Link} to={portalPath(ref, 'orders')}>
            All orders
          </Anchor>
        }
      />
      <Paper withBorder p="md">
        <SimpleGrid cols={{ base: 1, xs: 3 }} component="dl" m={0}>
          <Fact label="Total">{formatMinor(order.total_cents, order.currency)}</Fact>
          <Fact label="Status">
            <OrderStatus order={order} />
          </Fact>
          <Fact label="Invoice">{order.invoice_available ? 'Available: ask the store for it' : 'None for this order'}</Fact>
        </SimpleGrid>
      </Paper>
      <DataTable caption="Items" columns={itemColumns} rows={order.items} rowKey={(i) => i.order_item_id} minWidth={420} />
      <Group>
        <Text size="sm">
          Keys and devices of these products are under{' '}
          <Anchor component={Link} to={portalPath(ref, 'licenses')}>
            Licenses and devices
          </Anchor>
          , their files under{' '}
          <Anchor component={Link} to={portalPath(ref, 'downloads')}>
            Downloads
          </Anchor>
          .
        </Text>
      </Group>
    </Stack>
  );
}

/** One order with its items; one that is not the buyer's, or not shown in the portal, is "not found". */
export default function OrderPage() {
  const ref = useWorkspaceRef();
  const orderId = Number(useParams().orderId);
  const valid = Number.isInteger(orderId) && orderId > 0;
  const query = useQuery({ ...orderQuery(orderId), enabled: valid });
  if (!valid || isProblem(query.error, 404)) {
    return (
      <>
        <PageHeader title="Order not found" />
        <EmptyState title="No such order" action={<Anchor component={Link} to={portalPath(ref, 'orders')}>See your orders</Anchor>}>
          This order does not exist or is not shown in your portal.
        </EmptyState>
      </>
    );
  }
  return (
    <QueryState query={query} label="Loading the order">
      {(order) => <OrderView order={order} />}
    </QueryState>
  );
}
