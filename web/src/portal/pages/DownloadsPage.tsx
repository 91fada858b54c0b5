import { Button, Group, Select, Stack, Text } from '@mantine/core';
import { IconDownload } from '@tabler/icons-react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { fetchPrivateLinkNow, formatBytes } from '../../kit/files';
import { formatDate } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { type Download, downloadsQuery } from '../queries';

const PLATFORMS: Record<string, string> = { macos: 'macOS', windows: 'Windows', linux: 'Linux', any: 'Any platform' };
const platformLabel = (platform: string) => PLATFORMS[platform] ?? platform;

function DownloadsView({ files }: { files: Download[] }) {
  const [params, setParams] = useListParams({ product: '', platform: '' });
  // Each click asks for a private link (300 s) and fetches it at once: the link is never shown or kept.
  const download = useMutation({
    mutationFn: async (file: Download) => unwrap(api.POST('/api/customer-portal/downloads/{fileId}/link', { params: { path: { fileId: file.file_id } } })),
    onSuccess: (link) => fetchPrivateLinkNow(link.url),
  });
  const products = [...new Map(files.map((f) => [String(f.product_id), f.product])).entries()];
  const platforms = [...new Set(files.map((f) => f.platform))];
  const shown = files.filter((f) => (!params.product || String(f.product_id) === params.product) && (!params.platform || f.platform === params.platform));
  const columns: Column<Download>[] = [
    {
      key: 'file',
      header: 'File',
      render: (f) => (
        <Stack gap={0}>
          <Text fw={500} style={{ overflowWrap: 'anywhere' }}>
            {f.filename}
          </Text>
          <Text size="sm" c="dimmed">
            {f.product} · {platformLabel(f.platform)}
          </Text>
        </Stack>
      ),
    },
    {
      key: 'version',
      header: 'Version',
      render: (f) => (
        <Stack gap={2}>
          <Text size="sm">
            {f.version ?? '—'}
            {f.releasedAt ? ` (${formatDate(f.releasedAt)})` : ''}
          </Text>
          {f.changelog && (
            <Text size="xs" c="dimmed" lineClamp={4} style={{ whiteSpace: 'pre-line' }}>
              {f.changelog}
            </Text>
          )}
        </Stack>
      ),
    },
    { key: 'size', header: 'Size', render: (f) => formatBytes(f.sizeBytes), numeric: true },
    {
      key: 'download',
      header: 'Download',
      render: (f) => (
        <Button
          size="xs"
          leftSection={<IconDownload size={14} aria-hidden />}
          loading={download.isPending && download.variables?.file_id === f.file_id}
          onClick={() => download.mutate(f)}
          aria-label={`Download ${f.filename}`}
        >
          Download
        </Button>
      ),
    },
  ];
  if (files.length === 0) {
    return (
      <EmptyState title="No files to download">
        Installers of the plugins you own appear here once the store has uploaded them. A refunded purchase’s files are no longer offered.
      </EmptyState>
    );
  }
  return (
    <Stack>
      <Group wrap="wrap">
        <Select
          label="Product"
          data={[{ value: '', label: 'All products' }, ...products.map(([value, label]) => ({ value, label }))]}
          value={params.product}
          onChange={(value) => setParams({ product: value ?? '' })}
          allowDeselect={false}
          w={240}
        />
        <Select
          label="Platform"
          data={[{ value: '', label: 'All platforms' }, ...platforms.map((p) => ({ value: p, label: platformLabel(p) }))]}
          value={params.platform}
          onChange={(value) => setParams({ platform: value ?? '' })}
          allowDeselect={false}
          w={200}
        />
      </Group>
      {download.isError && <ProblemAlert error={download.error} title={`The download of ${download.variables?.filename ?? 'the file'} could not start`} />}
      {shown.length > 0 ? (
        <DataTable caption={`Files you can download (${shown.length})`} columns={columns} rows={shown} rowKey={(f) => f.file_id} minWidth={520} />
      ) : (
        <EmptyState title="No file matches">Choose “All products” and “All platforms” to see every file.</EmptyState>
      )}
    </Stack>
  );
}

/** The files of the products the buyer owns now, each downloaded through a private link of its own. */
export default function DownloadsPage() {
  const query = useQuery(downloadsQuery);
  return (
    <>
      <PageHeader title="Downloads" description="Installers of the plugins you own, with what changed in each version." />
      <QueryState query={query} label="Loading your downloads">
        {(files) => <DownloadsView files={files} />}
      </QueryState>
    </>
  );
}
