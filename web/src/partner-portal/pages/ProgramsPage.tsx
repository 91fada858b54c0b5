import { Anchor, Group, Select, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { EmptyState } from '../../kit/EmptyState';
import { formatBps } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { ConsentBadge } from '../ConsentState';
import type { ProgramView } from '../model';
import { programsQuery } from '../queries';

const PAGE_SIZE = 20;
const STATUSES = ['pending', 'accepted', 'active', 'paused', 'ended'];

const columns: Column<ProgramView>[] = [
  {
    key: 'name',
    header: 'Program',
    render: (p) => (
      <Stack gap={0}>
        <Anchor component={Link} to={`/programs/${p.id}`} fw={500}>
          {p.name}
        </Anchor>
        <Text size="sm" c="dimmed">
          {p.workspaceName} · {p.kind}
        </Text>
      </Stack>
    ),
  },
  { key: 'status', header: 'Status', render: (p) => <StatusBadge status={p.status} /> },
  { key: 'rate', header: 'Rate', render: (p) => (p.acceptedTerms ? formatBps(p.acceptedTerms.rate_bps) : '—'), numeric: true },
  { key: 'consent', header: 'Live consent', render: (p) => <ConsentBadge program={p} /> },
];

/** The signed-in partner's agreements across developers; the status filter and page are in the URL. */
export default function ProgramsPage() {
  const query = useQuery(programsQuery);
  const [params, setParams] = useListParams({ status: '', page: 1 });
  return (
    <>
      <PageHeader title="Programs" description="The partner agreements you accepted, with their status, terms and live consent." />
      <QueryState query={query} label="Loading your programs">
        {(programs) => {
          const shown = programs.filter((p) => !params.status || p.status === params.status);
          const page = shown.slice((params.page - 1) * PAGE_SIZE, params.page * PAGE_SIZE);
          if (programs.length === 0) {
            return (
              <EmptyState title="No programs yet">
                When a developer invites you to a partner program, open the invitation link from the e-mail and accept it: the program then appears
                here.
              </EmptyState>
            );
          }
          return (
            <Stack>
              <Group>
                <Select
                  label="Status"
                  data={[{ value: '', label: 'All statuses' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
                  value={params.status}
                  onChange={(value) => setParams({ status: value ?? '' })}
                  allowDeselect={false}
                  w={200}
                />
              </Group>
              <PagedTable
                caption={`${shown.length} of ${programs.length} programs`}
                columns={columns}
                rows={page}
                rowKey={(p) => p.id}
                total={shown.length}
                page={params.page}
                pageSize={PAGE_SIZE}
                onPage={(n) => setParams({ page: n })}
                empty={<EmptyState title="No program has this status">Choose “All statuses” to see every program.</EmptyState>}
              />
            </Stack>
          );
        }}
      </QueryState>
    </>
  );
}
