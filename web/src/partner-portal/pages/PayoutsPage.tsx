import { Alert, Button, Checkbox, Group, Paper, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { IconExternalLink } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { api, type paths, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { type Accounting, accountingQuery } from '../queries';
import { notify } from '../../kit/notify';

type Destination = Accounting['destinations'][number];
type CardAnswer = paths['/api/partner-portal/programs/payouts/card-provider']['post']['responses'][200]['content']['application/json'];

const columns: Column<Destination>[] = [
  { key: 'provider', header: 'Provider', render: (d) => (d.provider === 'card' ? 'Card provider' : 'Wallet') },
  { key: 'display', header: 'Destination', render: (d) => d.display },
  { key: 'status', header: 'Status', render: (d) => <StatusBadge status={d.status} /> },
  {
    key: 'available',
    header: 'Transfers from',
    render: (d) => (d.hold_until && !d.transfers_allowed ? `${formatDateTime(d.available_at)} (security hold after a change)` : formatDateTime(d.available_at)),
  },
];

function CardOnboarding({ livemode, current }: { livemode: boolean; current: Destination | undefined }) {
  const client = useQueryClient();
  // The provider's newest answer: each one's link replaces the one before (a link works once).
  const [answer, setAnswer] = useState<CardAnswer | null>(null);
  const settle = (next: CardAnswer) => {
    setAnswer(next);
    void client.invalidateQueries(accountingQuery);
  };
  const start = useMutation({
    mutationFn: () => unwrap(api.POST('/api/partner-portal/programs/payouts/card-provider', { body: { livemode } })),
    onSuccess: (next) => {
      if (next.ready) notify(`${next.display} is ready for payouts.`, 'green');
      settle(next);
    },
  });
  const refresh = useMutation({
    mutationFn: () => unwrap(api.POST('/api/partner-portal/programs/payouts/card-provider/refresh', { body: { livemode } })),
    onSuccess: settle,
  });
  // Back from the provider's pages (a fresh page load): ask once whether onboarding is complete now.
  const onboarding = current?.provider === 'card' && current.status === 'onboarding';
  const { mutate: check } = refresh;
  const checked = useRef(false);
  useEffect(() => {
    if (!onboarding || checked.current || answer) return;
    checked.current = true;
    check();
  }, [onboarding, answer, check]);
  const ready = answer?.ready ? answer.display : current?.provider === 'card' && current.status === 'ready' ? current.display : null;
  const link = answer && !answer.ready ? answer.url : null;
  return (
    <Paper withBorder p="md">
      <Stack>
        <Title order={2} size="h4">
          Card provider
        </Title>
        <Text size="sm">
          Payouts to a card or bank account through the payment provider’s hosted onboarding.{' '}
          {livemode ? '' : 'In sandbox mode no real account is created and no money moves.'}
        </Text>
        {ready ? (
          <Alert color="green">{ready} is ready for payouts.</Alert>
        ) : (
          <>
            {link && (
              <Alert color="blue" title="Finish onboarding with the provider">
                <Stack gap="xs">
                  <Text size="sm">The link works once, for an hour. Come back to this page when you are done.</Text>
                  <Button component="a" href={link} rel="noreferrer" rightSection={<IconExternalLink size={16} aria-hidden />} w="fit-content">
                    Continue onboarding
                  </Button>
                </Stack>
              </Alert>
            )}
            {current?.provider === 'wallet' && (
              <Text size="sm">Switching from your wallet to a card is a change of destination: transfers wait for the security hold.</Text>
            )}
            {(start.isError || refresh.isError) && <ProblemAlert error={start.error ?? refresh.error} />}
            <Group>
              <Button onClick={() => start.mutate()} loading={start.isPending} variant={link ? 'default' : 'filled'}>
                {onboarding ? 'Get a new onboarding link' : 'Set up card payouts'}
              </Button>
              {onboarding && (
                <Button variant="default" onClick={() => check()} loading={refresh.isPending}>
                  Check onboarding status
                </Button>
              )}
            </Group>
          </>
        )}
      </Stack>
    </Paper>
  );
}

function WalletSetup({ livemode, current }: { livemode: boolean; current: Destination | undefined }) {
  const [confirmed, setConfirmed] = useState(false);
  const client = useQueryClient();
  const register = useMutation({
    mutationFn: () => unwrap(api.POST('/api/partner-portal/programs/payouts/wallet-provider', { body: { livemode, confirm_verified_email: true } })),
    onSuccess: (answer) => {
      notify(`Payouts go to the wallet of ${answer.destination}.`, 'green');
      void client.invalidateQueries(accountingQuery);
    },
  });
  const active = current?.provider === 'wallet';
  return (
    <Paper withBorder p="md">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          register.mutate();
        }}
      >
        <Stack>
          <Title order={2} size="h4">
            Wallet
          </Title>
          <Text size="sm">Payouts to the wallet of the e-mail address you signed in with, which a sign-in link verified. No other address can be used.</Text>
          {active ? (
            <Alert color="green">Payouts go to the wallet of {current.display}.</Alert>
          ) : (
            <>
              {current?.status === 'ready' && (
                <Text size="sm">Switching from your card to the wallet is a change of destination: transfers wait for the security hold.</Text>
              )}
              <Checkbox checked={confirmed} onChange={(e) => setConfirmed(e.currentTarget.checked)} label="Pay to the verified e-mail address of this account" />
              {register.isError && <ProblemAlert error={register.error} />}
              <Button type="submit" disabled={!confirmed} loading={register.isPending} w="fit-content">
                Use my wallet
              </Button>
            </>
          )}
        </Stack>
      </form>
    </Paper>
  );
}

/**
 * Where payouts go: the current destination per mode, card onboarding (the sandbox's hosted pages
 * walked in the browser), and the wallet of the verified address. The mode is in the URL.
 */
export default function PayoutsPage() {
  const query = useQuery(accountingQuery);
  const [params, setParams] = useListParams({ mode: 'sandbox' });
  const livemode = params.mode === 'live';
  return (
    <>
      <PageHeader
        title="Payout destinations"
        description="One destination per mode serves all your programs. Changing a ready destination starts a security hold before transfers go to the new one."
      />
      <Stack>
        <SegmentedControl
          aria-label="Mode"
          w="fit-content"
          value={params.mode}
          onChange={(mode) => setParams({ mode })}
          data={[
            { value: 'sandbox', label: 'Sandbox' },
            { value: 'live', label: 'Live' },
          ]}
        />
        <QueryState query={query} label="Loading your payout destinations">
          {(data) => {
            const destinations = data.destinations.filter((d) => d.livemode === livemode);
            const current = destinations.find((d) => d.status === 'onboarding' || d.status === 'ready');
            return (
              <Stack>
                {destinations.length > 0 ? (
                  <DataTable caption={`${livemode ? 'Live' : 'Sandbox'} payout destinations`} columns={columns} rows={destinations} rowKey={(d) => `${d.provider}:${d.display}:${d.status}`} />
                ) : (
                  <EmptyState title="No payout destination yet">Set up the card provider or your wallet below; payable balances are transferred to it.</EmptyState>
                )}
                <CardOnboarding key={`card-${params.mode}`} livemode={livemode} current={current} />
                <WalletSetup key={`wallet-${params.mode}`} livemode={livemode} current={current} />
              </Stack>
            );
          }}
        </QueryState>
      </Stack>
    </>
  );
}
