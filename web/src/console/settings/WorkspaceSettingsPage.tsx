import { ActionIcon, Anchor, Button, Code, CopyButton, Group, Stack, Switch, Text, TextInput, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { api, ApiProblem, unwrap } from '../../api/client';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { memberSessionQuery, useMemberAccess } from '../member-access';

const workspaceQuery = { queryKey: ['console', 'workspace'], queryFn: () => unwrap(api.GET('/api/developer/workspace')) };
const portalQuery = { queryKey: ['console', 'customer-portal'], queryFn: () => unwrap(api.GET('/api/developer/customer-portal')) };

function CopyValue({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Tooltip label={copied ? 'Copied' : label}>
          <ActionIcon variant="default" onClick={copy} aria-label={label}>
            {copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}
          </ActionIcon>
        </Tooltip>
      )}
    </CopyButton>
  );
}

/** Name and storefront address; members without `workspace.manage` read them. */
function General() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const workspace = useQuery(workspaceQuery);
  const [name, setName] = useState('');
  const [storefront, setStorefront] = useState('');
  useEffect(() => {
    if (!workspace.data) return;
    setName(workspace.data.name);
    setStorefront(workspace.data.storefront_url ?? '');
  }, [workspace.data]);
  const save = useMutation({
    mutationFn: () => unwrap(api.PATCH('/api/developer/workspace', { body: { name: name.trim(), storefront_url: storefront.trim() ? storefront.trim() : null } })),
    onSuccess: async (saved) => {
      client.setQueryData(workspaceQuery.queryKey, saved);
      notify('The workspace settings are saved.', 'green');
      // The account menu shows the workspace's name.
      await client.invalidateQueries({ queryKey: memberSessionQuery.queryKey });
    },
  });
  const problem = save.error instanceof ApiProblem ? save.error : null;
  const mayManage = access.can('workspace.manage');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <Section id="general" title="General">
      <QueryState query={workspace} label="Loading the settings">
        {() => (
          <form onSubmit={submit} noValidate>
            <Stack>
              <TextInput label="Workspace name" required readOnly={!mayManage} maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} error={problem?.fieldError('name')} />
              <TextInput
                label="Storefront URL"
                description="Where buyers find your products; packages and referral links use it (a product’s own storefront URL wins)"
                type="url"
                readOnly={!mayManage}
                value={storefront}
                onChange={(e) => setStorefront(e.currentTarget.value)}
                error={problem?.fieldError('storefront_url')}
              />
              {save.isError && !problem?.fieldError('name') && !problem?.fieldError('storefront_url') && <ProblemAlert error={save.error} />}
              {mayManage && (
                <Button type="submit" loading={save.isPending} w="fit-content">
                  Save the settings
                </Button>
              )}
            </Stack>
          </form>
        )}
      </QueryState>
    </Section>
  );
}

/** Partner programs on or off: needs `workspace.manage` and `partners.manage`. */
function PartnerPrograms() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const workspace = useQuery(workspaceQuery);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => unwrap(api.PATCH('/api/developer/workspace', { body: { partner_programs_enabled: enabled } })),
    onSuccess: (saved) => {
      client.setQueryData(workspaceQuery.queryKey, saved);
      notify(saved.partner_programs_enabled ? 'Partner programs are on.' : 'Partner programs are off.', 'green');
    },
  });
  const mayManage = access.can('workspace.manage') && access.can('partners.manage');
  const enabled = workspace.data?.partner_programs_enabled ?? false;
  return (
    <Section id="partners" title="Partner programs">
      <Switch
        label="Partner programs"
        description="Off closes the programs, their referral links and accounting for this workspace; the agreements are kept."
        checked={enabled}
        disabled={!mayManage || !workspace.data || toggle.isPending}
        onChange={(e) => toggle.mutate(e.currentTarget.checked)}
      />
      {!mayManage && (
        <Text size="sm" c="dimmed">
          Turning them on or off takes both the workspace and the partner management permissions.
        </Text>
      )}
      {toggle.isError && <ProblemAlert error={toggle.error} />}
    </Section>
  );
}

/** Whether a full refund revokes the serial sold with the item (off, the default) or keeps it active: `workspace.manage`. */
function Refunds() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const workspace = useQuery(workspaceQuery);
  const toggle = useMutation({
    mutationFn: (keep: boolean) => unwrap(api.PATCH('/api/developer/workspace', { body: { keep_serials_on_refund: keep } })),
    onSuccess: (saved) => {
      client.setQueryData(workspaceQuery.queryKey, saved);
      notify(saved.keep_serials_on_refund ? 'Refunded serials stay active.' : 'A full refund revokes the serial sold with it.', 'green');
    },
  });
  const mayManage = access.can('workspace.manage');
  return (
    <Section id="refunds" title="Refunds">
      <Switch
        label="Keep serials active after a full refund"
        description="Off (the default): a full refund revokes the serial sold with the item, on every channel, and its activations stop validating. A partial refund never changes a serial. Applies to refunds reported from now on."
        checked={workspace.data?.keep_serials_on_refund ?? false}
        disabled={!mayManage || !workspace.data || toggle.isPending}
        onChange={(e) => toggle.mutate(e.currentTarget.checked)}
      />
      {!mayManage && (
        <Text size="sm" c="dimmed">
          Changing it takes the workspace management permission.
        </Text>
      )}
      {toggle.isError && <ProblemAlert error={toggle.error} />}
    </Section>
  );
}

/** The buyers' portal: on or off (`workspace.manage`, all products), and the address to share with buyers. */
function BuyersPortal() {
  const access = useMemberAccess();
  const client = useQueryClient();
  const portal = useQuery(portalQuery);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => unwrap(api.PATCH('/api/developer/customer-portal', { body: { enabled } })),
    onSuccess: (saved) => {
      client.setQueryData(portalQuery.queryKey, saved);
      notify(saved.enabled ? 'The buyers’ portal is on.' : 'The buyers’ portal is off.', 'green');
    },
  });
  const mayManage = access.can('workspace.manage') && access.allProducts;
  return (
    <Section id="buyers-portal" title="Buyers’ portal">
      <QueryState query={portal} label="Loading the buyers’ portal">
        {(data) => (
          <Stack>
            <Switch
              label="Buyers’ portal"
              description="Buyers sign in with an e-mailed link to see their orders, license keys, devices and downloads. Off: its pages answer 404 and buyers’ sessions pause."
              checked={data.enabled}
              disabled={!mayManage || toggle.isPending}
              onChange={(e) => toggle.mutate(e.currentTarget.checked)}
            />
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Address to share with buyers
              </Text>
              <Group gap="xs" wrap="nowrap">
                <Anchor href={data.url} target="_blank" rel="noreferrer" style={{ wordBreak: 'break-all' }}>
                  <Code>{data.url}</Code>
                </Anchor>
                <CopyValue value={data.url} label="Copy the buyers’ portal address" />
              </Group>
            </Stack>
            {toggle.isError && <ProblemAlert error={toggle.error} />}
          </Stack>
        )}
      </QueryState>
    </Section>
  );
}

/** The workspace's settings: every member reads them; changing them takes the permissions each section names. */
export default function WorkspaceSettingsPage() {
  return (
    <>
      <PageHeader title="Workspace settings" description="The workspace’s name and storefront, partner programs, refunds and the buyers’ portal." />
      <Stack>
        <General />
        <PartnerPrograms />
        <Refunds />
        <BuyersPortal />
      </Stack>
    </>
  );
}
