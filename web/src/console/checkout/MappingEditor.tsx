import { ActionIcon, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useProductOptions } from '../records/products';
import { type MappingEntry, type Provider, providerInfo } from './queries';

/** A row of the mapping as typed: the product id is a string until it is picked. */
export interface MappingRow {
  providerProductId: string;
  productId: string;
}

export const toRows = (mapping: MappingEntry[]): MappingRow[] => mapping.map((m) => ({ providerProductId: m.providerProductId, productId: String(m.productId) }));
export const fromRows = (rows: MappingRow[]): MappingEntry[] =>
  rows.filter((r) => r.providerProductId.trim() && r.productId).map((r) => ({ providerProductId: r.providerProductId.trim(), productId: Number(r.productId) }));

/** Which Patchbay product each of the provider's products is: one row per provider product id. */
export function MappingEditor({ provider, rows, onChange, error }: { provider: Provider; rows: MappingRow[]; onChange: (rows: MappingRow[]) => void; error?: string }) {
  const products = useProductOptions();
  const set = (index: number, patch: Partial<MappingRow>) => onChange(rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));
  const label = providerInfo(provider).label;
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        Product mapping
      </Text>
      <Text size="xs" c="dimmed">
        A sale of a {label} product that is not here is kept as a failed event; add it and re-process the event.
      </Text>
      {rows.map((row, index) => (
        <Group key={index} gap="xs" align="flex-end" wrap="nowrap">
          <TextInput
            style={{ flex: 1 }}
            label={`${label} product ${index + 1}`}
            placeholder={providerInfo(provider).productId}
            value={row.providerProductId}
            onChange={(e) => set(index, { providerProductId: e.currentTarget.value })}
          />
          <Select
            style={{ flex: 1 }}
            label={`Patchbay product ${index + 1}`}
            placeholder="Pick a product"
            searchable
            data={products.options}
            value={row.productId || null}
            onChange={(value) => set(index, { productId: value ?? '' })}
          />
          <ActionIcon variant="subtle" color="red" size="lg" mb={2} onClick={() => onChange(rows.filter((_, i) => i !== index))} aria-label={`Remove mapping ${index + 1}`}>
            <IconTrash size={16} aria-hidden />
          </ActionIcon>
        </Group>
      ))}
      {error && (
        <Text size="sm" c="red.8" role="alert">
          {error}
        </Text>
      )}
      <Button variant="default" size="xs" w="fit-content" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => onChange([...rows, { providerProductId: '', productId: '' }])}>
        Add a product
      </Button>
    </Stack>
  );
}
