import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { IconSend } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { SegmentedField } from '../../kit/SegmentedField';
import { useMemberAccess } from '../member-access';
import { programsQuery } from '../partners/queries';
import { accountingQuery, moneyKeys } from './queries';
import { TransfersTable } from './TransfersTable';

/** Starting a payout run from the console (partners.manage; live mode is the owner's alone), and the latest transfers. */
export default function PayoutsPage() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [mode, setMode] = useState<'test' | 'live'>('test');
  const accounting = useQuery(accountingQuery(1, 20));
  const programs = useQuery(programsQuery);
  const names = new Map((programs.data ?? []).map((p) => [p.id, p.name]));
  const start = useMutation({
    mutationFn: (livemode: boolean) => unwrap(api.POST('/api/developer/partners/payouts/runs', { body: { livemode } })),
    onSuccess: async (run) => {
      await client.invalidateQueries({ queryKey: moneyKeys.all });
      void navigate(`/money/payouts/runs/${run.id}`);
    },
  });
  const mayRun = access.can('partners.manage');
  return (
    <>
      <PageHeader title="Payouts" description="Payout runs transfer every payable partner balance that reaches the minimum to the partner’s ready destination." />
      <Stack gap="lg">
        {mayRun ? (
          <Section id="run" title="Start a payout run">
            <Text size="sm">
              The run works on the server in the background: it reserves each payable balance, submits it to the payout provider under an idempotency key,
              and the transfer is paid only when the provider confirms it. Test mode uses the built-in sandbox providers and moves no real money.
            </Text>
            {access.owner ? (
              <SegmentedField
                label="Mode"
                value={mode}
                onChange={setMode}
                data={[
                  { value: 'test', label: 'Test (sandbox)' },
                  { value: 'live', label: 'Live' },
                ]}
              />
            ) : (
              <Text size="sm" c="dimmed">
                Test mode (sandbox). Live payout runs are the workspace owner’s alone.
              </Text>
            )}
            {mode === 'live' && (
              <Alert color="orange" variant="light" title="Live mode sends real money">
                Partners with a live destination are paid through the live provider.
              </Alert>
            )}
            {start.isError && <ProblemAlert error={start.error} />}
            <Group>
              <Button leftSection={<IconSend size={16} aria-hidden />} loading={start.isPending} onClick={() => start.mutate(mode === 'live')} color={mode === 'live' ? 'orange' : undefined}>
                {mode === 'live' ? 'Start a live payout run' : 'Start a sandbox payout run'}
              </Button>
            </Group>
          </Section>
        ) : (
          <Alert variant="light" color="gray">
            Starting a payout run needs the partners.manage permission.
          </Alert>
        )}
        <Section id="transfers" title="Latest transfers">
          <QueryState query={accounting} label="Loading the transfers">
            {(data) => <TransfersTable transfers={data.transfers} names={names} caption="Transfers to partners, newest first" />}
          </QueryState>
        </Section>
      </Stack>
    </>
  );
}
