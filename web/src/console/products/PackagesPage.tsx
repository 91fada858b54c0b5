import { Alert, Button, Checkbox, Group, List, Modal, NumberInput, Radio, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { IconAlertTriangle, IconDownload, IconRefresh, IconRotate } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api, type paths, unwrap } from '../../api/client';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { QueryState } from '../../kit/QueryState';
import { useMemberAccess } from '../member-access';
import { BusyNotice, isBuildBusy, retryWhileBusy } from './build-busy';
import { EnvironmentSwitch } from './CredentialsPage';
import { Section } from '../../kit/Section';
import { fetchPrivateLinkNow } from './private-link';
import { useProduct } from './ProductLayout';
import { type Environment, packageStatusQuery, productKeys } from './queries';
import { StatusFact } from './StatusFact';
import { StorageProblem } from './StorageProblem';

type BuildBody = NonNullable<paths['/api/developer/products/{productId}/plugin-package/generate']['post']['requestBody']>['content']['application/json'];
type PackageStatus = paths['/api/developer/products/{productId}/plugin-package/status']['get']['responses'][200]['content']['application/json'];
type Action = 'download' | 'generate' | 'regenerate';

const VARIANTS = [
  { value: 'pluginscript', label: 'Plugin script', description: 'A script integration for a HISE-style scripting layer: no framework rebuild. Stays licensed offline until the grace ends.' },
  { value: 'native', label: 'Native C++', description: 'A C++17 licensing core with offline signature checks and a JUCE module: install, rebuild the framework, then build the plugin.' },
];
const MODES = [
  { value: '', label: 'As saved' },
  { value: 'validation-only', label: 'Validation only' },
  { value: 'storefront-only', label: 'Storefront only' },
  { value: 'storefront-validation', label: 'Storefront and validation' },
];

/** How long the previous key stays accepted after a rotation, in words ("7 days", "no overlap"). */
export function overlapWords(seconds: number | null): string {
  if (seconds === null) return 'the configured rotation overlap';
  if (seconds <= 0) return 'no overlap: the old key stops working at once';
  const days = seconds / 86_400;
  return Number.isInteger(days) ? `${days} ${days === 1 ? 'day' : 'days'}` : `${Math.round(seconds / 3600)} hours`;
}

/**
 * One build request (download, generate or regenerate) that waits out busy build slots on its own.
 * A regenerate that found every slot busy has already rotated the key (the server rotates, then
 * builds), so its retries ask for a normal generation: the same package, without a second rotation.
 */
function useBuild(productId: number) {
  const client = useQueryClient();
  const rotated = useRef(false);
  const stopped = useRef(false);
  const build = useMutation({
    mutationFn: async ({ action, body }: { action: Action; body: BuildBody }) => {
      if (stopped.current) throw new Error('Stopped waiting for a build slot; nothing more was requested.');
      const path = { path: { productId } };
      if (action === 'download') return unwrap(api.GET('/api/developer/products/{productId}/plugin-package', { params: { ...path, query: body } }));
      if (action === 'regenerate' && !rotated.current) {
        try {
          return await unwrap(api.POST('/api/developer/products/{productId}/plugin-package/regenerate', { params: path, body }));
        } catch (error) {
          if (isBuildBusy(error)) rotated.current = true;
          throw error;
        }
      }
      return unwrap(api.POST('/api/developer/products/{productId}/plugin-package/generate', { params: path, body }));
    },
    onMutate: () => {
      rotated.current = false;
      stopped.current = false;
    },
    ...retryWhileBusy,
    onSuccess: async (link, { action }) => {
      fetchPrivateLinkNow(link.url);
      notify(action === 'regenerate' ? `The product key is rotated; ${link.filename} is downloading.` : `${link.filename} is downloading.`, 'green');
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
    },
  });
  const stop = () => {
    stopped.current = true;
    build.reset();
  };
  return { build, stop };
}

function RegenerateWarning({ opened, environment, overlap, onConfirm, onClose }: { opened: boolean; environment: Environment; overlap: number | null; onConfirm: () => void; onClose: () => void }) {
  const [understood, setUnderstood] = useState(false);
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title="Regenerate and rotate the product key?" size="lg">
      <Stack>
        <Alert color="orange" variant="light" icon={<IconAlertTriangle aria-hidden />} title={`This rotates the ${environment} product key`}>
          <List size="sm" spacing={4}>
            <List.Item>A new {environment} product key is made and the new package embeds it.</List.Item>
            <List.Item>
              Plugins you already shipped carry the old key. It stays accepted for <strong>{overlapWords(overlap)}</strong>
              {overlap !== null && overlap > 0 ? ': ship the new package before then, or those plugins stop validating.' : '.'}
            </List.Item>
            <List.Item>Regenerating is not the way to refresh an expired download link: download again instead.</List.Item>
          </List>
        </Alert>
        <Checkbox checked={understood} onChange={(e) => setUnderstood(e.currentTarget.checked)} label={`I understand that the ${environment} key rotates, with ${overlapWords(overlap)}`} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Keep the current key
          </Button>
          <Button
            color="orange"
            disabled={!understood}
            onClick={() => {
              setUnderstood(false);
              onConfirm();
            }}
          >
            Rotate the key and regenerate
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function Status({ status }: { status: PackageStatus }) {
  return (
    <SimpleGrid cols={{ base: 1, sm: 3 }}>
      <StatusFact label="Package" status={status.status}>
        {status.packageReady ? 'Built with the key in use now' : 'Not built with the key in use yet'}
      </StatusFact>
      <Stack gap={2}>
        <Text size="sm" c="dimmed">
          Last generated
        </Text>
        <Text>{formatDateTime(status.lastGeneratedAt)}</Text>
      </Stack>
      <Stack gap={2}>
        <Text size="sm" c="dimmed">
          Last plugin connection
        </Text>
        <Text>{formatDateTime(status.lastPluginConnectionAt)}</Text>
      </Stack>
    </SimpleGrid>
  );
}

/** Plugin packages: the variant and settings, download (a private link fetched at once), generate, and regenerate with its warning. */
export default function PackagesPage() {
  const product = useProduct();
  const access = useMemberAccess();
  const mayBuild = access.can('product_files.manage');
  const [params, setParams] = useListParams({ environment: 'live' });
  const environment: Environment = params.environment === 'test' ? 'test' : 'live';
  const [settings, setSettings] = useState({ variant: '', experienceMode: '', uiWidth: '' as number | string, uiHeight: '' as number | string });
  const set = (patch: Partial<typeof settings>) => setSettings((s) => ({ ...s, ...patch }));
  const status = useQuery(packageStatusQuery(product.id, environment));
  const { build, stop } = useBuild(product.id);
  const [warning, setWarning] = useState(false);
  const body: BuildBody = {
    variant: settings.variant,
    environment,
    releaseChannel: 'stable',
    ...(settings.experienceMode ? { experienceMode: settings.experienceMode } : {}),
    ...(typeof settings.uiWidth === 'number' ? { uiWidth: settings.uiWidth } : {}),
    ...(typeof settings.uiHeight === 'number' ? { uiHeight: settings.uiHeight } : {}),
  };
  const run = (action: Action) => build.mutate({ action, body });
  const chosen = settings.variant !== '';
  const overlap = status.data?.rotationOverlapSeconds ?? null;
  return (
    <Stack gap="lg">
      <Section id="status" title="Package status">
        <EnvironmentSwitch value={environment} onChange={(e) => setParams({ environment: e })} />
        <QueryState query={status} label="Loading the package status">
          {(s) => (
            <Stack>
              <Status status={s} />
              {s.status === 'rotation_required' && (
                <Alert color="orange" title="The product key must be rotated">
                  The saved {environment} key cannot be recovered, so no package can embed it. Regenerate to rotate it deliberately.
                </Alert>
              )}
            </Stack>
          )}
        </QueryState>
      </Section>
      <Section id="settings" title="Variant and settings">
        <Radio.Group label="Variant" description="Choose the integration your plugin uses; there is no default." value={settings.variant} onChange={(v) => set({ variant: v })} required>
          <Stack gap="xs" mt="xs">
            {VARIANTS.map((v) => (
              <Radio key={v.value} value={v.value} label={v.label} description={v.description} />
            ))}
          </Stack>
        </Radio.Group>
        <SimpleGrid cols={{ base: 1, sm: 2, md: 4 }}>
          <Select label="Experience mode" data={MODES} value={settings.experienceMode} onChange={(v) => set({ experienceMode: v ?? '' })} allowDeselect={false} />
          <NumberInput label="UI width (px)" placeholder="Saved, else 600" min={1} max={4096} allowDecimal={false} value={settings.uiWidth} onChange={(v) => set({ uiWidth: v })} />
          <NumberInput label="UI height (px)" placeholder="Saved, else 400" min={1} max={4096} allowDecimal={false} value={settings.uiHeight} onChange={(v) => set({ uiHeight: v })} />
          <Select label="Release channel" data={[{ value: 'stable', label: 'Stable' }]} value="stable" allowDeselect={false} />
        </SimpleGrid>
        <Text size="sm" c="dimmed">
          Download builds the package for these settings (missing ones come from the saved settings) or reuses the same build. Generate saves these settings
          and builds with the current key. Regenerate rotates the {environment} key first.
        </Text>
        <BusyNotice failureReason={build.failureReason} failureCount={build.failureCount} onStop={stop} />
        {build.isError && <StorageProblem error={build.error} />}
        <Group>
          <Button leftSection={<IconDownload size={16} aria-hidden />} disabled={!chosen || build.isPending} loading={build.isPending && build.variables?.action === 'download'} onClick={() => run('download')}>
            Download the package
          </Button>
          {mayBuild && (
            <>
              <Button variant="default" leftSection={<IconRefresh size={16} aria-hidden />} disabled={!chosen || build.isPending} loading={build.isPending && build.variables?.action === 'generate'} onClick={() => run('generate')}>
                Generate
              </Button>
              <Button variant="default" color="orange" leftSection={<IconRotate size={16} aria-hidden />} disabled={!chosen || build.isPending} loading={build.isPending && build.variables?.action === 'regenerate'} onClick={() => setWarning(true)}>
                Regenerate (rotates the key)
              </Button>
            </>
          )}
        </Group>
        {!chosen && (
          <Text size="sm" c="dimmed">
            Choose a variant to download or build a package.
          </Text>
        )}
      </Section>
      <RegenerateWarning
        opened={warning}
        environment={environment}
        overlap={overlap}
        onClose={() => setWarning(false)}
        onConfirm={() => {
          setWarning(false);
          run('regenerate');
        }}
      />
    </Stack>
  );
}
