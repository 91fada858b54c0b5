import { Button, Group, NumberInput, Paper, Stack, Text } from '@mantine/core';
import { IconDownload } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { BusyNotice, retryWhileBusy } from './build-busy';
import { fetchPrivateLinkNow } from './private-link';
import { StorageProblem } from './StorageProblem';

/**
 * The storefront package (storefront.manage): the workspace's store integration for an in-plugin
 * store panel, with the active products, prices and storefront URLs. No credential inside.
 */
export default function StorefrontPackagePage() {
  const [width, setWidth] = useState<number | string>('');
  const [height, setHeight] = useState<number | string>('');
  const stopped = useRef(false);
  const download = useMutation({
    mutationFn: () => {
      if (stopped.current) throw new Error('Stopped waiting for a build slot; nothing more was requested.');
      return unwrap(
        api.GET('/api/developer/storefront/plugin-package', {
          params: { query: { ...(typeof width === 'number' ? { uiWidth: width } : {}), ...(typeof height === 'number' ? { uiHeight: height } : {}) } },
        }),
      );
    },
    onMutate: () => {
      stopped.current = false;
    },
    ...retryWhileBusy,
    onSuccess: (link) => {
      fetchPrivateLinkNow(link.url);
      notify(`${link.filename} is downloading.`, 'green');
    },
  });
  return (
    <>
      <PageHeader title="Storefront package" description="A store panel for your plugins: a buy button per active product, with its price and storefront URL." />
      <Paper withBorder p="md" maw={720}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            download.mutate();
          }}
        >
          <Stack>
            <Text size="sm">
              This is the store integration, not the licensing package: it holds no product key, only the catalogue of the workspace’s active products.
              The download is a private link, fetched at once.
            </Text>
            <Group grow>
              <NumberInput label="Panel width (px)" placeholder="600" min={1} max={4096} allowDecimal={false} value={width} onChange={setWidth} />
              <NumberInput label="Panel height (px)" placeholder="400" min={1} max={4096} allowDecimal={false} value={height} onChange={setHeight} />
            </Group>
            <BusyNotice
              failureReason={download.failureReason}
              failureCount={download.failureCount}
              onStop={() => {
                stopped.current = true;
                download.reset();
              }}
            />
            {download.isError && <StorageProblem error={download.error} />}
            <Group>
              <Button type="submit" leftSection={<IconDownload size={16} aria-hidden />} loading={download.isPending}>
                Download the storefront package
              </Button>
            </Group>
          </Stack>
        </form>
      </Paper>
    </>
  );
}
