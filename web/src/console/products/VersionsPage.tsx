import '@mantine/dates/styles.css';
import { Badge, Button, Checkbox, Group, Modal, Spoiler, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiProblem, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { FormActions } from '../../kit/FormActions';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { useMemberAccess } from '../member-access';
import { useProduct } from './ProductLayout';
import { productKeys, type Version, versionsQuery } from './queries';

interface VersionValues {
  version: string;
  changelog: string;
  releaseDate: string | null;
  isCurrent: boolean;
}

/** The picker answers local wall-clock text ("2026-11-24 10:00:00"); the API takes an instant. */
const toIso = (local: string | null) => (local ? new Date(local.replace(' ', 'T')).toISOString() : null);
const toLocal = (iso: string | null) => {
  if (!iso) return null;
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:00`;
};

function VersionForm({ initial, offerCurrent, pending, error, submitLabel, onSubmit, onCancel }: { initial: VersionValues; offerCurrent: boolean; pending: boolean; error: unknown; submitLabel: string; onSubmit: (v: VersionValues) => void; onCancel: () => void }) {
  const [values, setValues] = useState(initial);
  const problem = error instanceof ApiProblem ? error : null;
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit(values);
      }}
    >
      <Stack>
        <TextInput label="Version" required placeholder="1.2.0" value={values.version} onChange={(e) => setValues({ ...values, version: e.currentTarget.value })} maxLength={50} error={problem?.fieldError('version')} />
        <Textarea label="Changelog" autosize minRows={4} maxRows={14} value={values.changelog} onChange={(e) => setValues({ ...values, changelog: e.currentTarget.value })} error={problem?.fieldError('changelog')} />
        <DateTimePicker label="Release date" clearable clearButtonProps={{ 'aria-label': 'Clear the release date' }} valueFormat="DD MMM YYYY HH:mm" value={values.releaseDate} onChange={(value) => setValues({ ...values, releaseDate: value })} error={problem?.fieldError('releaseDate')} />
        {offerCurrent && <Checkbox label="Make this the current version" checked={values.isCurrent} onChange={(e) => setValues({ ...values, isCurrent: e.currentTarget.checked })} />}
        <FormActions error={error} submitLabel={submitLabel} pending={pending} disabled={!values.version.trim()} onCancel={onCancel} />
      </Stack>
    </form>
  );
}

function useInvalidate(productId: number) {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: productKeys.one(productId) });
}

function AddVersion({ productId, first, onClose }: { productId: number; first: boolean; onClose: () => void }) {
  const invalidate = useInvalidate(productId);
  const create = useMutation({
    mutationFn: (v: VersionValues) =>
      unwrap(
        api.POST('/api/developer/products/{productId}/versions', {
          params: { path: { productId } },
          body: { version: v.version.trim(), changelog: v.changelog, releaseDate: toIso(v.releaseDate), isCurrent: v.isCurrent },
        }),
      ),
    onSuccess: async (saved) => {
      notify(`Version ${saved.version} is added${saved.isCurrent ? ' and current' : ''}.`, 'green');
      await invalidate();
      onClose();
    },
  });
  return (
    <VersionForm
      initial={{ version: '', changelog: '', releaseDate: toLocal(new Date().toISOString()), isCurrent: true }}
      offerCurrent={!first}
      pending={create.isPending}
      error={create.error}
      submitLabel="Add the version"
      onSubmit={(v) => create.mutate(v)}
      onCancel={onClose}
    />
  );
}

function EditVersion({ productId, version, onClose }: { productId: number; version: Version & { id: number }; onClose: () => void }) {
  const invalidate = useInvalidate(productId);
  const save = useMutation({
    mutationFn: (v: VersionValues) =>
      unwrap(
        api.PATCH('/api/developer/products/{productId}/versions/{versionId}', {
          params: { path: { productId, versionId: version.id } },
          body: { version: v.version.trim(), changelog: v.changelog, releaseDate: toIso(v.releaseDate), ...(v.isCurrent && !version.isCurrent ? { isCurrent: true as const } : {}) },
        }),
      ),
    onSuccess: async (saved) => {
      notify(`Version ${saved.version} is saved.`, 'green');
      await invalidate();
      onClose();
    },
  });
  return (
    <VersionForm
      initial={{ version: version.version, changelog: version.changelog, releaseDate: toLocal(version.releaseDate), isCurrent: version.isCurrent }}
      offerCurrent={!version.isCurrent}
      pending={save.isPending}
      error={save.error}
      submitLabel="Save"
      onSubmit={(v) => save.mutate(v)}
      onCancel={onClose}
    />
  );
}

function MakeCurrent({ productId, version }: { productId: number; version: Version & { id: number } }) {
  const invalidate = useInvalidate(productId);
  const mark = useMutation({
    mutationFn: () => unwrap(api.PATCH('/api/developer/products/{productId}/versions/{versionId}', { params: { path: { productId, versionId: version.id } }, body: { isCurrent: true } })),
    onSuccess: async () => {
      notify(`Version ${version.version} is now current.`, 'green');
      await invalidate();
    },
  });
  return (
    <Stack gap={4}>
      <Button size="xs" variant="default" loading={mark.isPending} onClick={() => mark.mutate()} aria-label={`Mark ${version.version} as the current version`}>
        Mark current
      </Button>
      {mark.isError && <ProblemAlert error={mark.error} />}
    </Stack>
  );
}

const saved = (v: Version): v is Version & { id: number } => typeof v.id === 'number';

/** Versions with their changelogs: add, edit, and which one is current (exactly one; it names the catalogue's current version). */
export default function VersionsPage() {
  const product = useProduct();
  const mayManage = useMemberAccess().can('products.manage');
  const query = useQuery(versionsQuery(product.id));
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<(Version & { id: number }) | null>(null);
  const columns: Column<Version>[] = [
    {
      key: 'version',
      header: 'Version',
      render: (v) => (
        <Group gap="xs">
          <Text fw={500}>{v.version}</Text>
          {v.isCurrent && <Badge variant="light">Current</Badge>}
        </Group>
      ),
    },
    { key: 'released', header: 'Released', render: (v) => formatDateTime(v.releaseDate) },
    {
      key: 'changelog',
      header: 'Changelog',
      render: (v) =>
        v.changelog ? (
          <Spoiler maxHeight={48} showLabel="Show more" hideLabel="Show less">
            <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
              {v.changelog}
            </Text>
          </Spoiler>
        ) : (
          '—'
        ),
    },
    {
      key: 'actions',
      header: 'Actions',
      render: (v) =>
        !saved(v) ? (
          <Text size="xs" c="dimmed">
            From the catalogue; add a version to record it
          </Text>
        ) : mayManage ? (
          <Group gap="xs" wrap="nowrap">
            <Button size="xs" variant="default" onClick={() => setEditing(v)} aria-label={`Edit version ${v.version}`}>
              Edit
            </Button>
            {!v.isCurrent && <MakeCurrent productId={product.id} version={v} />}
          </Group>
        ) : null,
    },
  ];
  return (
    <Stack>
      {mayManage && (
        <Group justify="flex-end">
          <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setAdding(true)}>
            Add a version
          </Button>
        </Group>
      )}
      <QueryState query={query} label="Loading the versions">
        {(versions) => (
          <>
            {versions.length === 0 ? (
              <EmptyState title="No versions yet">
                {mayManage ? 'Add the version you ship now, with its changelog: it becomes the current version.' : 'A teammate who manages products adds them.'}
              </EmptyState>
            ) : (
              <DataTable caption={`Versions of ${product.name}, current first`} columns={columns} rows={versions} rowKey={(v) => String(v.id)} />
            )}
            <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={adding} onClose={() => setAdding(false)} title="Add a version" size="lg">
              {adding && <AddVersion productId={product.id} first={versions.filter(saved).length === 0} onClose={() => setAdding(false)} />}
            </Modal>
          </>
        )}
      </QueryState>
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={editing !== null} onClose={() => setEditing(null)} title={`Edit version ${editing?.version ?? ''}`} size="lg">
        {editing && <EditVersion productId={product.id} version={editing} onClose={() => setEditing(null)} />}
      </Modal>
    </Stack>
  );
}
