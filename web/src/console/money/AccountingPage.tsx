import { Group, Paper, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { PagedTable } from '../../kit/PagedTable';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { activeProductsQuery, programsQuery } from '../partners/queries';
import { type Accounting, accountingQuery } from './queries';
import { TransfersTable } from './TransfersTable';

const PAGE_SIZE = 20;

type Balance = Accounting['balance_details'][number];
type AgreementBalance = Extract<Balance, { agreement_id: number }>;
type OwnBalance = Exclude<Balance, AgreementBalance>;
type Funded = Accounting['funded'][number];
type Unfunded = Accounting['unfunded_earnings'][number];
type Allocation = Accounting['allocations']['rows'][number];
type Destination = Accounting['destinations'][number];

const isAgreement = (b: Balance): b is AgreementBalance => 'agreement_id' in b && typeof b.agreement_id === 'number';
const money = (c: string) => (cents: number) => formatMinor(cents, c);

const fundedColumns: Column<Funded>[] = [
  { key: 'currency', header: 'Currency', render: (f) => f.currency.toUpperCase() },
  { key: 'collected', header: 'Collected', render: (f) => money(f.currency)(f.collected_cents), numeric: true },
  { key: 'platform', header: 'Platform share', render: (f) => money(f.currency)(f.platform_share_cents), numeric: true },
  { key: 'developer', header: 'Your earnings', render: (f) => money(f.currency)(f.developer_earnings_cents), numeric: true },
  { key: 'pending', header: 'Partners pending', render: (f) => money(f.currency)(f.partner_pending_cents), numeric: true },
  { key: 'payable', header: 'Partners payable', render: (f) => money(f.currency)(f.partner_payable_cents), numeric: true },
  { key: 'transfer', header: 'In transfer', render: (f) => money(f.currency)(f.in_transfer_cents), numeric: true },
  { key: 'paid', header: 'Paid out', render: (f) => money(f.currency)(f.paid_out_cents), numeric: true },
  { key: 'recovery', header: 'Owed back by partners', render: (f) => money(f.currency)(f.partner_recovery_outstanding_cents), numeric: true },
];

const ownColumns: Column<OwnBalance>[] = [
  { key: 'party', header: 'Party', render: (b) => b.name },
  { key: 'currency', header: 'Currency', render: (b) => b.currency.toUpperCase() },
  { key: 'allocated', header: 'Allocated', render: (b) => money(b.currency)(b.allocated_cents), numeric: true },
  { key: 'reversed', header: 'Reversed', render: (b) => money(b.currency)(b.reversed_cents), numeric: true },
  { key: 'balance', header: 'Balance', render: (b) => money(b.currency)(b.balance_cents), numeric: true },
];

const agreementColumns: Column<AgreementBalance>[] = [
  { key: 'program', header: 'Program', render: (b) => `${b.name} (${b.party})` },
  { key: 'status', header: 'Status', render: (b) => <StatusBadge status={b.status} /> },
  { key: 'allocated', header: 'Allocated', render: (b) => money(b.currency)(b.allocated_cents), numeric: true },
  { key: 'reversed', header: 'Reversed', render: (b) => money(b.currency)(b.reversed_cents), numeric: true },
  { key: 'pending', header: 'Pending', render: (b) => money(b.currency)(b.pending_cents), numeric: true },
  { key: 'payable', header: 'Payable', render: (b) => money(b.currency)(b.payable_cents), numeric: true },
  { key: 'transfer', header: 'In transfer', render: (b) => money(b.currency)(b.in_transfer_cents), numeric: true },
  { key: 'paid', header: 'Paid', render: (b) => money(b.currency)(b.paid_cents), numeric: true },
  { key: 'owed', header: 'Owed back', render: (b) => money(b.currency)(b.recovery_outstanding_cents), numeric: true },
];

const unfundedColumns: Column<Unfunded>[] = [
  { key: 'program', header: 'Program', render: (u) => u.name },
  { key: 'estimate', header: 'Estimated share', render: (u) => money(u.currency)(u.estimated_cents), numeric: true },
  { key: 'payable', header: 'Payable', render: () => 'No: collected elsewhere, never paid through Patchbay' },
];

function allocationColumns(names: Map<number, string>, products: Map<number, string>): Column<Allocation>[] {
  const party = (p: Allocation['parts'][number]) => (p.agreement_id ? (names.get(p.agreement_id) ?? `agreement ${p.agreement_id}`) : p.party);
  return [
    { key: 'when', header: 'Booked', render: (a) => formatDateTime(a.created_at) },
    { key: 'item', header: 'Order item', render: (a) => `#${a.order_item_id} · ${products.get(a.product_id) ?? `product ${a.product_id}`}` },
    { key: 'basis', header: 'Basis', render: (a) => `${a.basis}${a.funded ? '' : ' (estimate)'}` },
    { key: 'proceeds', header: 'Proceeds', render: (a) => money(a.currency)(a.proceeds_cents), numeric: true },
    { key: 'refunded', header: 'Refunded', render: (a) => money(a.currency)(a.refunded_cents), numeric: true },
    {
      key: 'parts',
      header: 'Shares',
      render: (a) => (
        <Stack gap={0}>
          {a.parts.map((p, i) => (
            <Text size="xs" key={i}>
              {party(p)}: {money(a.currency)(p.amount_cents)}
              {p.reversed_cents > 0 ? ` (−${money(a.currency)(p.reversed_cents)} reversed)` : ''}
            </Text>
          ))}
        </Stack>
      ),
    },
  ];
}

const destinationColumns = (names: Map<number, string>): Column<Destination>[] => [
  { key: 'programs', header: 'Partner of', render: (d) => (d.agreement_ids ?? []).map((id) => names.get(id) ?? `agreement ${id}`).join(', ') || `recipient ${d.recipient_id}` },
  { key: 'provider', header: 'Provider', render: (d) => `${d.provider === 'card' ? 'Card provider' : 'Wallet'}${d.livemode ? '' : ' (sandbox)'}` },
  { key: 'display', header: 'Destination (masked)', render: (d) => d.display },
  { key: 'status', header: 'Status', render: (d) => <StatusBadge status={d.status} /> },
  { key: 'from', header: 'Transfers from', render: (d) => (d.transfers_allowed ? 'now' : d.hold_until ? `${formatDateTime(d.available_at)} (security hold)` : formatDateTime(d.available_at)) },
];

function AccountingView({ data, names, products, page, setPage, agreement, currency }: { data: Accounting; names: Map<number, string>; products: Map<number, string>; page: number; setPage: (n: number) => void; agreement: string; currency: string }) {
  const inCurrency = (row: { currency: string }) => !currency || row.currency === currency;
  const inAgreement = (id: number | null | undefined) => !agreement || String(id) === agreement;
  const balances = data.balance_details.filter(inCurrency);
  const agreements = balances.filter(isAgreement).filter((b) => inAgreement(b.agreement_id));
  const own = balances.filter((b): b is OwnBalance => !isAgreement(b));
  const unfunded = data.unfunded_earnings.filter((u) => inCurrency(u) && inAgreement(u.agreement_id));
  const transfers = data.transfers.filter((t) => inCurrency(t) && inAgreement(t.agreement_id));
  const destinations = data.destinations.filter((d) => !agreement || (d.agreement_ids ?? []).some((id) => String(id) === agreement));
  return (
    <Stack gap="lg">
      <Section id="funded" title="Funded: money collected through Patchbay’s checkout">
        {data.funded.filter(inCurrency).length === 0 ? (
          <Text size="sm">No sale has been collected yet. Sales through the managed checkout appear here, split as they were booked.</Text>
        ) : (
          <DataTable caption="Collected money per currency and where it sits" columns={fundedColumns} rows={data.funded.filter(inCurrency)} rowKey={(f) => f.currency} />
        )}
      </Section>
      <Section id="balances" title="Balances">
        {own.length > 0 && <DataTable caption="Your and the platform’s balances" columns={ownColumns} rows={own} rowKey={(b) => `${b.party}:${b.currency}`} />}
        {agreements.length > 0 ? (
          <DataTable caption="Balances per agreement and currency" columns={agreementColumns} rows={agreements} rowKey={(b) => `${b.agreement_id}:${b.currency}`} />
        ) : (
          <Text size="sm">No partner balance yet.</Text>
        )}
      </Section>
      <Section id="external" title="External estimates (unfunded)">
        <Text size="sm">
          Sales collected by other stores or resellers: partner shares are estimated for your records, the fees stay with the external seller, and nothing here
          is ever payable through Patchbay.
        </Text>
        {data.external.filter(inCurrency).length > 0 && (
          <SimpleGrid cols={{ base: 2, sm: 4 }}>
            {data.external.filter(inCurrency).map((e) => (
              <Paper withBorder p="sm" key={e.currency}>
                <Text size="sm" c="dimmed">
                  Estimated partner shares ({e.currency.toUpperCase()})
                </Text>
                <Text fw={600}>{money(e.currency)(e.estimated_partner_cents)}</Text>
              </Paper>
            ))}
          </SimpleGrid>
        )}
        {unfunded.length > 0 ? (
          <DataTable caption="Unfunded earnings per agreement" columns={unfundedColumns} rows={unfunded} rowKey={(u) => `${u.agreement_id}:${u.currency}`} />
        ) : (
          <Text size="sm">No external estimate.</Text>
        )}
      </Section>
      <Section id="allocations" title="Allocations">
        <PagedTable
          caption="How each sale was split, newest first"
          columns={allocationColumns(names, products)}
          rows={data.allocations.rows}
          rowKey={(a) => a.id}
          total={data.allocations.total}
          page={page}
          pageSize={PAGE_SIZE}
          onPage={setPage}
          empty={<EmptyState title="No allocations yet">Each captured sale is split here into the platform’s, the partners’ and your shares.</EmptyState>}
        />
      </Section>
      <Section id="reversals" title="Reversals">
        <PagedTable
          caption="Sales with refunds, and the shares they reversed"
          columns={allocationColumns(names, products)}
          rows={data.reversals.rows}
          rowKey={(a) => a.id}
          total={data.reversals.total}
          page={page}
          pageSize={PAGE_SIZE}
          onPage={setPage}
          empty={<Text size="sm">No refunds: nothing was reversed.</Text>}
        />
      </Section>
      <Section id="destinations" title="Partners’ payout destinations">
        {destinations.length > 0 ? (
          <DataTable caption="Destinations (masked; readiness only)" columns={destinationColumns(names)} rows={destinations} rowKey={(d) => `${d.recipient_id}:${d.provider}:${d.livemode}`} />
        ) : (
          <Text size="sm">No partner has set up a payout destination yet; they do it in the partner portal.</Text>
        )}
      </Section>
      <Section id="transfers" title="Transfers">
        <TransfersTable transfers={transfers} names={names} caption="Transfers to partners, newest first (the latest 100)" />
      </Section>
    </Stack>
  );
}

/** The money of the workspace's partner programs: balances, funded against external, allocations and reversals (paged), destinations and transfers. */
export default function AccountingPage() {
  const [params, setParams] = useListParams({ currency: '', agreement: '', page: 1 });
  const query = useQuery({ ...accountingQuery(params.page, PAGE_SIZE), placeholderData: keepPreviousData });
  const programs = useQuery(programsQuery);
  // Product names only for a member who may read the catalogue; the others see product ids.
  const access = useMemberAccess();
  const catalogue = useQuery({ ...activeProductsQuery, enabled: access.can('products.view') });
  const productNames = new Map((catalogue.data ?? []).map((p) => [p.id, p.name]));
  const names = new Map([...(query.data?.balance_details ?? []).filter(isAgreement).map((b) => [b.agreement_id, b.name] as const), ...(programs.data ?? []).map((p) => [p.id, p.name] as const)]);
  return (
    <>
      <PageHeader title="Partner accounting" description="Every figure is a sum of ledger entries; pending shares become payable under live agreements." />
      <Stack>
        <Group align="flex-end" wrap="wrap">
          <Select
            label="Currency"
            data={[{ value: '', label: 'All currencies' }, ...(query.data?.currencies ?? []).map((c) => ({ value: c, label: c.toUpperCase() }))]}
            value={params.currency}
            onChange={(v) => setParams({ currency: v ?? '' })}
            allowDeselect={false}
            w={180}
          />
          <Select
            label="Program"
            description="Filters balances, estimates, destinations and transfers"
            data={[{ value: '', label: 'All programs' }, ...[...names].map(([id, name]) => ({ value: String(id), label: name }))]}
            value={params.agreement}
            onChange={(v) => setParams({ agreement: v ?? '' })}
            allowDeselect={false}
            w={260}
          />
        </Group>
        <QueryState query={query} label="Loading the accounting">
          {(data) => <AccountingView data={data} names={names} products={productNames} page={params.page} setPage={(page) => setParams({ page })} agreement={params.agreement} currency={params.currency} />}
        </QueryState>
      </Stack>
    </>
  );
}
