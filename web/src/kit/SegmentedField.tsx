import { SegmentedControl, Stack, Text } from '@mantine/core';
import { useId } from 'react';

/**
 * A choice among a few options as one segmented control, named by a visible label (Mantine's
 * control has none of its own), with an optional line under it.
 */
export function SegmentedField<V extends string>({ label, value, onChange, data, description }: { label: string; value: V; onChange: (value: V) => void; data: Array<{ value: V; label: string }>; description?: string }) {
  const id = useId();
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500} id={id}>
        {label}
      </Text>
      <SegmentedControl aria-labelledby={id} w="fit-content" value={value} onChange={(v) => onChange(v as V)} data={data} />
      {description && (
        <Text size="xs" c="dimmed">
          {description}
        </Text>
      )}
    </Stack>
  );
}
