import { Badge, Group, Paper, SegmentedControl, Select, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { EmptyState } from '../../kit/EmptyState';
import { formatBps, formatDateTime, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, DataTable } from '../../kit/DataTable';
import { PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { type Accounting, accountingQuery, ENTRIES_PER_PAGE, type Entries, entriesQuery } from '../queries';

type Balance = Accounting['balance_details'][number];
type Estimate = Accounting['unfunded_earnings'][number];
type Transfer = Accounting['transfers'][number];
type Entry = Entries['rows'][number];

const TRANSFERS_PER_PAGE = 20;

const balanceColumns: Column<Balance>[] = [
  { key: 'program', header: 'Program', render: (b) => `${b.name}${b.workspace_name ? ` (${b.workspace_name})` : ''}` },
  { key: 'allocated', header: 'Allocated', render: (b) => formatMinor(b.allocated_cents, b.currency), numeric: true },
  { key: 'reversed', header: 'Reversed', render: (b) => formatMinor(b.reversed_cents, b.currency), numeric: true },
  { key: 'pending', header: 'Pending', render: (b) => formatMinor(b.pending_cents, b.currency), numeric: true },
  { key: 'payable', header: 'Payable', render: (b) => formatMinor(b.payable_cents, b.currency), numeric: true },
  { key: 'transfer', header: 'In transfer', render: (b) => formatMinor(b.in_transfer_cents, b.currency), numeric: true },
  { key: 'paid', header: 'Paid', render: (b) => formatMinor(b.paid_cents, b.currency), numeric: true },
  { key: 'owed', header: 'Owed recovery', render: (b) => formatMinor(b.recovery_outstanding_cents, b.currency), numeric: true },
];

const estimateColumns: Column<Estimate>[] = [
  { key: 'program', header: 'Program', render: (e) => e.name },
  { key: 'estimate', header: 'Estimated share', render: (e) => formatMinor(e.estimated_cents, e.currency), numeric: true },
  { key: 'payable', header: 'Payable', render: () => 'No: paid by the store or reseller, not through Patchbay' },
];

function transferColumns(names: Map<number, string>): Column<Transfer>[] {
  return [
    { key: 'created', header: 'Created', render: (t) => formatDateTime(t.created_at) },
    { key: 'program', header: 'Program', render: (t) => names.get(t.agreement_id) ?? `Agreement ${t.agreement_id}` },
    { key: 'amount', header: 'Amount', render: (t) => formatMinor(t.amount_cents, t.currency), numeric: true },
    { key: 'destination', header: 'Destination', render: (t) => `${t.provider}${t.livemode ? '' : ' (sandbox)'}` },
    {
      key: 'status',
      header: 'Status',
      render: (t) => (
        <Stack gap={2}>
          <StatusBadge status={t.status} />
          {t.failure_reason && (
            <Text size="xs" c="dimmed">
              {t.failure_reason}
            </Text>
          )}
        </Stack>
      ),
    },
    { key: 'settled', header: 'Settled', render: (t) => formatDateTime(t.settled_at ?? t.submitted_at) },
  ];
}

const entryColumns: Column<Entry>[] = [
  { key: 'created', header: 'Sale', render: (e) => formatDateTime(e.created_at) },
  { key: 'program', header: 'Program', render: (e) => `${e.program_name} (${e.workspace_name})` },
  { key: 'product', header: 'Product', render: (e) => e.product_name },
  { key: 'proceeds', header: 'Sale proceeds', render: (e) => formatMinor(e.proceeds_cents, e.currency), numeric: true },
  { key: 'rate', header: 'Your rate', render: (e) => (e.rate_bps === null ? '—' : formatBps(e.rate_bps)), numeric: true },
  {
    key: 'share',
    header: 'Your share',
    render: (e) => (
      <Group gap={4} justify="flex-end" wrap="nowrap">
        {formatMinor(e.amount_cents, e.currency)}
        {!e.funded && (
          <Badge size="xs" color="gray" variant="light">
            estimate
          </Badge>
        )}
      </Group>
    ),
    numeric: true,
  },
  { key: 'reversed', header: 'Reversed by refunds', render: (e) => formatMinor(e.reversed_cents, e.currency), numeric: true },
  { key: 'net', header: 'Net', render: (e) => formatMinor(e.net_cents, e.currency), numeric: true },
];

/** The partner's own rows of each sale's split, paged by the server; the page and the reversals switch live in the URL. */
function EntriesSection({ agreement, currency, page, reversals, onChange }: { agreement: string; currency: string; page: number; reversals: boolean; onChange: (patch: { page?: number; rows?: string }) => void }) {
  const query = useQuery(entriesQuery({ page, agreement, currency, reversals }));
  return (
    <section aria-labelledby="entries-heading">
      <Group justify="space-between" align="flex-end" mb="sm">
        <Title order={2} size="h3" id="entries-heading">
          Allocations and reversals
        </Title>
        <SegmentedControl
          aria-label="Rows to show"
          value={reversals ? 'reversals' : 'all'}
          onChange={(value) => onChange({ rows: value === 'reversals' ? 'reversals' : '' })}
          data={[
            { value: 'all', label: 'Every sale' },
            { value: 'reversals', label: 'Reversals only' },
          ]}
        />
      </Group>
      <Text size="sm" c="dimmed" mb="sm">
        Your share of each sale attributed to you, and what refunds took back of it.
      </Text>
      <QueryState query={query} label="Loading your allocations">
        {(data) => (
          <PagedTable
            caption={reversals ? 'Sales a refund reversed, newest first' : 'Your share of each sale, newest first'}
            columns={entryColumns}
            rows={data.rows}
            rowKey={(e) => `${e.allocation_id}:${e.agreement_id}`}
            total={data.total}
            page={data.page}
            pageSize={ENTRIES_PER_PAGE}
            onPage={(next) => onChange({ page: next })}
            empty={
              <EmptyState title={reversals ? 'No reversals' : 'No allocations yet'}>
                {reversals
                  ? 'No refund has reversed any of your shares.'
                  : 'A row appears for each sale attributed to you: share your referral link from the program’s page.'}
              </EmptyState>
            }
          />
        )}
      </QueryState>
    </section>
  );
}

/** Totals per currency of the balances shown: what is pending, payable, paid and owed back. */
function Totals({ balances }: { balances: Balance[] }) {
  const currencies = [...new Set(balances.map((b) => b.currency))];
  const sum = (currency: string, field: 'pending_cents' | 'payable_cents' | 'paid_cents' | 'recovery_outstanding_cents') =>
    balances.filter((b) => b.currency === currency).reduce((total, b) => total + BigInt(b[field]), 0n);
  return (
    <Stack gap="sm">
      {currencies.map((currency) => (
        <SimpleGrid key={currency} cols={{ base: 2, sm: 4 }}>
          {(
            [
              ['Pending', 'pending_cents', 'Waiting for live consent or the refund window'],
              ['Payable', 'payable_cents', 'Goes out with the next payout run'],
              ['Paid', 'paid_cents', 'Confirmed by the payout provider'],
              ['Owed recovery', 'recovery_outstanding_cents', 'Refunds after a payout, netted from future earnings'],
            ] as const
          ).map(([label, field, hint]) => (
            <Paper withBorder p="md" key={field}>
              <Text size="sm" c="dimmed">
                {label} ({currency.toUpperCase()})
              </Text>
              <Text size="xl" fw={600}>
                {formatMinor(sum(currency, field), currency)}
              </Text>
              <Text size="xs" c="dimmed">
                {hint}
              </Text>
            </Paper>
          ))}
        </SimpleGrid>
      ))}
    </Stack>
  );
}

function AccountingView({ data }: { data: Accounting }) {
  const [params, setParams] = useListParams({ agreement: '', currency: '', rows: '', transfers: 1, page: 1 });
  const names = new Map(data.programs.map((p) => [p.agreement_id, p.name]));
  const matches = (row: { agreement_id: number; currency: string }) =>
    (!params.agreement || String(row.agreement_id) === params.agreement) && (!params.currency || row.currency === params.currency);
  const balances = data.balance_details.filter(matches);
  const estimates = data.unfunded_earnings.filter(matches);
  const transfers = data.transfers.filter(matches);
  const currencies = [...new Set([...data.balance_details, ...data.unfunded_earnings, ...data.transfers].map((r) => r.currency))];

  if (data.programs.length === 0) {
    return (
      <EmptyState title="No accounting yet">
        Balances appear here once you have accepted a program. Accept an invitation from your e-mail to get started.
      </EmptyState>
    );
  }
  return (
    <Stack gap="xl">
      <Group align="flex-end" wrap="wrap">
        <Select
          label="Program"
          data={[{ value: '', label: 'All programs' }, ...data.programs.map((p) => ({ value: String(p.agreement_id), label: `${p.name} (${p.workspace_name})` }))]}
          value={params.agreement}
          onChange={(value) => setParams({ agreement: value ?? '', transfers: 1 })}
          allowDeselect={false}
          w={280}
        />
        <Select
          label="Currency"
          data={[{ value: '', label: 'All currencies' }, ...currencies.map((c) => ({ value: c, label: c.toUpperCase() }))]}
          value={params.currency}
          onChange={(value) => setParams({ currency: value ?? '', transfers: 1 })}
          allowDeselect={false}
          w={180}
        />
      </Group>
      <section aria-labelledby="funded-heading">
        <Title order={2} size="h3" id="funded-heading" mb="sm">
          Funded earnings
        </Title>
        <Text size="sm" c="dimmed" mb="sm">
          Sales collected through Patchbay’s checkout: your share is held in the ledger and paid out to your payout destination.
        </Text>
        {balances.length > 0 ? (
          <Stack>
            <Totals balances={balances} />
            <DataTable
              caption="Balances per program and currency (allocations minus reversals)"
              columns={balanceColumns}
              rows={balances}
              rowKey={(b) => `${b.agreement_id}:${b.currency}`}
            />
          </Stack>
        ) : (
          <EmptyState title="No funded earnings yet">
            Earnings appear when a sale is attributed to you: share your referral link from the program’s page.
          </EmptyState>
        )}
      </section>
      {estimates.length > 0 && (
        <section aria-labelledby="external-heading">
          <Title order={2} size="h3" id="external-heading" mb="sm">
            External estimates
          </Title>
          <Text size="sm" c="dimmed" mb="sm">
            Sales through resellers or other stores: an estimate of your share, never payable through Patchbay.
          </Text>
          <DataTable caption="Unfunded estimates" columns={estimateColumns} rows={estimates} rowKey={(e) => `${e.agreement_id}:${e.currency}`} />
        </section>
      )}
      <EntriesSection
        agreement={params.agreement}
        currency={params.currency}
        page={params.page}
        reversals={params.rows === 'reversals'}
        onChange={(patch) => setParams(patch.page === undefined ? { rows: patch.rows ?? '', transfers: params.transfers } : { page: patch.page, transfers: params.transfers })}
      />
      <section aria-labelledby="transfers-heading">
        <Title order={2} size="h3" id="transfers-heading" mb="sm">
          Transfers
        </Title>
        <PagedTable
          caption="Payout transfers, newest first"
          columns={transferColumns(names)}
          rows={transfers.slice((params.transfers - 1) * TRANSFERS_PER_PAGE, params.transfers * TRANSFERS_PER_PAGE)}
          rowKey={(t) => t.id}
          total={transfers.length}
          page={params.transfers}
          pageSize={TRANSFERS_PER_PAGE}
          onPage={(transfers) => setParams({ transfers, page: params.page })}
          empty={
            <EmptyState title="No transfers yet">
              Payable balances are transferred by the developer’s payout runs to your ready payout destination. Set one up under “Payout
              destinations”.
            </EmptyState>
          }
        />
      </section>
    </Stack>
  );
}

/** Balances (pending, payable, in transfer, paid, owed recovery), external estimates and transfers with their states. */
export default function AccountingPage() {
  const query = useQuery(accountingQuery);
  return (
    <>
      <PageHeader title="Accounting" description="Your earnings across programs: every figure is a sum of ledger entries." />
      <QueryState query={query} label="Loading your accounting">
        {(data) => <AccountingView data={data} />}
      </QueryState>
    </>
  );
}
