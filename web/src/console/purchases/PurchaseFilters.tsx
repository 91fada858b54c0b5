import '@mantine/dates/styles.css';
import { Group, MultiSelect, Select } from '@mantine/core';
import { DatePickerInput } from '@mantine/dates';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

/** The eight purchase filters (and the search) as the URL keeps them: lists are comma-separated, as the API takes them. */
export const PURCHASE_FILTERS = { search: '', channel: '', productIds: '', resellerId: '', provider: '', refundStatus: '', recordType: '', dateFrom: '', dateTo: '', page: 1 };
export type PurchaseFilterValues = { [K in keyof typeof PURCHASE_FILTERS]: (typeof PURCHASE_FILTERS)[K] };

/** The filters the list and the export send: only those set. */
export function purchaseQuery(values: PurchaseFilterValues) {
  const { page: _page, ...filters } = values;
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== '')) as Partial<Omit<PurchaseFilterValues, 'page'>>;
}

export const filterOptionsQuery = { queryKey: ['console', 'purchases', 'filter-options'], queryFn: () => unwrap(api.GET('/api/developer/purchases/filter-options')), staleTime: 60_000 };

const LABELS: Record<string, string> = {
  managed_checkout: 'Managed checkout',
  external_store: 'External store',
  manual_grant: 'Manual grant',
  import: 'Import',
  none: 'Not refunded',
  partial: 'Partly refunded',
  full: 'Refunded',
  sale: 'Sale',
  free: 'Free',
  grant: 'Grant',
  subscription: 'Subscription',
};
export const label = (value: string) => LABELS[value] ?? value;
const options = (values: string[]) => values.map((value) => ({ value, label: label(value) }));
const split = (text: string) => (text ? text.split(',') : []);

/** Purchase filters with the values the API offers this member (their products, the resellers they can see). */
export function PurchaseFilters({ values, onChange }: { values: PurchaseFilterValues; onChange: (patch: Partial<PurchaseFilterValues>) => void }) {
  const choices = useQuery(filterOptionsQuery);
  const data = choices.data;
  const multi = (name: 'channel' | 'productIds' | 'provider' | 'refundStatus' | 'recordType', title: string, items: Array<{ value: string; label: string }>) => (
    <MultiSelect
      label={title}
      placeholder={values[name] ? undefined : 'Any'}
      data={items}
      value={split(values[name])}
      onChange={(picked) => onChange({ [name]: picked.join(',') })}
      clearable
      clearButtonProps={{ 'aria-label': `Clear ${title.toLowerCase()}` }}
      w={220}
    />
  );
  return (
    <Group align="flex-end" wrap="wrap">
      {multi('productIds', 'Products', (data?.products ?? []).map((p) => ({ value: String(p.id), label: p.name })))}
      {multi('channel', 'Channel', options(data?.channels ?? []))}
      {multi('provider', 'Provider', options(data?.providers ?? []))}
      <Select
        label="Reseller"
        data={[{ value: '', label: 'Any' }, { value: 'none', label: 'Direct sales only' }, ...(data?.resellers ?? []).map((r) => ({ value: String(r.id), label: r.name }))]}
        value={values.resellerId}
        onChange={(v) => onChange({ resellerId: v ?? '' })}
        allowDeselect={false}
        w={200}
      />
      {multi('refundStatus', 'Refunds', options(data?.refundStatuses ?? []))}
      {multi('recordType', 'Record type', options(data?.recordTypes ?? []))}
      <DatePickerInput
        label="Purchased from"
        clearable
        clearButtonProps={{ 'aria-label': 'Clear the first day' }}
        valueFormat="DD MMM YYYY"
        value={values.dateFrom || null}
        onChange={(v) => onChange({ dateFrom: v ?? '' })}
        w={180}
      />
      <DatePickerInput
        label="Purchased until"
        clearable
        clearButtonProps={{ 'aria-label': 'Clear the last day' }}
        valueFormat="DD MMM YYYY"
        value={values.dateTo || null}
        onChange={(v) => onChange({ dateTo: v ?? '' })}
        w={180}
      />
    </Group>
  );
}
