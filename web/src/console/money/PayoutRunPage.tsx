import { Alert, Anchor, Button, Group, List, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { isProblem } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime, formatMinor } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { programsQuery } from '../partners/queries';
import { type PayoutRun, payoutRunQuery, runMoving, SKIP_REASONS } from './queries';
import { TransfersTable } from './TransfersTable';

function RunView({ run }: { run: PayoutRun }) {
  const programs = useQuery(programsQuery);
  const names = new Map((programs.data ?? []).map((p) => [p.id, p.name]));
  const moving = runMoving(run);
  return (
    <Stack gap="lg">
      <Section id="run" title="The run" actions={<StatusBadge status={run.state} />}>
        <SimpleGrid cols={{ base: 1, sm: 4 }}>
          <Text size="sm">Mode: {run.livemode ? 'live' : 'test (sandbox)'}</Text>
          <Text size="sm">Requested {formatDateTime(run.created_at)}{run.requested_by ? ` by ${run.requested_by.email}` : ''}</Text>
          <Text size="sm">Started {formatDateTime(run.started_at)}</Text>
          <Text size="sm">Finished {formatDateTime(run.finished_at)}</Text>
        </SimpleGrid>
        {run.failure && <Alert color="red" title="The run failed">{run.failure}</Alert>}
        <Text size="sm" aria-live="polite">
          {moving ? 'Following the run: this page updates every second until every transfer is settled.' : 'Every transfer of this run is settled.'}
        </Text>
      </Section>
      <Section id="transfers" title="Transfers of this run">
        {run.transfers.length === 0 && run.state !== 'queued' && run.state !== 'running' ? (
          <Text size="sm">This run transferred nothing{run.skipped.length ? ': see why below' : ''}.</Text>
        ) : (
          <TransfersTable transfers={run.transfers} names={names} caption="Transfers: reserved → submitted → paid or failed" />
        )}
        {run.transfers_truncated && <Text size="xs">Only the first 1,000 transfers are listed.</Text>}
      </Section>
      {run.skipped.length > 0 && (
        <Section id="skipped" title="Not paid by this run">
          <List size="sm" spacing={4}>
            {run.skipped.map((s, i) => (
              <List.Item key={i}>
                {names.get(s.agreement_id) ?? `Agreement ${s.agreement_id}`} ({s.currency.toUpperCase()}): {SKIP_REASONS[s.reason] ?? s.reason.replace(/_/g, ' ')}
              </List.Item>
            ))}
          </List>
        </Section>
      )}
      <Group>
        <Anchor component={Link} to="/money/accounting">
          Partner accounting
        </Anchor>
        <Anchor component={Link} to="/money/payouts">
          Payouts
        </Anchor>
      </Group>
    </Stack>
  );
}

/** One payout run, polled while it or its transfers are still moving. */
export default function PayoutRunPage() {
  const runId = Number(useParams().runId);
  const query = useQuery({ ...payoutRunQuery(runId), enabled: Number.isInteger(runId) && runId > 0 });
  if (!Number.isInteger(runId) || runId < 1 || isProblem(query.error, 404)) {
    return (
      <>
        <PageHeader title="Payout run not found" />
        <EmptyState title="There is no such payout run" action={<Button component={Link} to="/money/payouts">Back to payouts</Button>}>
          It may belong to another workspace.
        </EmptyState>
      </>
    );
  }
  const total = query.data?.transfers.reduce((sum, t) => sum + BigInt(t.amount_cents), 0n);
  const currency = query.data?.transfers[0]?.currency;
  return (
    <>
      <PageHeader
        title={`Payout run ${runId}`}
        description={total !== undefined && currency && query.data?.transfers.every((t) => t.currency === currency) ? `${formatMinor(total, currency)} in ${query.data.transfers.length === 1 ? '1 transfer' : `${query.data.transfers.length} transfers`}` : undefined}
      />
      <QueryState query={query} label="Loading the payout run">
        {(run) => <RunView run={run} />}
      </QueryState>
    </>
  );
}
