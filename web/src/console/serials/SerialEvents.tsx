import { Code, Stack, Text } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { type SerialEvent, serialKeys } from './model';

const PAGE_SIZE = 20;

const columns: Column<SerialEvent>[] = [
  { key: 'when', header: 'When', render: (e) => formatDateTime(e.created_at) },
  { key: 'action', header: 'Action', render: (e) => <Code>{e.action}</Code> },
  { key: 'by', header: 'By', render: (e) => (e.actor_account_id === null ? e.actor_type : `${e.actor_type} #${e.actor_account_id}`) },
  { key: 'status', header: 'Status', render: (e) => (e.before_status || e.after_status ? `${e.before_status ?? '—'} → ${e.after_status ?? '—'}` : '—') },
  {
    key: 'reason',
    header: 'Reason and note',
    render: (e) =>
      e.reason || e.note ? (
        <Stack gap={0}>
          {e.reason && <Text size="sm">{e.reason}</Text>}
          {e.note && (
            <Text size="sm" c="dimmed">
              {e.note}
            </Text>
          )}
        </Stack>
      ) : (
        '—'
      ),
  },
];

/** Everything that happened to the serial, oldest first: generation or import, access actions, portal visibility, activations. */
export function SerialEvents({ serialId }: { serialId: number }) {
  const [params, setParams] = useListParams({ eventsPage: 1 });
  const list = useQuery({
    queryKey: [...serialKeys.one(serialId), 'events', params.eventsPage],
    queryFn: () => unwrap(api.GET('/api/developer/serials/{serialId}/events', { params: { path: { serialId }, query: { page: params.eventsPage, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Section id="audit" title="Audit trail">
      <QueryState query={list} label="Loading the audit trail">
        {(data) => (
          <PagedTable
            caption="Audit trail, oldest first"
            columns={columns}
            rows={data.rows}
            rowKey={(e) => e.id}
            total={data.total}
            page={params.eventsPage}
            pageSize={PAGE_SIZE}
            onPage={(eventsPage) => setParams({ eventsPage })}
            empty={<EmptyState title="Nothing recorded yet">Actions on this serial appear here with who took them and why.</EmptyState>}
          />
        )}
      </QueryState>
    </Section>
  );
}
