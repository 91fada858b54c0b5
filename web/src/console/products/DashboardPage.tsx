import '@mantine/charts/styles.css';
import { BarChart } from '@mantine/charts';
import { Anchor, Badge, Group, List, Paper, Select, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';
import { IconCheck, IconEyeOff, IconX } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { type Column, DataTable } from '../../kit/DataTable';
import { formatCount, formatDateTime, formatMinor } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { describeActivity } from './activity';
import * as model from './dashboard-model';
import { useProduct } from './ProductLayout';
import { Section } from '../../kit/Section';
import { StatusFact } from './StatusFact';
import { type Dashboard, dashboardQuery, type Environment } from './queries';

/** A count the caller may not see is `null`, shown as a dash: never as 0, which would be a claim. */
const count = (n: number | null) => (n === null ? '—' : formatCount(n));

function Kpis({ dashboard }: { dashboard: Dashboard }) {
  const k = dashboard.kpis;
  const items: Array<[string, string]> = [
    ['Customers', count(k.customerCount)],
    ['Orders', count(k.orderCount)],
    ['Downloads', count(k.downloadsTotal)],
    ['Average rating', k.ratingAverage === null ? '—' : `${k.ratingAverage} of 5`],
    ['Ratings', count(k.ratingCount)],
  ];
  const hidden = Object.values(k).some((v) => v === null);
  return (
    <Stack gap={4}>
      <SimpleGrid cols={{ base: 2, sm: 5 }} component="dl" m={0}>
        {items.map(([label, value]) => (
          <Paper withBorder p="sm" key={label}>
            <Text size="sm" c="dimmed" component="dt">
              {label}
            </Text>
            <Text size="xl" fw={600} component="dd" m={0}>
              {value}
            </Text>
          </Paper>
        ))}
      </SimpleGrid>
      {hidden && (
        <Text size="xs" c="dimmed">
          — means not shown to you (customer, order and download counts need analytics access; ratings need analytics and reviews access), or no rating yet.
        </Text>
      )}
    </Stack>
  );
}

const rangeColumns = (currency: string): Column<model.Range>[] => [
  { key: 'window', header: 'Period', render: (r) => `Last ${r.days} days` },
  { key: 'orders', header: 'Orders', render: (r) => formatCount(r.orders), numeric: true },
  { key: 'units', header: 'Units', render: (r) => formatCount(r.units), numeric: true },
  { key: 'gross', header: 'Gross', render: (r) => formatMinor(r.grossCents, currency), numeric: true },
  { key: 'refunds', header: 'Refunds', render: (r) => formatMinor(r.refundsCents, currency), numeric: true },
  { key: 'net', header: 'Net', render: (r) => formatMinor(r.netCents, currency), numeric: true },
];

function Performance({ dashboard, currency, onCurrency }: { dashboard: Dashboard; currency: string; onCurrency: (c: string) => void }) {
  const rows = model.ranges(dashboard);
  const others = [...new Set(rows.flatMap((r) => r.otherCurrencies.map((o) => o.currency)))];
  const choices = [...new Set([currency, dashboard.product.currency as string, ...others])].filter(Boolean);
  const data = rows.map((r) => ({ period: `${r.days} days`, Gross: r.grossCents, Refunds: r.refundsCents, Net: r.netCents }));
  return (
    <Section
      id="performance"
      title="Performance"
      actions={
        <Select
          label="Currency"
          data={choices.map((c) => ({ value: c, label: c.toUpperCase() }))}
          value={currency}
          onChange={(value) => value && onCurrency(value)}
          allowDeselect={false}
          w={120}
          size="xs"
        />
      }
    >
      <Text size="sm" c="dimmed">
        Sales of this product in {currency.toUpperCase()} over the last 7, 30, 90 and 365 days. Other currencies are not converted.
      </Text>
      <figure style={{ margin: 0 }} aria-label={`Gross, refunds and net per period in ${currency.toUpperCase()} (the table below has the figures)`}>
        <BarChart
          h={260}
          data={data}
          dataKey="period"
          series={[
            { name: 'Gross', color: 'indigo.6' },
            { name: 'Refunds', color: 'red.6' },
            { name: 'Net', color: 'teal.6' },
          ]}
          valueFormatter={(cents) => formatMinor(Math.round(cents), currency)}
          withLegend
          tickLine="y"
        />
      </figure>
      <DataTable caption={`Sales per period in ${currency.toUpperCase()}`} columns={rangeColumns(currency)} rows={rows} rowKey={(r) => r.window} />
      {others.length > 0 && (
        <Text size="sm">
          Also sold in {others.map((c) => c.toUpperCase()).join(', ')}: choose the currency above to see those sales.
        </Text>
      )}
    </Section>
  );
}

const STATE_ICON = {
  done: { color: 'green', icon: <IconCheck size={14} aria-hidden />, word: 'Done' },
  missing: { color: 'red', icon: <IconX size={14} aria-hidden />, word: 'Missing' },
  unknown: { color: 'gray', icon: <IconEyeOff size={14} aria-hidden />, word: 'Not visible to you' },
} as const;

function Readiness({ dashboard }: { dashboard: Dashboard }) {
  const ready = model.readiness(dashboard);
  const h = model.health(dashboard);
  return (
    <Section id="readiness" title="Launch readiness" actions={<StatusBadge status={h.status} />}>
      <Text size="sm">
        {h.done} of {h.checked} checks you can see are done.
      </Text>
      <List spacing="xs" center>
        {ready.items.map((item) => {
          const s = STATE_ICON[item.state];
          return (
            <List.Item
              key={item.key}
              icon={
                <ThemeIcon color={s.color} size={22} radius="xl" variant="light">
                  {s.icon}
                </ThemeIcon>
              }
            >
              {item.label}: <Text span fw={500}>{s.word}</Text>
              {item.detail && item.state === 'missing' ? ` (now ${item.detail})` : ''}
            </List.Item>
          );
        })}
      </List>
    </Section>
  );
}

function RecentActivity({ dashboard }: { dashboard: Dashboard }) {
  const events = model.activity(dashboard);
  return (
    <Section id="activity" title="Recent activity">
      {events.length === 0 ? (
        <Text size="sm">Nothing has happened yet: sales, refunds, activations and catalogue changes appear here.</Text>
      ) : (
        <List spacing={4} size="sm">
          {events.map((e, i) => (
            <List.Item key={`${e.occurredAt}:${i}`}>
              <Text span c="dimmed" size="sm">
                {formatDateTime(e.occurredAt)}
              </Text>{' '}
              {describeActivity(e)}
            </List.Item>
          ))}
        </List>
      )}
    </Section>
  );
}

function Reviews({ dashboard, productId }: { dashboard: Dashboard; productId: number }) {
  const summary = model.reviewSummary(dashboard);
  if (!summary) return null;
  return (
    <Section id="reviews" title="Reviews" actions={<Anchor component={Link} to={`/products/${productId}/reviews`}>All reviews</Anchor>}>
      <Text size="sm">
        {summary.total === 1 ? '1 review' : `${summary.total} reviews`}: {summary.published} published, {summary.pending} held for moderation, {summary.hidden} hidden.{' '}
        {summary.averageRating === null ? 'No published rating yet.' : `Average ${summary.averageRating} of 5 from ${summary.ratingCount} published ratings.`}
      </Text>
      <Group gap="xs">
        {summary.distribution.map((d) => (
          <Badge key={d.stars} variant="light" color="gray">
            {d.stars}★ {d.count}
          </Badge>
        ))}
      </Group>
      {dashboard.reviews.length > 0 && (
        <List spacing={4} size="sm">
          {dashboard.reviews.map((r) => (
            <List.Item key={r.id}>
              {r.rating}★ {r.title || '(no title)'} — {r.customerName ?? r.customerEmail ?? 'anonymous'} <StatusBadge status={r.status} />
            </List.Item>
          ))}
        </List>
      )}
    </Section>
  );
}

function Files({ dashboard, productId }: { dashboard: Dashboard; productId: number }) {
  return (
    <Section id="files" title="Delivery files" actions={<Anchor component={Link} to={`/products/${productId}/files`}>Manage files</Anchor>}>
      {dashboard.files.length === 0 ? (
        <Text size="sm">No delivery file yet: upload the installer buyers download.</Text>
      ) : (
        <List spacing={4} size="sm">
          {dashboard.files.map((f) => (
            <List.Item key={f.id}>
              {f.filename} ({f.platform}, {f.type}
              {f.version ? `, ${f.version}` : ''})
            </List.Item>
          ))}
        </List>
      )}
    </Section>
  );
}

function Credentials({ dashboard, productId }: { dashboard: Dashboard; productId: number }) {
  const rest = dashboard.restApi;
  const pkg = model.pluginPackage(dashboard);
  const link = model.connection(dashboard);
  return (
    <Section id="credentials" title="Credentials and plugin" actions={<Anchor component={Link} to={`/products/${productId}/packages`}>Plugin packages</Anchor>}>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Stack gap={2}>
          <Text size="sm" c="dimmed">
            Product key ({rest?.environment ?? '—'})
          </Text>
          <Group gap="xs">
            {rest ? <StatusBadge status={rest.status} /> : '—'}
            <Text size="sm" ff="monospace">
              {rest?.productKeyPreview ?? ''}
            </Text>
          </Group>
          <Text size="xs" c="dimmed">
            REST API {rest?.apiStatus.replace(/_/g, ' ')}; last request {formatDateTime(rest?.lastRequestAt)}
          </Text>
        </Stack>
        <StatusFact label="Plugin connection" status={link?.status}>
          Last connection {formatDateTime(link?.lastPluginConnectionAt)}
        </StatusFact>
        <StatusFact label="Plugin package" status={pkg?.status}>
          Last generated {formatDateTime(pkg?.lastGeneratedAt)}
        </StatusFact>
      </SimpleGrid>
    </Section>
  );
}

function Versions({ dashboard, productId }: { dashboard: Dashboard; productId: number }) {
  const current = dashboard.versions.find((v) => v.isCurrent);
  return (
    <Section id="versions" title="Versions" actions={<Anchor component={Link} to={`/products/${productId}/versions`}>All versions</Anchor>}>
      <Text size="sm">
        {current ? `Current version ${current.version}${current.releaseDate ? `, released ${formatDateTime(current.releaseDate)}` : ''}.` : 'No current version is named yet.'}{' '}
        {dashboard.versions.length === 1 ? '1 version recorded.' : `${dashboard.versions.length} versions recorded.`}
      </Text>
    </Section>
  );
}

function Storefront({ dashboard }: { dashboard: Dashboard }) {
  const d = dashboard.storefrontDestination;
  return (
    <Section id="storefront" title="Storefront destination">
      <Text size="sm">
        {d.kind === 'none' ? (
          'No storefront URL: set one on the product (Settings) or for the workspace, so referral links and the store panel lead somewhere.'
        ) : (
          <>
            Buyers and referral links go to{' '}
            <Anchor href={d.url} rel="noreferrer" target="_blank">
              {d.url}
            </Anchor>{' '}
            (the {d.kind}’s storefront URL).
          </>
        )}
      </Text>
    </Section>
  );
}

function DashboardView({ dashboard, productId, currency, setParams, environment }: { dashboard: Dashboard; productId: number; currency: string; environment: Environment; setParams: (p: { currency?: string; environment?: Environment }) => void }) {
  // Contract 4.5, rule 1: `access` decides which sections exist; a section the caller may not read is not rendered.
  const { access } = dashboard;
  return (
    <Stack gap="lg">
      {access.credentials && (
        <Group>
          <Select
            label="Environment"
            description="Which credentials, package and plugin connection to show"
            data={[
              { value: 'live', label: 'Live' },
              { value: 'test', label: 'Test' },
            ]}
            value={environment}
            onChange={(value) => value && setParams({ environment: value as Environment })}
            allowDeselect={false}
            w={220}
          />
        </Group>
      )}
      <Kpis dashboard={dashboard} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Readiness dashboard={dashboard} />
        <Stack>
          <Versions dashboard={dashboard} productId={productId} />
          <Storefront dashboard={dashboard} />
        </Stack>
      </SimpleGrid>
      {access.analytics && dashboard.performance.available && <Performance dashboard={dashboard} currency={currency} onCurrency={(c) => setParams({ currency: c })} />}
      {access.credentials && <Credentials dashboard={dashboard} productId={productId} />}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {access.analytics && <RecentActivity dashboard={dashboard} />}
        {access.reviews && <Reviews dashboard={dashboard} productId={productId} />}
        {access.files && <Files dashboard={dashboard} productId={productId} />}
      </SimpleGrid>
    </Stack>
  );
}

/** The product dashboard exactly as contract 4.5 rules it: one request, then only the sections its `access` allows. */
export default function DashboardPage() {
  const product = useProduct();
  const [params, setParams] = useListParams({ environment: 'live', currency: product.currency.toLowerCase() });
  const environment: Environment = params.environment === 'test' ? 'test' : 'live';
  const currency = /^[a-z]{3}$/.test(params.currency) ? params.currency : product.currency.toLowerCase();
  const query = useQuery({ ...dashboardQuery(product.id, environment, currency), placeholderData: keepPreviousData });
  return (
    <QueryState query={query} label="Loading the dashboard">
      {(dashboard) => <DashboardView dashboard={dashboard} productId={product.id} currency={currency} environment={environment} setParams={setParams} />}
    </QueryState>
  );
}
