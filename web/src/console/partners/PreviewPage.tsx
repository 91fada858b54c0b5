import { Alert, Badge, Button, Code, Group, Paper, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { IconCalculator, IconInfoCircle } from '@tabler/icons-react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiProblem, type paths, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { formatBps, formatMinor } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { parseMinor } from '../../kit/amounts';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { Section } from '../../kit/Section';
import { SegmentedField } from '../../kit/SegmentedField';
import { activeProductsQuery, programsQuery } from './queries';

type PreviewBody = NonNullable<paths['/api/developer/partners/programs/preview']['post']['requestBody']>['content']['application/json'];
type Preview = paths['/api/developer/partners/programs/preview']['post']['responses'][200]['content']['application/json'];
type Part = Preview['allocation']['parts'][number];
type PlanRow = Preview['payoutPlan'][number];

const PARTY: Record<string, string> = { platform: 'Platform (10 %)', processing: 'Processing', developer: 'You (the developer)', affiliate: 'Affiliate', collaborator: 'Collaborator' };

function Result({ preview, names }: { preview: Preview; names: Map<number, string> }) {
  const c = preview.currency;
  const a = preview.allocation;
  const who = (party: string, agreement: number | null) => `${PARTY[party] ?? party}${agreement ? `: ${names.get(agreement) ?? `agreement ${agreement}`}` : ''}`;
  const partColumns: Column<Part>[] = [
    { key: 'party', header: 'Party', render: (p) => who(p.party, p.agreement_id) },
    { key: 'rate', header: 'Rate', render: (p) => (p.rate_bps === null ? '—' : formatBps(p.rate_bps)), numeric: true },
    { key: 'amount', header: 'Share', render: (p) => formatMinor(p.amount_cents, c), numeric: true },
    { key: 'reversed', header: 'Reversed by refunds', render: (p) => formatMinor(p.reversed_cents, c), numeric: true },
    { key: 'net', header: 'Net', render: (p) => formatMinor(p.net_cents, c), numeric: true },
    { key: 'funded', header: 'Funded', render: (p) => (p.funded ? 'Yes' : 'No: an estimate') },
    { key: 'state', header: 'Agreement', render: (p) => (p.status ? `${p.status}${p.live === false ? ', not live' : p.live ? ', live' : ''}` : '—') },
  ];
  const planColumns: Column<PlanRow>[] = [
    { key: 'party', header: 'Party', render: (p) => who(p.party, p.agreement_id) },
    { key: 'amount', header: 'Amount', render: (p) => formatMinor(p.amount_cents, c), numeric: true },
    { key: 'funded', header: 'Funded', render: (p) => (p.funded ? 'Yes' : 'No') },
    { key: 'when', header: 'When', render: (p) => p.when.replace(/_/g, ' ') },
  ];
  return (
    <Stack>
      <Alert color="blue" variant="light" icon={<IconInfoCircle aria-hidden />} title="A projection only: payable: false">
        Nothing is booked, owed or paid by this preview. The API answers <Code>payable: false</Code> for every preview: real shares come only from
        captured sales, and are payable only under live agreements.
      </Alert>
      <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} component="dl" m={0}>
        {(
          [
            ['Proceeds', a.proceeds_cents],
            ['Platform share', a.platform_fee_cents],
            ['Processing', a.processing_fee_cents],
            ['Distributable', a.distributable_cents],
            ['Funded partner shares', a.funded_partner_cents],
            ['Unfunded estimates', a.unfunded_estimate_cents],
          ] as const
        ).map(([label, cents]) => (
          <Paper withBorder p="sm" key={label}>
            <Text size="sm" c="dimmed" component="dt">
              {label}
            </Text>
            <Text fw={600} component="dd" m={0}>
              {formatMinor(cents, c)}
            </Text>
          </Paper>
        ))}
      </SimpleGrid>
      <Group gap="xs">
        <Badge variant="light">{preview.basis === 'managed' ? 'Managed checkout basis' : `External basis: ${preview.collection_provider}`}</Badge>
        <Text size="xs" c="dimmed">
          Rounding: {a.rounding}
        </Text>
      </Group>
      <DataTable caption="Projected allocation" columns={partColumns} rows={a.parts} rowKey={(p) => `${p.party}:${p.agreement_id ?? ''}`} />
      {preview.payoutPlan.length > 0 && <DataTable caption="Projected payout plan" columns={planColumns} rows={preview.payoutPlan} rowKey={(p) => `${p.party}:${p.agreement_id}`} />}
    </Stack>
  );
}

/** The split calculator: how a sale would be divided between the platform, partners and the developer. Writes nothing. */
export default function PreviewPage() {
  const products = useQuery(activeProductsQuery);
  const programs = useQuery(programsQuery);
  const [productId, setProductId] = useState<string | null>(null);
  const [subtotal, setSubtotal] = useState('');
  const [discount, setDiscount] = useState('0');
  const [basis, setBasis] = useState<'managed' | 'external'>('managed');
  const [provider, setProvider] = useState('external_store');
  const [platformFee, setPlatformFee] = useState('0');
  const [processingFee, setProcessingFee] = useState('0');
  const [refund, setRefund] = useState('');
  const [affiliate, setAffiliate] = useState<string | null>(null);
  const [local, setLocal] = useState<Record<string, string>>({});
  const product = products.data?.find((p) => String(p.id) === productId) ?? products.data?.[0];
  const currency = product?.currency.toLowerCase() ?? 'usd';
  const preview = useMutation({ mutationFn: (body: PreviewBody) => unwrap(api.POST('/api/developer/partners/programs/preview', { body })) });
  const problem = preview.error instanceof ApiProblem ? preview.error : null;
  const names = new Map((programs.data ?? []).map((p) => [p.id, p.name]));
  const affiliates = (programs.data ?? []).filter((p) => p.kind === 'affiliate' && p.accepted_terms_version !== null);

  const submit = () => {
    const errors: Record<string, string> = {};
    const money = (key: string, text: string, optional = false) => {
      if (optional && !text.trim()) return undefined;
      const v = parseMinor(text || '0', currency);
      if (v === null || v > 2_147_483_647n) errors[key] = `An amount in ${currency.toUpperCase()}, e.g. 149.00`;
      return v === null ? 0 : Number(v);
    };
    const body: PreviewBody = {
      product_id: product?.id ?? 0,
      currency,
      subtotal_cents: money('subtotal', subtotal)!,
      discount_cents: money('discount', discount)!,
      ...(basis === 'external'
        ? { collection_provider: provider.trim() || 'external', platform_fee_cents: money('platformFee', platformFee)!, processing_fee_cents: money('processingFee', processingFee)! }
        : {}),
      ...(refund.trim() ? { cumulative_refund_product_cents: money('refund', refund, true)! } : {}),
      ...(affiliate ? { affiliate_agreement_id: Number(affiliate) } : {}),
    };
    if (!product) errors.product = 'Choose a product';
    setLocal(errors);
    if (Object.keys(errors).length === 0) preview.mutate(body);
  };
  const err = (key: string, apiField: string) => local[key] ?? problem?.fieldError(apiField);

  return (
    <>
      <PageHeader title="Split preview" description="How a sale would be divided between the platform, your partners and you, before any sale happens." />
      <Stack gap="lg">
        <Section id="inputs" title="The sale">
          <form
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              submit();
            }}
          >
            <Stack>
              <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }}>
                <Select
                  label="Product"
                  data={(products.data ?? []).map((p) => ({ value: String(p.id), label: p.name }))}
                  value={product ? String(product.id) : null}
                  onChange={setProductId}
                  searchable
                  allowDeselect={false}
                  nothingFoundMessage="No active product has this name"
                  error={err('product', 'product_id')}
                />
                <TextInput label={`Subtotal (${currency.toUpperCase()})`} inputMode="decimal" required value={subtotal} onChange={(e) => setSubtotal(e.currentTarget.value)} error={err('subtotal', 'subtotal_cents')} />
                <TextInput label={`Discount (${currency.toUpperCase()})`} inputMode="decimal" value={discount} onChange={(e) => setDiscount(e.currentTarget.value)} error={err('discount', 'discount_cents')} />
                <Select
                  label="Affiliate (optional)"
                  description="The referral the sale would carry"
                  data={[{ value: '', label: 'No affiliate' }, ...affiliates.map((p) => ({ value: String(p.id), label: `${p.name} (${p.status})` }))]}
                  value={affiliate ?? ''}
                  onChange={(v) => setAffiliate(v || null)}
                  allowDeselect={false}
                  error={err('affiliate', 'affiliate_agreement_id')}
                />
                <TextInput
                  label={`Refunded so far (${currency.toUpperCase()}, optional)`}
                  description="Cumulative refunds of this product in the sale"
                  inputMode="decimal"
                  value={refund}
                  onChange={(e) => setRefund(e.currentTarget.value)}
                  error={err('refund', 'cumulative_refund_product_cents')}
                />
              </SimpleGrid>
              <SegmentedField
                label="Collected by"
                value={basis}
                onChange={setBasis}
                data={[
                  { value: 'managed', label: 'Patchbay checkout' },
                  { value: 'external', label: 'Another store or reseller' },
                ]}
                description={
                  basis === 'managed'
                    ? 'The platform takes 10 %, computed by the server; no separate processing fee.'
                    : 'Fees stay with the external seller and are taken as you give them; partner shares are unfunded estimates.'
                }
              />
              {basis === 'external' && (
                <SimpleGrid cols={{ base: 1, sm: 3 }}>
                  <TextInput label="Store or provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)} error={err('provider', 'collection_provider')} />
                  <TextInput label={`Platform fee (${currency.toUpperCase()})`} inputMode="decimal" value={platformFee} onChange={(e) => setPlatformFee(e.currentTarget.value)} error={err('platformFee', 'platform_fee_cents')} />
                  <TextInput label={`Processing fee (${currency.toUpperCase()})`} inputMode="decimal" value={processingFee} onChange={(e) => setProcessingFee(e.currentTarget.value)} error={err('processingFee', 'processing_fee_cents')} />
                </SimpleGrid>
              )}
              {products.isError && <ProblemAlert error={products.error} title="The products could not be listed" />}
              {preview.isError && <ProblemAlert error={preview.error} />}
              <Group>
                <Button type="submit" leftSection={<IconCalculator size={16} aria-hidden />} loading={preview.isPending} disabled={!product}>
                  Calculate the split
                </Button>
              </Group>
            </Stack>
          </form>
        </Section>
        {preview.data && (
          <Section id="result" title="Projected split">
            <Result preview={preview.data} names={names} />
          </Section>
        )}
      </Stack>
    </>
  );
}
