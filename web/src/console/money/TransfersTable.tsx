import { Group, Stack, Text } from '@mantine/core';
import { IconArrowRight } from '@tabler/icons-react';
import { Fragment } from 'react';
import { type Column, DataTable } from '../../kit/DataTable';
import { formatDateTime, formatMinor } from '../../kit/format';
import { StatusBadge } from '../../kit/StatusBadge';
import type { Accounting } from './queries';

export type Transfer = Accounting['transfers'][number];

const PATH: Record<Transfer['status'], string[]> = {
  reserved: ['reserved'],
  submitted: ['reserved', 'submitted'],
  paid: ['reserved', 'submitted', 'paid'],
  failed: ['reserved', 'submitted', 'failed'],
  reconciliation_required: ['reserved', 'reconciliation_required'],
};

/** Where a transfer stands on its way reserved → submitted → paid or failed; only the provider's word makes it paid. */
export function TransferPath({ transfer }: { transfer: Transfer }) {
  const steps = PATH[transfer.status];
  return (
    <Stack gap={2}>
      <Group gap={4} wrap="wrap">
        {steps.map((s, i) => (
          <Fragment key={s}>
            {i > 0 && <IconArrowRight size={12} aria-hidden />}
            {i === steps.length - 1 ? <StatusBadge status={s} /> : <Text size="xs" c="dimmed">{s}</Text>}
          </Fragment>
        ))}
      </Group>
      {transfer.failure_reason && (
        <Text size="xs" c="dimmed">
          {transfer.failure_reason}
        </Text>
      )}
    </Stack>
  );
}

export function TransfersTable({ transfers, names, caption }: { transfers: Transfer[]; names: Map<number, string>; caption: string }) {
  const columns: Column<Transfer>[] = [
    { key: 'created', header: 'Reserved', render: (t) => formatDateTime(t.created_at) },
    { key: 'program', header: 'Program', render: (t) => names.get(t.agreement_id) ?? `Agreement ${t.agreement_id}` },
    { key: 'amount', header: 'Amount', render: (t) => formatMinor(t.amount_cents, t.currency), numeric: true },
    { key: 'provider', header: 'Provider', render: (t) => `${t.provider}${t.livemode ? '' : ' (sandbox)'}` },
    { key: 'status', header: 'State', render: (t) => <TransferPath transfer={t} /> },
    { key: 'submitted', header: 'Submitted', render: (t) => formatDateTime(t.submitted_at) },
    { key: 'settled', header: 'Settled', render: (t) => formatDateTime(t.settled_at) },
  ];
  if (transfers.length === 0) return <Text size="sm">No transfers yet: a payout run transfers payable balances to partners with a ready destination.</Text>;
  return <DataTable caption={caption} columns={columns} rows={transfers} rowKey={(t) => t.id} />;
}
