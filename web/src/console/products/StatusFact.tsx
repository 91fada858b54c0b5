import { Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { StatusBadge } from '../../kit/StatusBadge';

/** A labelled status word (a dash when the caller has none to see) with a line of detail under it. */
export function StatusFact({ label, status, children }: { label: string; status: string | null | undefined; children?: ReactNode }) {
  return (
    <Stack gap={2}>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      {status ? <StatusBadge status={status} /> : '—'}
      {children && (
        <Text size="xs" c="dimmed">
          {children}
        </Text>
      )}
    </Stack>
  );
}
