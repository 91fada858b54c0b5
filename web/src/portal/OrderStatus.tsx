import { Group } from '@mantine/core';
import { StatusBadge } from '../kit/StatusBadge';
import type { Order } from './queries';

/** The order's status, and its refund when there was one (`partial` or `full`). */
export function OrderStatus({ order }: { order: Pick<Order, 'status' | 'refund_status'> }) {
  return (
    <Group gap={4}>
      <StatusBadge status={order.status} />
      {order.refund_status !== 'none' && <StatusBadge status={order.refund_status === 'full' ? 'refunded' : 'partly_refunded'} />}
    </Group>
  );
}
