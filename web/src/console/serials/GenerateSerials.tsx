import '@mantine/dates/styles.css';
import { Alert, Button, Code, Group, Modal, NumberInput, Select, SimpleGrid, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { api, ApiProblem, type paths, unwrap } from '../../api/client';
import { formatCount } from '../../kit/format';
import { notify } from '../../kit/notify';
import { ProblemAlert } from '../../kit/ProblemAlert';
import type { ProductOption } from '../records/products';

type GenerateBody = NonNullable<paths['/api/developer/serials/generate']['post']['requestBody']>['content']['application/json'];

/** A picked local date-time ("2026-12-01 00:00:00") as the API's RFC 3339 instant, or nothing. */
const instant = (local: string | null) => (local ? new Date(local.replace(' ', 'T')).toISOString() : undefined);

interface Settings {
  productId: string;
  quantity: number | string;
  prefix: string;
  batchTag: string;
  notes: string;
  expiresAt: string | null;
  activeFrom: string | null;
  activeTo: string | null;
  promoPrice: number | string;
  promoStart: string | null;
  promoExpires: string | null;
  resellerId: string;
}

const EMPTY: Settings = { productId: '', quantity: 10, prefix: '', batchTag: '', notes: '', expiresAt: null, activeFrom: null, activeTo: null, promoPrice: '', promoStart: null, promoExpires: null, resellerId: '' };

function body(s: Settings): GenerateBody {
  const text = (value: string) => (value.trim() ? value.trim() : undefined);
  const fields = {
    productId: Number(s.productId),
    quantity: Number(s.quantity),
    prefix: text(s.prefix),
    batchTag: text(s.batchTag),
    notes: text(s.notes),
    expiresAt: instant(s.expiresAt),
    activeFrom: instant(s.activeFrom),
    activeTo: instant(s.activeTo),
    promoPrice: s.promoPrice === '' ? undefined : Number(s.promoPrice),
    promoStart: instant(s.promoStart),
    promoExpires: instant(s.promoExpires),
    // Reseller pools are not made here: the API refuses the assignment with its own message, shown on the field.
    resellerId: s.resellerId ? Number(s.resellerId) : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as GenerateBody;
}

function DateField({ label, description, value, onChange, error }: { label: string; description?: ReactNode; value: string | null; onChange: (v: string | null) => void; error?: string }) {
  return (
    <DateTimePicker
      label={label}
      description={description}
      clearable
      clearButtonProps={{ 'aria-label': `Clear ${label.toLowerCase()}` }}
      valueFormat="DD MMM YYYY HH:mm"
      value={value}
      onChange={onChange}
      error={error}
    />
  );
}

/** Generating a batch of serials for one product with the settings of the contract (2.7); generation never assigns a customer. */
export function GenerateSerials({ products, onClose, onGenerated }: { products: ProductOption[]; onClose: () => void; onGenerated: () => void }) {
  const [settings, setSettings] = useState<Settings>(EMPTY);
  const set = <K extends keyof Settings>(key: K, value: Settings[K]) => setSettings((current) => ({ ...current, [key]: value }));
  const resellers = useQuery({ queryKey: ['console', 'serials', 'resellers'], queryFn: async () => (await unwrap(api.GET('/api/developer/serials/resellers'))).resellers });
  const generate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/serials/generate', { body: body(settings) })),
    onSuccess: (answer) => {
      notify(`${formatCount(answer.count)} serials generated for ${answer.product.name}.`, 'green');
      onGenerated();
    },
  });
  const problem = generate.error instanceof ApiProblem ? generate.error : null;
  const fieldError = (...names: string[]) => names.map((n) => problem?.fieldError(n)).find(Boolean);
  const resellerRefused = problem?.code === 'PARTNER_POOL_REQUIRED' ? `${problem.title}. ${problem.detail ?? ''}` : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    generate.mutate();
  };

  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Generate serials" size="xl">
      {generate.isSuccess ? (
        <Stack>
          <Alert color="green" title={generate.data.message} role="status">
            {formatCount(generate.data.count)} new serials of {generate.data.product.name} are available. The first:{' '}
            {generate.data.serials.slice(0, 3).map((s) => (
              <Code key={s.id} mr={4}>
                {s.serial}
              </Code>
            ))}
          </Alert>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => generate.reset()}>
              Generate more
            </Button>
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              {products.length > 0 ? (
                <Select label="Product" required data={products} value={settings.productId || null} onChange={(v) => set('productId', v ?? '')} searchable error={fieldError('productId', 'product_id')} />
              ) : (
                <NumberInput label="Product id" required min={1} allowDecimal={false} value={settings.productId} onChange={(v) => set('productId', String(v))} error={fieldError('productId', 'product_id')} />
              )}
              <NumberInput label="How many" required min={1} max={10_000} allowDecimal={false} value={settings.quantity} onChange={(v) => set('quantity', v)} error={fieldError('quantity')} description="Up to 10,000 at once" />
              <TextInput label="Prefix" maxLength={12} value={settings.prefix} onChange={(e) => set('prefix', e.currentTarget.value)} error={fieldError('prefix')} description="Optional, up to 12 characters" />
              <TextInput label="Batch tag" maxLength={100} value={settings.batchTag} onChange={(e) => set('batchTag', e.currentTarget.value)} error={fieldError('batchTag', 'batch_tag')} description="To find this batch later" />
              <DateField label="Expires" value={settings.expiresAt} onChange={(v) => set('expiresAt', v)} error={fieldError('expiresAt', 'expires_at')} />
              <div />
              <DateField label="Usable from" value={settings.activeFrom} onChange={(v) => set('activeFrom', v)} error={fieldError('activeFrom', 'active_from')} />
              <DateField label="Usable until" value={settings.activeTo} onChange={(v) => set('activeTo', v)} error={fieldError('activeTo', 'active_to')} />
              <NumberInput
                label="Promo price"
                description="In minor units: 4900 is 49.00"
                min={0}
                max={100_000_000}
                allowDecimal={false}
                value={settings.promoPrice}
                onChange={(v) => set('promoPrice', v)}
                error={fieldError('promoPrice', 'promo_price')}
              />
              <div />
              <DateField label="Promo starts" value={settings.promoStart} onChange={(v) => set('promoStart', v)} error={fieldError('promoStart', 'promo_start')} />
              <DateField label="Promo ends" value={settings.promoExpires} onChange={(v) => set('promoExpires', v)} error={fieldError('promoExpires', 'promo_expires')} />
            </SimpleGrid>
            <Textarea label="Notes" maxLength={2000} autosize minRows={2} value={settings.notes} onChange={(e) => set('notes', e.currentTarget.value)} error={fieldError('notes')} />
            {(resellers.data?.length ?? 0) > 0 && (
              <Select
                label="Reseller"
                description="Serials for a reseller come from its pool, managed with the partner's agreement; this form generates your own inventory."
                data={[{ value: '', label: 'None (your own inventory)' }, ...(resellers.data ?? []).map((r) => ({ value: String(r.id), label: `${r.name} (${r.kind})` }))]}
                value={settings.resellerId}
                onChange={(v) => set('resellerId', v ?? '')}
                allowDeselect={false}
                error={resellerRefused}
              />
            )}
            {generate.isError && !resellerRefused && <ProblemAlert error={generate.error} />}
            <Text size="sm" c="dimmed">
              Generated serials are available inventory: no customer, order or ownership is created.
            </Text>
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={generate.isPending}>
                Generate
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
