import { Alert, Badge, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { IconUserPlus } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDate } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import type { Column } from '../../kit/PagedTable';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { useMemberAccess } from '../member-access';
import { useProductOptions } from '../records/products';
import { RecordsTable } from '../records/RecordList';
import { type Member, type MemberAccessBody, MemberForm } from './MemberForm';
import { describePermission } from './permissions';

const PAGE_SIZE = 50;
const memberKeys = { all: ['console', 'members'] as const };

function Invite({ onClose }: { onClose: () => void }) {
  const client = useQueryClient();
  const invite = useMutation({
    mutationFn: (body: MemberAccessBody & { email: string }) => unwrap(api.POST('/api/developer/members', { body })),
    onSuccess: async (member) => {
      notify(`${member.email} is invited: a sign-in link is on its way.`, 'green');
      await client.invalidateQueries({ queryKey: memberKeys.all });
      onClose();
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Invite a teammate" size="xl">
      <MemberForm submitLabel="Send the invitation" pending={invite.isPending} error={invite.error} onSubmit={(body) => invite.mutate(body)} onCancel={onClose} />
    </Modal>
  );
}

function Change({ member, onClose }: { member: Member; onClose: () => void }) {
  const client = useQueryClient();
  const change = useMutation({
    mutationFn: ({ permissions, products }: MemberAccessBody) => unwrap(api.PATCH('/api/developer/members/{memberId}', { params: { path: { memberId: member.id } }, body: { permissions, products } })),
    onSuccess: async () => {
      notify(`${member.email}’s access is changed.`, 'green');
      await client.invalidateQueries({ queryKey: memberKeys.all });
      onClose();
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={`Change ${member.email}’s access`} size="xl">
      <MemberForm member={member} submitLabel="Save the access" pending={change.isPending} error={change.error} onSubmit={(body) => change.mutate(body)} onCancel={onClose} />
    </Modal>
  );
}

function Remove({ member, onClose }: { member: Member; onClose: () => void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/members/{memberId}', { params: { path: { memberId: member.id } } })),
    onSuccess: async () => {
      notify(`${member.email} is removed from the workspace.`, 'green');
      await client.invalidateQueries({ queryKey: memberKeys.all });
      onClose();
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={`Remove ${member.email}`}>
      <Stack>
        <Text size="sm">
          They lose access to this workspace at once: their sessions and tokens stop working here, and their API tokens are deleted. Their account and
          other workspaces stay.
        </Text>
        {remove.isError && <ProblemAlert error={remove.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red.8" loading={remove.isPending} onClick={() => remove.mutate()}>
            Remove the teammate
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The workspace's members: invite, change and remove within the signed-in member's own access; the owner is protected. */
export default function MembersPage() {
  const access = useMemberAccess();
  const products = useProductOptions();
  const [params, setParams] = useListParams({ page: 1 });
  const [dialog, setDialog] = useState<{ kind: 'invite' } | { kind: 'change' | 'remove'; member: Member } | null>(null);
  const list = useQuery({
    queryKey: [...memberKeys.all, params.page],
    queryFn: () => unwrap(api.GET('/api/developer/members', { params: { query: { page: params.page, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const columns: Column<Member>[] = [
    {
      key: 'member',
      header: 'Member',
      render: (m) => (
        <Group gap="xs">
          <Text fw={500}>{m.email}</Text>
          {m.owner && <Badge variant="light">Owner</Badge>}
          {m.email === access.email && <Badge variant="outline">You</Badge>}
        </Group>
      ),
    },
    {
      key: 'permissions',
      header: 'Permissions',
      render: (m) =>
        m.owner || m.permissions.includes('*') ? (
          'Full access'
        ) : m.permissions.length === 0 ? (
          'None'
        ) : (
          <Text size="sm" title={m.permissions.join(', ')}>
            {m.permissions.map(describePermission).join('; ')}
          </Text>
        ),
    },
    { key: 'products', header: 'Products', render: (m) => (m.products === 'all' ? 'All products' : m.products.map(products.name).join(', ') || 'None') },
    { key: 'joined', header: 'Joined', render: (m) => (m.joined_at ? formatDate(m.joined_at) : <Badge color="yellow" variant="light">Invited {formatDate(m.invited_at)}</Badge>) },
    {
      key: 'actions',
      header: 'Actions',
      render: (m) =>
        m.owner ? (
          <Text size="sm" c="dimmed">
            Protected
          </Text>
        ) : (
          <Group gap="xs" wrap="nowrap">
            <Button size="xs" variant="default" onClick={() => setDialog({ kind: 'change', member: m })} aria-label={`Change ${m.email}’s access`}>
              Change
            </Button>
            <Button size="xs" variant="subtle" color="red" onClick={() => setDialog({ kind: 'remove', member: m })} aria-label={`Remove ${m.email}`}>
              Remove
            </Button>
          </Group>
        ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Team"
        description="Who works in this workspace, with what permissions and on which products."
        actions={
          <Button leftSection={<IconUserPlus size={16} aria-hidden />} onClick={() => setDialog({ kind: 'invite' })}>
            Invite a teammate
          </Button>
        }
      />
      <Stack>
        <Alert color="blue" title="Who may change whom">
          You grant only permissions and products you hold yourself, and change or remove only teammates whose access is within yours. The workspace
          owner cannot be removed, demoted or narrowed.
        </Alert>
        <RecordsTable
          title="Members"
          query={list}
          columns={columns}
          rowKey={(m) => m.id}
          page={params.page}
          pageSize={PAGE_SIZE}
          onPage={(page) => setParams({ page })}
          filtered={false}
          empty={<EmptyState title="No members yet">Invite a teammate by e-mail: they sign in with the link they receive.</EmptyState>}
        />
      </Stack>
      {dialog?.kind === 'invite' && <Invite onClose={() => setDialog(null)} />}
      {dialog?.kind === 'change' && <Change member={dialog.member} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'remove' && <Remove member={dialog.member} onClose={() => setDialog(null)} />}
    </>
  );
}
