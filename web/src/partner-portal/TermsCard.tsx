import { Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { formatBps, formatDateTime } from '../kit/format';
import type { Terms } from './model';

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="sm" c="dimmed" component="dt">
        {label}
      </Text>
      <Text fw={500} component="dd" m={0}>
        {children}
      </Text>
    </div>
  );
}

/** Terms exactly as the developer proposed them, with the versions an acceptance or consent names. */
export function TermsCard({ terms, title = 'Terms', policyVersion }: { terms: Terms; title?: string; policyVersion?: string }) {
  return (
    <Paper withBorder p="md">
      <Stack gap="md">
        <Title order={2} size="h4">
          {title}
        </Title>
        <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} component="dl" m={0}>
          <Fact label="Commission rate">{formatBps(terms.rate_bps)}</Fact>
          <Fact label="Attribution window">{terms.attribution_window_days} days after a referral visit</Fact>
          <Fact label="Reseller sales">{terms.include_reseller_sales ? 'Included' : 'Not included'}</Fact>
          <Fact label="Effective from">{formatDateTime(terms.effective_from)}</Fact>
          <Fact label="Terms version">{terms.terms_version}</Fact>
          <Fact label="Payout policy">{terms.payout_policy_version}</Fact>
          {policyVersion && <Fact label="Managed-live policy">{policyVersion}</Fact>}
        </SimpleGrid>
        {terms.product_rates.length > 0 && (
          <Table.ScrollContainer minWidth={320} type="native" tabIndex={0} role="region" aria-label="Rates for particular products">
            <Table withTableBorder>
              <Table.Caption>Rates for particular products (instead of the commission rate)</Table.Caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Product</Table.Th>
                  <Table.Th scope="col" ta="right">
                    Rate
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {terms.product_rates.map((r) => (
                  <Table.Tr key={r.product_id}>
                    <Table.Td>Product {r.product_id}</Table.Td>
                    <Table.Td ta="right">{formatBps(r.rate_bps)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Stack>
    </Paper>
  );
}
