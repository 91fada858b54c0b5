import { Anchor, Badge, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useDebouncedCallback } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { EmptyState } from '../../kit/EmptyState';
import { formatBps } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { consentSummary, rateTerms } from './consent';
import { type Program, programsQuery } from './queries';
import { ReferralLinkCell } from './ReferralLink';
import { SEARCH_PAUSE_MS } from '../records/controls';

const PAGE_SIZE = 20;
const STATUSES = ['pending', 'accepted', 'active', 'paused', 'ended'];

const columns: Column<Program>[] = [
  {
    key: 'name',
    header: 'Program',
    render: (p) => (
      <Stack gap={0}>
        <Anchor component={Link} to={`/partners/programs/${p.id}`} fw={500}>
          {p.name}
        </Anchor>
        <Text size="xs" c="dimmed">
          {p.kind} · {p.recipient_email}
        </Text>
      </Stack>
    ),
  },
  {
    key: 'status',
    header: 'Status',
    render: (p) => (
      <Group gap={4}>
        <StatusBadge status={p.status} />
        {p.revision_pending && (
          <Badge variant="outline" color="blue" size="sm">
            revision proposed
          </Badge>
        )}
      </Group>
    ),
  },
  {
    key: 'rate',
    header: 'Rate',
    render: (p) => {
      const terms = rateTerms(p);
      return terms ? `${formatBps(terms.rate_bps)}${p.accepted_terms ? '' : ' (proposed)'}` : '—';
    },
    numeric: true,
  },
  { key: 'consent', header: 'Live consent', render: (p) => consentSummary(p) },
  { key: 'link', header: 'Referral link', render: (p) => (p.referral_url ? <ReferralLinkCell url={p.referral_url} name={p.name} /> : <Text size="sm">— (collaborator)</Text>) },
];

/** The workspace's partner agreements with their status and referral links; filters and page in the URL. */
export default function ProgramsPage() {
  const access = useMemberAccess();
  const query = useQuery(programsQuery);
  const [params, setParams] = useListParams({ status: '', kind: '', search: '', page: 1 });
  const [search, setSearch] = useState(params.search);
  const applySearch = useDebouncedCallback((value: string) => setParams({ search: value.trim() }), SEARCH_PAUSE_MS);
  const mayManage = access.can('partners.manage');
  const create = mayManage && (
    <Button component={Link} to="/partners/programs/new" leftSection={<IconPlus size={16} aria-hidden />}>
      New program
    </Button>
  );
  return (
    <>
      <PageHeader title="Partner programs" description="Affiliates and collaborators: their terms, status, consent and referral links." actions={create} />
      <QueryState query={query} label="Loading the programs">
        {(programs) => {
          if (programs.length === 0) {
            return (
              <EmptyState title="No partner programs yet" action={create || undefined}>
                {mayManage
                  ? 'Invite an affiliate (a commission on referred sales) or a collaborator (a share of a product’s sales): they accept by e-mail.'
                  : 'A teammate with partners.manage creates them.'}
              </EmptyState>
            );
          }
          const needle = params.search.trim().toLowerCase();
          const shown = programs.filter(
            (p) =>
              (!params.status || p.status === params.status) &&
              (!params.kind || p.kind === params.kind) &&
              (!needle || p.name.toLowerCase().includes(needle) || p.recipient_email.toLowerCase().includes(needle)),
          );
          return (
            <Stack>
              <Group align="flex-end" wrap="wrap">
                <TextInput
                  label="Search name or e-mail"
                  value={search}
                  onChange={(e) => {
                    setSearch(e.currentTarget.value);
                    applySearch(e.currentTarget.value);
                  }}
                  w={240}
                />
                <Select
                  label="Status"
                  data={[{ value: '', label: 'All statuses' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
                  value={params.status}
                  onChange={(v) => setParams({ status: v ?? '' })}
                  allowDeselect={false}
                  w={180}
                />
                <Select
                  label="Kind"
                  data={[
                    { value: '', label: 'All kinds' },
                    { value: 'affiliate', label: 'Affiliates' },
                    { value: 'collaborator', label: 'Collaborators' },
                  ]}
                  value={params.kind}
                  onChange={(v) => setParams({ kind: v ?? '' })}
                  allowDeselect={false}
                  w={180}
                />
              </Group>
              <PagedTable
                caption={`${shown.length} of ${programs.length} programs`}
                columns={columns}
                rows={shown.slice((params.page - 1) * PAGE_SIZE, params.page * PAGE_SIZE)}
                rowKey={(p) => p.id}
                total={shown.length}
                page={params.page}
                pageSize={PAGE_SIZE}
                onPage={(page) => setParams({ page })}
                empty={<EmptyState title="No program matches">Clear the search or choose “All statuses” and “All kinds”.</EmptyState>}
              />
            </Stack>
          );
        }}
      </QueryState>
    </>
  );
}
