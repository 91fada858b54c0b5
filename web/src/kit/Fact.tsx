import { Text } from '@mantine/core';
import type { ReactNode } from 'react';

/** A label and its value in a description list (`<dl>`). */
export function Fact({ label, children }: { label: string; children: ReactNode }) {
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
