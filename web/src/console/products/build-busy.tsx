import { Alert, Button, Group, Text } from '@mantine/core';
import { IconHourglass } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { ApiProblem, isProblem } from '../../api/client';

/** How often a build is tried again on its own while every build slot is busy. */
export const BUSY_RETRIES = 8;
const DEFAULT_WAIT_S = 2;
const MAX_WAIT_S = 30;

/** 429 PACKAGE_BUILD_BUSY: every build slot is taken; the same request succeeds a moment later. */
export const isBuildBusy = (error: unknown): error is ApiProblem => isProblem(error, 429) && error.code === 'PACKAGE_BUILD_BUSY';

/** Seconds to wait before the next try: the answer's Retry-After, within reason. */
export const busyWait = (error: unknown): number => Math.min(MAX_WAIT_S, Math.max(1, error instanceof ApiProblem && error.retryAfter !== undefined ? error.retryAfter : DEFAULT_WAIT_S));

/** TanStack Query retry options that try a busy build again after Retry-After, and nothing else. */
export const retryWhileBusy = {
  retry: (failures: number, error: unknown) => isBuildBusy(error) && failures <= BUSY_RETRIES,
  retryDelay: (_failures: number, error: unknown) => busyWait(error) * 1000,
};

/**
 * "Busy, retrying": shown while a build waits for a free slot, with the seconds until the next try
 * (counted down) and a way to stop. `failureCount` and `failureReason` are the mutation's own.
 */
export function BusyNotice({ failureReason, failureCount, onStop }: { failureReason: unknown; failureCount: number; onStop: () => void }) {
  const [retryAt, setRetryAt] = useState(0);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (isBuildBusy(failureReason)) setRetryAt(Date.now() + busyWait(failureReason) * 1000);
  }, [failureReason, failureCount]);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 500);
    return () => window.clearInterval(timer);
  }, []);
  if (!isBuildBusy(failureReason)) return null;
  const seconds = Math.max(0, Math.ceil((retryAt - now) / 1000));
  return (
    <Alert color="yellow" variant="light" icon={<IconHourglass aria-hidden />} title="The package builder is busy: retrying" role="status">
      <Group justify="space-between" wrap="wrap">
        <Text size="sm">
          Every build slot is in use by other builds. {seconds > 0 ? `Trying again in ${seconds} s` : 'Trying again now'} (attempt {failureCount + 1} of{' '}
          {BUSY_RETRIES + 1}); nothing needs doing.
        </Text>
        <Button size="xs" variant="default" onClick={onStop}>
          Stop waiting
        </Button>
      </Group>
    </Alert>
  );
}
