import { Group, Paper, Progress, Stack, Text } from '@mantine/core';
import { formatCount } from './format';

export interface OperationState {
  /** queued, running, succeeded, failed (an import resource's `status`, say). */
  status: string;
  processed: number;
  /** Unknown while the operation has not counted its work yet. */
  total: number | null;
}

/**
 * A long operation as it advances: a determinate bar once the total is known (an import's rows),
 * an animated one before. The caller polls the operation's resource and passes its latest state.
 */
export function OperationProgress({ label, state }: { label: string; state: OperationState }) {
  const finished = state.status === 'succeeded' || state.status === 'failed' || state.status === 'completed';
  const percent = state.total ? Math.min(100, Math.round((state.processed / state.total) * 100)) : finished ? 100 : 0;
  const known = state.total !== null && state.total > 0;
  return (
    <Paper withBorder p="md">
      <Stack gap="xs">
        <Group justify="space-between">
          <Text fw={500}>{label}</Text>
          <Text size="sm" c="dimmed">
            {state.status}
          </Text>
        </Group>
        <Progress
          value={known || finished ? percent : 100}
          animated={!finished && !known}
          striped={!finished}
          color={state.status === 'failed' ? 'red' : undefined}
          aria-label={label}
          aria-valuetext={known ? `${formatCount(state.processed)} of ${formatCount(state.total!)} rows` : state.status}
        />
        <Text size="sm" aria-live="polite">
          {known ? `${formatCount(state.processed)} of ${formatCount(state.total!)} rows processed` : `${formatCount(state.processed)} rows processed`}
        </Text>
      </Stack>
    </Paper>
  );
}
