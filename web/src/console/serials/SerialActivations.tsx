import { Button, Code, SegmentedControl, Stack, Text } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { type Activation, type Serial, serialKeys } from './model';
import { ReasonDialog } from './SerialActions';

const PAGE_SIZE = 20;

function ReleaseSeat({ serialId, activation, onClose, onReleased }: { serialId: number; activation: Activation; onClose: () => void; onReleased: (serial: Serial) => void }) {
  const release = useMutation({
    mutationFn: (body: { reason?: string; note?: string }) =>
      unwrap(
        api.DELETE('/api/developer/serials/{serialId}/activations/{activationId}', {
          params: { path: { serialId, activationId: activation.id } },
          body: { reason: body.reason ?? '', ...(body.note ? { note: body.note } : {}) },
        }),
      ),
    onSuccess: (answer) => {
      notify(answer.released ? `The seat of ${activation.machine_name ?? activation.machine_id} is released.` : 'That seat was already released.', 'green');
      onReleased(answer.serial);
      onClose();
    },
  });
  return (
    <ReasonDialog
      title={`Release the seat of ${activation.machine_name ?? activation.machine_id}`}
      explanation="The machine’s next validation fails (MACHINE_NOT_ACTIVATED); it may activate again while seats remain. The reason goes to the audit trail."
      confirmLabel="Release the seat"
      danger
      reasonRequired
      pending={release.isPending}
      error={release.error}
      onConfirm={(body) => release.mutate(body)}
      onClose={onClose}
    />
  );
}

/** The machines that activated the serial (active ones hold a seat), paged; a seat can be released one at a time. */
export function SerialActivations({ serialId, code, mayRelease, onReleased }: { serialId: number; code: string; mayRelease: boolean; onReleased: (serial: Serial) => void }) {
  const client = useQueryClient();
  const [params, setParams] = useListParams({ devices: 'active', devicesPage: 1 });
  const [releasing, setReleasing] = useState<Activation | null>(null);
  const status = params.devices === 'released' ? 'released' : params.devices === 'all' ? undefined : 'active';
  const list = useQuery({
    queryKey: [...serialKeys.one(serialId), 'activations', params],
    queryFn: () =>
      unwrap(api.GET('/api/developer/serials/{serialId}/activations', { params: { path: { serialId }, query: { page: params.devicesPage, limit: PAGE_SIZE, ...(status ? { status } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  const columns: Column<Activation>[] = [
    {
      key: 'machine',
      header: 'Machine',
      render: (a) => (
        <Stack gap={0}>
          <Text fw={500}>{a.machine_name ?? 'Unnamed machine'}</Text>
          <Code>{a.machine_id}</Code>
        </Stack>
      ),
    },
    { key: 'platform', header: 'Platform', render: (a) => [a.platform, a.app_version].filter(Boolean).join(' · ') || '—' },
    { key: 'status', header: 'Seat', render: (a) => <StatusBadge status={a.status} /> },
    { key: 'first', header: 'First seen', render: (a) => formatDateTime(a.first_seen_at) },
    { key: 'last', header: 'Last seen', render: (a) => formatDateTime(a.last_seen_at) },
    {
      key: 'release',
      header: 'Release',
      render: (a) =>
        a.status === 'active' && mayRelease ? (
          <Button size="xs" variant="outline" color="red" onClick={() => setReleasing(a)} aria-label={`Release the seat of ${a.machine_name ?? a.machine_id}`}>
            Release seat
          </Button>
        ) : (
          (a.release_reason ?? '—')
        ),
    },
  ];
  return (
    <Section id="devices" title="Devices">
      <SegmentedControl
        aria-label="Devices shown"
        data={[
          { value: 'active', label: 'Holding a seat' },
          { value: 'released', label: 'Released' },
          { value: 'all', label: 'All' },
        ]}
        value={params.devices}
        onChange={(devices) => setParams({ devices, devicesPage: 1 })}
        w="fit-content"
      />
      <QueryState query={list} label="Loading devices">
        {(data) => (
          <PagedTable
            caption={`Devices of ${code}`}
            columns={columns}
            rows={data.rows}
            rowKey={(a) => a.id}
            total={data.total}
            page={params.devicesPage}
            pageSize={PAGE_SIZE}
            onPage={(devicesPage) => setParams({ devicesPage })}
            empty={<EmptyState title="No device here">A device appears when the plugin activates this serial on a machine.</EmptyState>}
          />
        )}
      </QueryState>
      {releasing && (
        <ReleaseSeat
          serialId={serialId}
          activation={releasing}
          onClose={() => setReleasing(null)}
          onReleased={(serial) => {
            onReleased(serial);
            void client.invalidateQueries({ queryKey: serialKeys.one(serialId) });
          }}
        />
      )}
    </Section>
  );
}
