import { NumberInput, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ApiProblem, type paths } from '../../api/client';
import { minorToInput, parseMinor } from '../../kit/amounts';
import { FormActions } from '../../kit/FormActions';
import type { Product, ProductStatus } from './queries';

export type ProductChanges = NonNullable<paths['/api/developer/products/{productId}']['patch']['requestBody']>['content']['application/json'];

export type ProductSubmit = ProductChanges & { name: string };

export const STATUS_OPTIONS: Array<{ value: ProductStatus; label: string }> = [
  { value: 'draft', label: 'Draft (not on sale)' },
  { value: 'active', label: 'Active (on sale)' },
  { value: 'archived', label: 'Archived' },
];

interface Values {
  name: string;
  status: ProductStatus;
  price: string;
  currency: string;
  maxActivations: number | string;
  offlineGraceDays: number | string;
  storefrontUrl: string;
}

const initial = (product: Product | undefined): Values => ({
  name: product?.name ?? '',
  status: product?.status ?? 'draft',
  price: product ? minorToInput(product.priceCents, product.currency) : '',
  currency: (product?.currency ?? 'usd').toUpperCase(),
  maxActivations: product?.maxActivations ?? 3,
  offlineGraceDays: product?.offlineGraceDays ?? 14,
  storefrontUrl: product?.storefrontUrl ?? '',
});

/**
 * The catalogue fields of a product: name, status, price (typed in the currency's major unit and
 * sent as integer minor units), currency, activation limit, offline grace and storefront URL. For
 * an existing product only the fields that changed are sent.
 */
export function ProductForm({
  product,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  product?: Product;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (changes: ProductSubmit) => void;
  onCancel?: () => void;
}) {
  const [values, setValues] = useState<Values>(() => initial(product));
  const [local, setLocal] = useState<Partial<Record<keyof Values, string>>>({});
  const set = <K extends keyof Values>(key: K, value: Values[K]) => setValues((v) => ({ ...v, [key]: value }));
  const problem = error instanceof ApiProblem ? error : null;
  const fieldError = (key: keyof Values, apiField: string = key) => local[key] ?? problem?.fieldError(apiField);

  const submit = () => {
    const errors: typeof local = {};
    const currency = values.currency.trim().toLowerCase();
    if (!/^[a-z]{3}$/.test(currency)) errors.currency = 'Three letters, such as USD or EUR';
    const priceCents = parseMinor(values.price || '0', /^[a-z]{3}$/.test(currency) ? currency : 'usd');
    if (priceCents === null) errors.price = 'A price such as 149 or 149.00';
    else if (priceCents > 2_147_483_647n) errors.price = 'The price is too large';
    if (!values.name.trim()) errors.name = 'A product needs a name';
    const url = values.storefrontUrl.trim();
    if (url && !/^https?:\/\/\S+$/.test(url)) errors.storefrontUrl = 'A web address starting with https://';
    setLocal(errors);
    if (Object.keys(errors).length > 0 || priceCents === null) return;
    const next = {
      name: values.name.trim(),
      status: values.status,
      priceCents: Number(priceCents),
      currency,
      maxActivations: Number(values.maxActivations),
      offlineGraceDays: Number(values.offlineGraceDays),
      storefrontUrl: url || null,
    };
    if (!product) return onSubmit(next);
    const changed = Object.fromEntries(Object.entries(next).filter(([key, value]) => (product as Record<string, unknown>)[key] !== value));
    onSubmit({ ...changed, name: next.name });
  };

  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Stack>
        <TextInput label="Name" required value={values.name} onChange={(e) => set('name', e.currentTarget.value)} error={fieldError('name')} maxLength={200} />
        <Select
          label="Status"
          description="Whether the product is on sale; partner programs need an active product. Licenses work in every status."
          data={STATUS_OPTIONS}
          value={values.status}
          onChange={(value) => value && set('status', value as ProductStatus)}
          allowDeselect={false}
          error={fieldError('status')}
        />
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          <TextInput
            label="Price"
            description="In the currency's main unit, e.g. 149.00"
            inputMode="decimal"
            value={values.price}
            onChange={(e) => set('price', e.currentTarget.value)}
            error={fieldError('price', 'priceCents')}
          />
          <TextInput
            label="Currency"
            description="ISO code, e.g. USD"
            value={values.currency}
            maxLength={3}
            onChange={(e) => set('currency', e.currentTarget.value.toUpperCase())}
            error={fieldError('currency')}
          />
          <NumberInput
            label="Activation limit"
            description="Devices per license (0: no limit)"
            min={0}
            max={1000}
            allowDecimal={false}
            value={values.maxActivations}
            onChange={(value) => set('maxActivations', value)}
            error={fieldError('maxActivations')}
          />
          <NumberInput
            label="Offline grace (days)"
            description="How long a plugin stays licensed without reaching the server"
            min={0}
            max={365}
            allowDecimal={false}
            value={values.offlineGraceDays}
            onChange={(value) => set('offlineGraceDays', value)}
            error={fieldError('offlineGraceDays')}
          />
        </SimpleGrid>
        <TextInput
          label="Storefront URL"
          description="The product's page in your shop (optional: the workspace's storefront is used otherwise)"
          type="url"
          value={values.storefrontUrl}
          onChange={(e) => set('storefrontUrl', e.currentTarget.value)}
          error={fieldError('storefrontUrl')}
        />
        <FormActions error={error} submitLabel={submitLabel} pending={pending} onCancel={onCancel} />
      </Stack>
    </form>
  );
}
