import { ActionIcon, Alert, Anchor, Button, CopyButton, Group, SimpleGrid, Stack, Text, TextInput, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconCheck, IconCopy, IconMail } from '@tabler/icons-react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { Fact } from '../../kit/Fact';
import { formatDate, formatDateTime } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { type Device, type License, licensesQuery } from '../queries';
import { deviceName, ReleaseDevice } from '../ReleaseDevice';
import { portalPath, useWorkspaceRef } from '../session';

/** The serial's status in a buyer's words: an assigned key is simply active. */
const licenseStatus = (status: string) => (status === 'redeemed' || status === 'available' ? 'active' : status);
/** The store refuses releases on these (409 SERIAL_NOT_RELEASABLE): the page does not offer them. */
const LOCKED = new Set(['suspended', 'revoked']);

function LicenseKey({ serial }: { serial: string }) {
  return (
    <Group gap="xs" wrap="nowrap" align="flex-end">
      <TextInput label="License key" value={serial} readOnly ff="monospace" style={{ flex: 1, minWidth: 0 }} onFocus={(e) => e.currentTarget.select()} />
      <CopyButton value={serial}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy the key'} withArrow>
            <ActionIcon size="lg" variant={copied ? 'filled' : 'default'} color={copied ? 'green' : undefined} onClick={copy} aria-label={copied ? 'License key copied' : 'Copy the license key'}>
              {copied ? <IconCheck size={18} aria-hidden /> : <IconCopy size={18} aria-hidden />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

function LicenseCard({ license }: { license: License }) {
  const ref = useWorkspaceRef();
  const [released, setReleased] = useState<string | null>(null);
  const status = licenseStatus(license.status);
  const locked = LOCKED.has(license.status);
  const columns: Column<Device>[] = [
    { key: 'name', header: 'Computer', render: (d) => deviceName(d) },
    { key: 'first', header: 'Activated', render: (d) => formatDate(d.first_seen_at) },
    { key: 'last', header: 'Last seen', render: (d) => formatDateTime(d.last_seen_at) },
    ...(locked ? [] : [{ key: 'release', header: <VisuallyHidden>Actions</VisuallyHidden>, render: (d: Device) => <ReleaseDevice license={license} device={d} onReleased={setReleased} /> }]),
  ];
  return (
    <Section
      id={`license-${license.serial_id}`}
      title={license.product}
      actions={<StatusBadge status={status} />}
    >
      <LicenseKey serial={license.serial} />
      <SimpleGrid cols={{ base: 2, sm: 3 }} component="dl" m={0}>
        <Fact label="Devices">
          {license.active_activation_count} of {license.max_activations}
        </Fact>
        <Fact label="Expires">{license.expires_at ? formatDate(license.expires_at) : 'Never'}</Fact>
      </SimpleGrid>
      {locked && (
        <Alert color="yellow">
          This license is {license.status}: its devices cannot be changed here. Contact the store if you think this is a mistake.
        </Alert>
      )}
      {released && (
        <Alert color="green" role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setReleased(null)}>
          {released} is released. Activate {license.product} on your other computer with the key above.
        </Alert>
      )}
      {license.activations.length > 0 ? (
        <DataTable caption={`Devices using ${license.product}`} columns={columns} rows={license.activations} rowKey={(d) => d.id} minWidth={300} />
      ) : (
        <Text size="sm" c="dimmed">
          No computer uses this license yet: enter the key in the plugin to activate it.
        </Text>
      )}
      {!locked && (
        <Text size="sm">
          A studio computer without internet?{' '}
          <Anchor component={Link} to={`${portalPath(ref, 'offline-activation')}?serial=${license.serial_id}`}>
            Activate it offline
          </Anchor>
        </Text>
      )}
    </Section>
  );
}

/** "Resend my keys": the keys are e-mailed to the address the buyer signed in with. */
function ResendKeys() {
  const resend = useMutation({ mutationFn: () => unwrap(api.POST('/api/customer-portal/keys/resend')) });
  return (
    <Section id="resend" title="Keys by e-mail">
      <Text size="sm">Lost the e-mail with your keys? We send every license key above to the address you signed in with.</Text>
      {resend.isSuccess ? (
        <Alert color="green" role="status" icon={<IconMail aria-hidden />}>
          {resend.data.message}
        </Alert>
      ) : (
        <>
          {resend.isError && <ProblemAlert error={resend.error} />}
          <Button variant="default" leftSection={<IconMail size={16} aria-hidden />} loading={resend.isPending} onClick={() => resend.mutate()} w="fit-content">
            E-mail me my license keys
          </Button>
        </>
      )}
    </Section>
  );
}

/** The buyer's license keys with the computers using them: release one, activate offline, have the keys e-mailed. */
export default function LicensesPage() {
  const query = useQuery(licensesQuery);
  return (
    <>
      <PageHeader title="Licenses and devices" description="Your license keys and the computers using them. Moved to a new computer? Release the old one here." />
      <QueryState query={query} label="Loading your licenses">
        {(licenses) =>
          licenses.length === 0 ? (
            <EmptyState title="No license keys yet">
              Keys of the plugins you buy at this store appear here. Bought with another address? Sign out and sign in with that one.
            </EmptyState>
          ) : (
            <Stack>
              {licenses.map((license) => (
                <LicenseCard key={license.serial_id} license={license} />
              ))}
              <ResendKeys />
            </Stack>
          )
        }
      </QueryState>
    </>
  );
}
