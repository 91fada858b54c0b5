import { Anchor, Button, FileInput, Group, Modal, NumberInput, Progress, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { IconDownload, IconExternalLink, IconTrash, IconUpload } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api, ApiProblem, unwrap, type UploadProgress, uploadTransport } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { QueryState } from '../../kit/QueryState';
import { useMemberAccess } from '../member-access';
import { Section } from '../../kit/Section';
import { FILE_TYPES, type FileType, label, type Platform, PLATFORMS } from './options';
import { fetchPrivateLinkNow, formatBytes } from './private-link';
import { useProduct } from './ProductLayout';
import { type FileMetadata, filesQuery, productKeys } from './queries';
import { StorageProblem } from './StorageProblem';

function Upload({ productId }: { productId: number }) {
  const client = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [platform, setPlatform] = useState<Platform>('any');
  const [type, setType] = useState<FileType>('installer');
  const [version, setVersion] = useState('');
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const cancel = useRef<AbortController | null>(null);
  const upload = useMutation({
    mutationFn: async (chosen: File) => {
      const fields = { platform, type, ...(version.trim() ? { version: version.trim() } : {}) };
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      // The file goes last: the server streams it into storage as it arrives.
      form.append('file', chosen, chosen.name);
      cancel.current = new AbortController();
      setProgress({ sent: 0, total: chosen.size });
      try {
        return await unwrap(
          api.POST('/api/developer/products/{productId}/files', {
            params: { path: { productId } },
            body: fields,
            bodySerializer: () => form,
            fetch: uploadTransport(form, setProgress, cancel.current.signal),
          }),
        );
      } catch (error) {
        if (cancel.current.signal.aborted) throw new Error('The upload was cancelled; nothing was stored.');
        throw error;
      }
    },
    onSuccess: async (saved) => {
      notify(`${saved.filename} is uploaded.`, 'green');
      setFile(null);
      setVersion('');
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
    },
    onSettled: () => {
      cancel.current = null;
    },
  });
  const percent = progress && progress.total > 0 ? Math.min(100, Math.round((progress.sent / progress.total) * 100)) : 0;
  const problem = upload.error instanceof ApiProblem ? upload.error : null;
  return (
    <Section id="upload" title="Upload a file">
      <Text size="sm">The file is kept in private storage; buyers download it through private links that expire after five minutes.</Text>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (file) upload.mutate(file);
        }}
      >
        <Stack>
          <FileInput label="File" placeholder="Choose a file" value={file} onChange={setFile} clearable clearButtonProps={{ 'aria-label': 'Clear the chosen file' }} error={problem?.fieldError('file')} disabled={upload.isPending} />
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            <Select label="Platform" data={PLATFORMS} value={platform} onChange={(v) => v && setPlatform(v as Platform)} allowDeselect={false} disabled={upload.isPending} />
            <Select label="Type" data={FILE_TYPES} value={type} onChange={(v) => v && setType(v as FileType)} allowDeselect={false} disabled={upload.isPending} />
            <TextInput label="Version (optional)" value={version} onChange={(e) => setVersion(e.currentTarget.value)} maxLength={50} disabled={upload.isPending} />
          </SimpleGrid>
          {upload.isPending && progress && (
            <Stack gap={4}>
              <Progress value={percent} striped animated aria-label="Upload progress" />
              <Text size="sm" aria-live="polite">
                {percent < 100 ? `Uploading: ${formatBytes(progress.sent)} of ${formatBytes(progress.total)} (${percent} %)` : 'Uploaded; the server is storing and hashing the file…'}
              </Text>
            </Stack>
          )}
          {upload.isError && <StorageProblem error={upload.error} />}
          <Group>
            <Button type="submit" leftSection={<IconUpload size={16} aria-hidden />} loading={upload.isPending} disabled={!file}>
              Upload
            </Button>
            {upload.isPending && (
              <Button variant="default" onClick={() => cancel.current?.abort()}>
                Cancel the upload
              </Button>
            )}
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function RegisterExternal({ productId }: { productId: number }) {
  const client = useQueryClient();
  const [filename, setFilename] = useState('');
  const [url, setUrl] = useState('');
  const [platform, setPlatform] = useState<Platform>('any');
  const [type, setType] = useState<FileType>('installer');
  const [version, setVersion] = useState('');
  const [size, setSize] = useState<number | string>('');
  const register = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/developer/products/{productId}/files', {
          params: { path: { productId } },
          body: {
            filename: filename.trim(),
            url: url.trim(),
            platform,
            type,
            ...(version.trim() ? { version: version.trim() } : {}),
            ...(typeof size === 'number' ? { sizeBytes: size } : {}),
          },
        }),
      ),
    onSuccess: async (saved) => {
      notify(`${saved.filename} is registered.`, 'green');
      setFilename('');
      setUrl('');
      setVersion('');
      setSize('');
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
    },
  });
  const problem = register.error instanceof ApiProblem ? register.error : null;
  return (
    <Section id="external" title="Register a file hosted elsewhere">
      <Text size="sm">For files on your own download server or CDN: buyers are sent to its https address; Patchbay stores nothing.</Text>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          register.mutate();
        }}
      >
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="File name" required value={filename} onChange={(e) => setFilename(e.currentTarget.value)} error={problem?.fieldError('filename')} maxLength={255} />
            <TextInput label="Address (https)" required type="url" value={url} onChange={(e) => setUrl(e.currentTarget.value)} error={problem?.fieldError('url')} />
            <Select label="Platform" data={PLATFORMS} value={platform} onChange={(v) => v && setPlatform(v as Platform)} allowDeselect={false} />
            <Select label="Type" data={FILE_TYPES} value={type} onChange={(v) => v && setType(v as FileType)} allowDeselect={false} />
            <TextInput label="Version (optional)" value={version} onChange={(e) => setVersion(e.currentTarget.value)} maxLength={50} />
            <NumberInput label="Size in bytes (optional)" min={0} allowDecimal={false} value={size} onChange={setSize} error={problem?.fieldError('sizeBytes')} />
          </SimpleGrid>
          {register.isError && <StorageProblem error={register.error} />}
          <Group>
            <Button type="submit" variant="default" loading={register.isPending} disabled={!filename.trim() || !url.trim()}>
              Register the file
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function FileActions({ productId, file, mayManage }: { productId: number; file: FileMetadata; mayManage: boolean }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const link = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/products/{productId}/files/{fileId}/link', { params: { path: { productId, fileId: file.id } } })),
    onSuccess: (answer) => fetchPrivateLinkNow(answer.url),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/products/{productId}/files/{fileId}', { params: { path: { productId, fileId: file.id } } })),
    onSuccess: async () => {
      setConfirming(false);
      notify(`${file.filename} is deleted.`);
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
    },
  });
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        {file.deliveryMode === 'private_link' ? (
          <Button size="xs" variant="default" leftSection={<IconDownload size={14} aria-hidden />} loading={link.isPending} onClick={() => link.mutate()} aria-label={`Download ${file.filename}`}>
            Download
          </Button>
        ) : (
          file.externalUrl && (
            <Button size="xs" variant="default" component="a" href={file.externalUrl} target="_blank" rel="noreferrer" leftSection={<IconExternalLink size={14} aria-hidden />} aria-label={`Open ${file.filename} where it is hosted`}>
              Open
            </Button>
          )
        )}
        {mayManage && (
          <Button size="xs" variant="default" color="red" leftSection={<IconTrash size={14} aria-hidden />} onClick={() => setConfirming(true)} aria-label={`Delete ${file.filename}`}>
            Delete
          </Button>
        )}
      </Group>
      {link.isError && <StorageProblem error={link.error} />}
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={confirming} onClose={() => setConfirming(false)} title={`Delete ${file.filename}?`}>
        <Stack>
          <Text size="sm">Buyers can no longer download it. {file.managed ? 'The stored file is removed too.' : 'The file where it is hosted is not touched.'}</Text>
          {remove.isError && <StorageProblem error={remove.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Keep it
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate()}>
              Delete the file
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

/** Delivery files: upload with a progress bar, files hosted elsewhere, downloads through private links, deletion. */
export default function FilesPage() {
  const product = useProduct();
  const access = useMemberAccess();
  const mayManage = access.can('product_files.manage');
  const query = useQuery(filesQuery(product.id));
  const columns: Column<FileMetadata>[] = [
    { key: 'name', header: 'File', render: (f) => (f.externalUrl ? <Anchor href={f.externalUrl} target="_blank" rel="noreferrer">{f.filename}</Anchor> : f.filename) },
    { key: 'platform', header: 'Platform', render: (f) => label(PLATFORMS, f.platform) },
    { key: 'type', header: 'Type', render: (f) => label(FILE_TYPES, f.type) },
    { key: 'version', header: 'Version', render: (f) => f.version ?? '—' },
    { key: 'size', header: 'Size', render: (f) => formatBytes(f.sizeBytes), numeric: true },
    { key: 'delivery', header: 'Delivery', render: (f) => (f.deliveryMode === 'private_link' ? 'Private link' : 'Hosted elsewhere') },
    { key: 'uploaded', header: 'Added', render: (f) => formatDateTime(f.uploadedAt) },
    { key: 'actions', header: 'Actions', render: (f) => <FileActions productId={product.id} file={f} mayManage={mayManage} /> },
  ];
  return (
    <Stack gap="lg">
      <QueryState query={query} label="Loading the files">
        {(files) =>
          files.length === 0 ? (
            <EmptyState title="No delivery files yet">
              {mayManage ? 'Upload the installer or plugin buyers download, or register a file hosted elsewhere, below.' : 'A teammate with file access uploads them.'}
            </EmptyState>
          ) : (
            <DataTable caption={`Delivery files of ${product.name}`} columns={columns} rows={files} rowKey={(f) => f.id} />
          )
        }
      </QueryState>
      {mayManage && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <Upload productId={product.id} />
          <RegisterExternal productId={product.id} />
        </SimpleGrid>
      )}
    </Stack>
  );
}
