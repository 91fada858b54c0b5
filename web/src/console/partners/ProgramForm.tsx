import '@mantine/dates/styles.css';
import { ActionIcon, Button, Checkbox, Group, NumberInput, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiProblem } from '../../api/client';
import { bpsToPercentInput, percentToBps } from '../../kit/amounts';
import { FormActions } from '../../kit/FormActions';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { SegmentedField } from '../../kit/SegmentedField';
import { activeProductsQuery, type CreateBody, type Program, type ReviseBody } from './queries';

type Kind = CreateBody['kind'];

interface Values {
  kind: Kind;
  recipientEmail: string;
  name: string;
  rate: string;
  productRates: Array<{ productId: string; rate: string }>;
  windowDays: number | string;
  resellerSales: boolean;
  effectiveFrom: string | null;
  sendEmail: boolean;
}

const fromProgram = (program: Program | undefined): Values => {
  const terms = program?.proposed_terms ?? program?.accepted_terms ?? null;
  return {
    kind: (program?.kind as Kind | undefined) ?? 'affiliate',
    recipientEmail: program?.recipient_email ?? '',
    name: program?.name ?? '',
    rate: terms ? bpsToPercentInput(terms.rate_bps) : '',
    productRates: terms?.product_rates.map((r) => ({ productId: String(r.product_id), rate: bpsToPercentInput(r.rate_bps) })) ?? [],
    windowDays: terms?.attribution_window_days ?? 30,
    resellerSales: terms?.include_reseller_sales ?? false,
    effectiveFrom: null,
    sendEmail: true,
  };
};

/** The picker answers local wall-clock text; the API takes an instant. */
const toIso = (local: string) => new Date(local.replace(' ', 'T')).toISOString();

/**
 * The terms of a program: rates are typed in percent and sent as integer basis points (20.5 % →
 * 2050); per-product rates replace the default for their product; the effective date cannot lie
 * in the past (empty: now). Creating also names the kind and the partner; a revision sends the
 * terms as a new proposal (the accepted terms stay in force until the partner accepts it).
 */
export function ProgramForm({
  program,
  pending,
  error,
  submitLabel,
  onCreate,
  onRevise,
  onCancel,
}: {
  program?: Program;
  pending: boolean;
  error: unknown;
  submitLabel: string;
  onCreate?: (body: CreateBody) => void;
  onRevise?: (body: ReviseBody) => void;
  onCancel?: () => void;
}) {
  const [values, setValues] = useState<Values>(() => fromProgram(program));
  const [local, setLocal] = useState<Record<string, string>>({});
  const products = useQuery(activeProductsQuery);
  const set = <K extends keyof Values>(key: K, value: Values[K]) => setValues((v) => ({ ...v, [key]: value }));
  const problem = error instanceof ApiProblem ? error : null;
  const fieldError = (key: string, apiField = key) => local[key] ?? problem?.fieldError(apiField);
  const revising = program !== undefined;

  const submit = () => {
    const errors: Record<string, string> = {};
    const rate = percentToBps(values.rate);
    if (rate === null) errors.rate = 'A percentage from 0 to 100, with at most two decimals (20 or 12.5)';
    const productRates = values.productRates.map((r, i) => {
      const bps = percentToBps(r.rate);
      if (!r.productId) errors[`product-${i}`] = 'Choose a product';
      if (bps === null) errors[`rate-${i}`] = 'A percentage from 0 to 100';
      return { product_id: Number(r.productId), rate_bps: bps ?? 0 };
    });
    if (new Set(productRates.map((r) => r.product_id)).size !== productRates.length) errors['product-dup'] = 'Each product once';
    if (values.kind === 'collaborator' && productRates.length === 0) errors['product-dup'] = 'A collaborator agreement names its products';
    if (values.effectiveFrom && new Date(values.effectiveFrom.replace(' ', 'T')).getTime() < Date.now() - 60_000) errors.effectiveFrom = 'Terms cannot start in the past';
    if (!revising && !/^\S+@\S+\.\S+$/.test(values.recipientEmail.trim())) errors.recipientEmail = 'The partner’s e-mail address';
    if (!values.name.trim()) errors.name = 'A name for the program';
    setLocal(errors);
    if (Object.keys(errors).length > 0 || rate === null) return;
    const terms = {
      rate_bps: rate,
      product_rates: productRates,
      attribution_window_days: Number(values.windowDays),
      include_reseller_sales: values.resellerSales,
      ...(values.effectiveFrom ? { effective_from: toIso(values.effectiveFrom) } : {}),
      send_email: values.sendEmail,
    };
    if (revising) {
      // Only what changed: a name alone makes no new terms version.
      const current = program.proposed_terms ?? program.accepted_terms;
      const changed = Object.fromEntries(
        Object.entries(terms).filter(([key, value]) => key === 'send_email' || key === 'effective_from' || JSON.stringify(current?.[key as keyof typeof current]) !== JSON.stringify(value)),
      );
      onRevise?.({ ...changed, ...(values.name.trim() !== program.name ? { name: values.name.trim() } : {}) });
    }
    else onCreate?.({ kind: values.kind, recipient_email: values.recipientEmail.trim(), name: values.name.trim(), ...terms });
  };

  const productOptions = (products.data ?? []).map((p) => ({ value: String(p.id), label: p.name }));
  // A product a rate names stays choosable even when it is no longer active.
  for (const r of values.productRates) if (r.productId && !productOptions.some((o) => o.value === r.productId)) productOptions.push({ value: r.productId, label: `Product ${r.productId}` });

  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Stack>
        {!revising && (
          <SegmentedField
            label="Kind"
            value={values.kind}
            onChange={(kind) => set('kind', kind)}
            data={[
              { value: 'affiliate', label: 'Affiliate' },
              { value: 'collaborator', label: 'Collaborator' },
            ]}
            description={
              values.kind === 'affiliate'
                ? 'A commission on sales the partner refers through their referral link.'
                : 'A share of every sale of the named products (a co-developer, a sound designer).'
            }
          />
        )}
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Program name" required value={values.name} onChange={(e) => set('name', e.currentTarget.value)} maxLength={200} error={fieldError('name')} />
          {!revising && (
            <TextInput
              label="Partner’s e-mail"
              required
              type="email"
              value={values.recipientEmail}
              onChange={(e) => set('recipientEmail', e.currentTarget.value)}
              error={fieldError('recipientEmail', 'recipient_email')}
            />
          )}
          <TextInput
            label="Default rate (%)"
            required
            inputMode="decimal"
            description="Of the amount left after the 10 % platform share"
            value={values.rate}
            onChange={(e) => set('rate', e.currentTarget.value)}
            error={fieldError('rate', 'rate_bps')}
          />
          <NumberInput
            label="Attribution window (days)"
            description="How long after a referral visit a sale counts"
            min={1}
            max={365}
            allowDecimal={false}
            value={values.windowDays}
            onChange={(v) => set('windowDays', v)}
            error={fieldError('windowDays', 'attribution_window_days')}
          />
        </SimpleGrid>
        <Stack gap="xs">
          <Text size="sm" fw={500}>
            Per-product rates
          </Text>
          {values.productRates.length === 0 && (
            <Text size="sm" c="dimmed">
              {values.kind === 'collaborator' ? 'Add the products this collaborator shares in.' : 'None: the default rate applies to every product.'}
            </Text>
          )}
          {values.productRates.map((row, i) => (
            <Group key={i} align="flex-start" wrap="nowrap">
              <Select
                label={`Product ${i + 1}`}
                data={productOptions}
                value={row.productId || null}
                onChange={(v) => set('productRates', values.productRates.map((r, j) => (j === i ? { ...r, productId: v ?? '' } : r)))}
                searchable
                nothingFoundMessage="No active product has this name"
                error={local[`product-${i}`]}
                style={{ flex: 1 }}
              />
              <TextInput
                label={`Rate for product ${i + 1} (%)`}
                inputMode="decimal"
                value={row.rate}
                onChange={(e) => {
                  const rate = e.currentTarget.value;
                  set('productRates', values.productRates.map((r, j) => (j === i ? { ...r, rate } : r)));
                }}
                error={local[`rate-${i}`]}
                w={180}
              />
              <ActionIcon
                mt={26}
                variant="default"
                size="lg"
                aria-label={`Remove the rate for product ${i + 1}`}
                onClick={() => set('productRates', values.productRates.filter((_, j) => j !== i))}
              >
                <IconTrash size={16} aria-hidden />
              </ActionIcon>
            </Group>
          ))}
          {(local['product-dup'] || problem?.fieldError('product_rates')) && (
            <Text size="sm" c="red" role="alert">
              {local['product-dup'] ?? problem?.fieldError('product_rates')}
            </Text>
          )}
          <Button variant="default" size="xs" w="fit-content" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => set('productRates', [...values.productRates, { productId: '', rate: '' }])}>
            Add a product rate
          </Button>
          {products.isError && <ProblemAlert error={products.error} title="The products could not be listed" />}
        </Stack>
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <DateTimePicker
            label="Effective from"
            description="Empty: from now. Never in the past."
            clearable
            clearButtonProps={{ 'aria-label': 'Clear the start date' }}
            minDate={new Date()}
            valueFormat="DD MMM YYYY HH:mm"
            value={values.effectiveFrom}
            onChange={(v) => set('effectiveFrom', v)}
            error={fieldError('effectiveFrom', 'effective_from')}
          />
          <Stack gap="xs" justify="center">
            <Checkbox label="Include sales through resellers" checked={values.resellerSales} onChange={(e) => set('resellerSales', e.currentTarget.checked)} />
            <Checkbox
              label="E-mail the invitation to the partner"
              description="Otherwise the invitation link is shown once, for you to deliver"
              checked={values.sendEmail}
              onChange={(e) => set('sendEmail', e.currentTarget.checked)}
            />
          </Stack>
        </SimpleGrid>
        <FormActions error={error} submitLabel={submitLabel} pending={pending} onCancel={onCancel} />
      </Stack>
    </form>
  );
}
