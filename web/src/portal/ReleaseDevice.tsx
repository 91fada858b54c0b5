import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiProblem, unwrap } from '../api/client';
import { formatDateTime } from '../kit/format';
import { ProblemAlert } from '../kit/ProblemAlert';
import { type Device, type License, licensesQuery } from './queries';

export const deviceName = (device: Pick<Device, 'machine_name'>) => device.machine_name ?? 'Unnamed computer';

/**
 * The release limit's answer in words: how many releases the window allows and when the next one
 * is possible (the 429's `nextReleaseAt`, else its Retry-After).
 */
function ReleaseLimit({ problem }: { problem: ApiProblem }) {
  const { limit, windowDays, nextReleaseAt } = problem.body;
  const next =
    typeof nextReleaseAt === 'string' ? nextReleaseAt : problem.retryAfter !== undefined ? new Date(Date.now() + problem.retryAfter * 1000).toISOString() : null;
  return (
    <Alert color="yellow" title="No more releases for now" role="alert">
      <Stack gap="xs">
        <Text size="sm">
          {typeof limit === 'number' && typeof windowDays === 'number'
            ? `A license can release ${limit} devices in any ${windowDays} days, and this one has used them.`
            : problem.detail}
        </Text>
        {next && (
          <Text size="sm" fw={600}>
            The next release is possible on {formatDateTime(next)}.
          </Text>
        )}
        <Text size="xs" c="dimmed">
          Need it sooner? The store can free a device for you. Code {problem.code}
          {problem.requestId ? ` · Request id ${problem.requestId}` : ''}
        </Text>
      </Stack>
    </Alert>
  );
}

/**
 * Frees the seat a computer holds, after a confirmation that says what it does: the plugin there
 * stops working, and a new computer can be activated in its place.
 */
export function ReleaseDevice({ license, device, onReleased }: { license: License; device: Device; onReleased: (name: string) => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  const client = useQueryClient();
  const name = deviceName(device);
  const release = useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/customer-portal/licenses/{serialId}/activations/{activationId}', { params: { path: { serialId: license.serial_id, activationId: device.id } } })),
    onSuccess: (updated) => {
      client.setQueryData(licensesQuery.queryKey, (rows) => rows?.map((row) => (row.serial_id === updated.serial_id ? updated : row)));
      close();
      onReleased(name);
    },
  });
  const dismiss = () => {
    close();
    release.reset();
  };
  const limited = release.error instanceof ApiProblem && release.error.code === 'DEVICE_RELEASE_LIMIT' ? release.error : null;
  return (
    <>
      <Button size="xs" variant="default" onClick={open} aria-label={`Release ${name}`}>
        Release
      </Button>
      <Modal opened={opened} onClose={dismiss} title={`Release ${name}?`} closeButtonProps={{ 'aria-label': 'Close' }}>
        <Stack>
          <Text size="sm">
            {license.product} stops working on {name}, and its seat is free for another computer: activate the plugin there with your license key.
            Releases are limited per license in any 30 days, so release a device only when you have moved to another computer.
          </Text>
          {limited ? <ReleaseLimit problem={limited} /> : release.isError && <ProblemAlert error={release.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={dismiss}>
              {limited ? 'Close' : 'Cancel'}
            </Button>
            {!limited && (
              <Button color="red.9" loading={release.isPending} onClick={() => release.mutate()}>
                Release the device
              </Button>
            )}
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
