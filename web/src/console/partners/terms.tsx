import { Badge, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { DataTable } from '../../kit/DataTable';
import type { ReactNode } from 'react';
import { formatBps, formatDateTime } from '../../kit/format';
import type { Terms } from './queries';

function Fact({ label, changed, children }: { label: string; changed?: boolean; children: ReactNode }) {
  return (
    <div>
      <Text size="sm" c="dimmed" component="dt">
        {label}
      </Text>
      <Text fw={500} component="dd" m={0}>
        {children} {changed && <Badge size="xs" color="orange" variant="light">changed</Badge>}
      </Text>
    </div>
  );
}

const rateOf = (terms: Terms | null | undefined, productId: number) => terms?.product_rates.find((r) => r.product_id === productId)?.rate_bps;

/**
 * One version of an agreement's terms. With `against` (the accepted terms), what a revision
 * changes is marked, so the developer sees the terms in force next to what they propose.
 */
export function TermsCard({ title, terms, against, productName }: { title: string; terms: Terms; against?: Terms | null; productName: (id: number) => string }) {
  const differs = <K extends keyof Terms>(key: K) => against !== undefined && against !== null && JSON.stringify(against[key]) !== JSON.stringify(terms[key]);
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Stack gap="sm">
        <Title order={3} size="h5">
          {title}
        </Title>
        <SimpleGrid cols={{ base: 1, xs: 2 }} component="dl" m={0}>
          <Fact label="Default rate" changed={differs('rate_bps')}>
            {formatBps(terms.rate_bps)}
          </Fact>
          <Fact label="Attribution window" changed={differs('attribution_window_days')}>
            {terms.attribution_window_days} days
          </Fact>
          <Fact label="Reseller sales" changed={differs('include_reseller_sales')}>
            {terms.include_reseller_sales ? 'Included' : 'Not included'}
          </Fact>
          <Fact label="Effective from" changed={differs('effective_from')}>
            {formatDateTime(terms.effective_from)}
          </Fact>
          <Fact label="Terms version">{terms.terms_version}</Fact>
          <Fact label="Payout policy">{terms.payout_policy_version}</Fact>
        </SimpleGrid>
        {terms.product_rates.length > 0 && (
          <DataTable
            caption={`Per-product rates of version ${terms.terms_version} (instead of the default)`}
            rows={terms.product_rates}
            rowKey={(r) => r.product_id}
            columns={[
              { key: 'product', header: 'Product', render: (r) => productName(r.product_id) },
              {
                key: 'rate',
                header: 'Rate',
                numeric: true,
                render: (r) => (
                  <>
                    {formatBps(r.rate_bps)}
                    {against && rateOf(against, r.product_id) !== r.rate_bps && (
                      <Badge ml="xs" size="xs" color="orange" variant="light">
                        {rateOf(against, r.product_id) === undefined ? 'new' : 'changed'}
                      </Badge>
                    )}
                  </>
                ),
              },
            ]}
          />
        )}
      </Stack>
    </Paper>
  );
}
