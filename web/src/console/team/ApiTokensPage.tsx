import { ActionIcon, Alert, Button, Code, CopyButton, Group, Modal, NumberInput, Stack, Text, TextInput, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy, IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, ApiProblem, type paths, unwrap } from '../../api/client';
import { DataTable, type Column } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { useMemberAccess } from '../member-access';

type ApiToken = paths['/api/developer/api-tokens']['get']['responses'][200]['content']['application/json']['rows'][number];
const tokenKeys = { all: ['console', 'api-tokens'] as const };

/** The new token, shown this once with a copy button: the API keeps only its hash and never answers it again. */
function ShownOnce({ name, token, onClose }: { name: string; token: string; onClose: () => void }) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy the token now">
        This is the only time it is shown. Store it where your script reads secrets; if it is lost, revoke it and create another.
      </Alert>
      <Group gap="xs" wrap="nowrap">
        <Code block style={{ flex: 1, wordBreak: 'break-all' }} aria-label={`API token ${name}`}>
          {token}
        </Code>
        <CopyButton value={token}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy the token'}>
              <ActionIcon variant="default" size="lg" onClick={copy} aria-label="Copy the token">
                {copied ? <IconCheck size={18} aria-hidden /> : <IconCopy size={18} aria-hidden />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
      <Text size="sm">
        Send it as <Code>Authorization: Bearer {token.slice(0, 8)}…</Code>. It acts as you, in this workspace only, with the access you hold at each
        request; team routes refuse it.
      </Text>
      <Group justify="flex-end">
        <Button onClick={onClose}>Done</Button>
      </Group>
    </Stack>
  );
}

function CreateToken({ onClose }: { onClose: () => void }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [days, setDays] = useState<number | string>('');
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/api-tokens', { body: { name: name.trim(), ...(days === '' ? {} : { expiresInDays: Number(days) }) } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: tokenKeys.all }),
  });
  const problem = create.error instanceof ApiProblem ? create.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Create an API token" size="lg" closeOnClickOutside={!create.isSuccess}>
      {create.isSuccess ? (
        <ShownOnce name={create.data.name} token={create.data.token} onClose={onClose} />
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <TextInput label="Name" description="What uses it, say “CI release script”" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} error={problem?.fieldError('name')} />
            <NumberInput label="Expires after (days)" description="Empty: until you revoke it" min={1} max={3650} allowDecimal={false} value={days} onChange={setDays} error={problem?.fieldError('expiresInDays')} />
            {create.isError && !problem?.fieldError('name') && !problem?.fieldError('expiresInDays') && <ProblemAlert error={create.error} />}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Create the token
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function RevokeToken({ token, onClose }: { token: ApiToken; onClose: () => void }) {
  const client = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/api-tokens/{tokenId}', { params: { path: { tokenId: token.id } } })),
    onSuccess: async () => {
      notify(`${token.name} is revoked: it no longer works.`, 'green');
      await client.invalidateQueries({ queryKey: tokenKeys.all });
      onClose();
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={`Revoke ${token.name}`}>
      <Stack>
        <Text size="sm">Every request with this token answers 401 from now on. Scripts that use it stop working.</Text>
        {revoke.isError && <ProblemAlert error={revoke.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red.8" loading={revoke.isPending} onClick={() => revoke.mutate()}>
            Revoke the token
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Tokens for scripts: create (shown once), list (prefix, last use), revoke. An owner sees every member's tokens. */
export default function ApiTokensPage() {
  const access = useMemberAccess();
  const tokens = useQuery({ queryKey: tokenKeys.all, queryFn: async () => (await unwrap(api.GET('/api/developer/api-tokens'))).rows });
  const [dialog, setDialog] = useState<{ kind: 'create' } | { kind: 'revoke'; token: ApiToken } | null>(null);
  const columns: Column<ApiToken>[] = [
    { key: 'name', header: 'Name', render: (t) => <Text fw={500}>{t.name}</Text> },
    { key: 'prefix', header: 'Starts with', render: (t) => <Code>{t.prefix}…</Code> },
    ...(access.owner ? [{ key: 'member', header: 'Member', render: (t: ApiToken) => t.member.email }] : []),
    { key: 'created', header: 'Created', render: (t) => formatDateTime(t.created_at) },
    { key: 'used', header: 'Last used', render: (t) => (t.last_used_at ? formatDateTime(t.last_used_at) : 'Never') },
    { key: 'expires', header: 'Expires', render: (t) => (t.expires_at ? formatDateTime(t.expires_at) : 'When revoked') },
    {
      key: 'revoke',
      header: 'Revoke',
      render: (t) => (
        <Button size="xs" variant="subtle" color="red" onClick={() => setDialog({ kind: 'revoke', token: t })} aria-label={`Revoke ${t.name}`}>
          Revoke
        </Button>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="API tokens"
        description="Tokens for scripts and CI: each acts as the member who made it, in this workspace."
        actions={
          <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setDialog({ kind: 'create' })}>
            Create a token
          </Button>
        }
      />
      <QueryState query={tokens} label="Loading API tokens">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No API tokens">Create a token for a script or your CI; it is shown once, so copy it then.</EmptyState>
          ) : (
            <DataTable caption={access.owner ? 'API tokens of every member' : 'Your API tokens'} columns={columns} rows={rows} rowKey={(t) => t.id} />
          )
        }
      </QueryState>
      {dialog?.kind === 'create' && <CreateToken onClose={() => setDialog(null)} />}
      {dialog?.kind === 'revoke' && <RevokeToken token={dialog.token} onClose={() => setDialog(null)} />}
    </>
  );
}
