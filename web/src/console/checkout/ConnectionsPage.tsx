import { Anchor, Button, Group, Modal, PasswordInput, Select, Stack, Text } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, ApiProblem, unwrap } from '../../api/client';
import { DataTable, type Column } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { fromRows, MappingEditor, type MappingRow } from './MappingEditor';
import { type CheckoutConnection, checkoutKeys, type Provider, PROVIDERS, providerInfo } from './queries';
import { WebhookUrl } from './WebhookUrl';

/** Where each provider's set-up steps are written. */
export function ProviderDocs({ provider }: { provider: Provider }) {
  const info = providerInfo(provider);
  return (
    <Text size="sm" c="dimmed">
      The {info.label} dashboard steps (which events to send, where the URL and the secret go, how to pass a partner’s <code>pb_ref</code>) are in the
      documentation page <code>docs/api/{info.docs}</code>.
    </Text>
  );
}

function Connect({ onClose }: { onClose: () => void }) {
  const client = useQueryClient();
  const [provider, setProvider] = useState<Provider>('stripe');
  const [secret, setSecret] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [rows, setRows] = useState<MappingRow[]>([{ providerProductId: '', productId: '' }]);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/developer/checkout-connections', {
          body: { provider, signingSecret: secret.trim(), productMapping: fromRows(rows), ...(provider === 'stripe' && apiKey.trim() ? { apiKey: apiKey.trim() } : {}) },
        }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: checkoutKeys.connections }),
  });
  const problem = create.error instanceof ApiProblem ? create.error : null;
  const fieldErrors = ['signingSecret', 'apiKey', 'productMapping'].some((f) => problem?.fieldError(f));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Connect a store" size="xl" closeOnClickOutside={!create.isSuccess}>
      {create.isSuccess ? (
        <Stack>
          <Text size="sm">
            The {providerInfo(create.data.provider).label} connection is ready. Paste this URL into the provider’s webhook settings; sales it reports are booked from
            then on.
          </Text>
          <WebhookUrl url={create.data.webhookUrl} label="Webhook URL" />
          <ProviderDocs provider={create.data.provider} />
          <Group justify="flex-end">
            <Button variant="default" component={Link} to={`/checkout-connections/${create.data.id}`} onClick={onClose}>
              Open the connection
            </Button>
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <Select
              label="Provider"
              required
              allowDeselect={false}
              data={PROVIDERS.map((p) => ({ value: p.value, label: p.label }))}
              value={provider}
              onChange={(value) => value && setProvider(value as Provider)}
            />
            <PasswordInput
              label="Signing secret"
              description={`${providerInfo(provider).secret}. Kept sealed and never shown again.`}
              required
              value={secret}
              onChange={(e) => setSecret(e.currentTarget.value)}
              error={problem?.fieldError('signingSecret')}
            />
            {provider === 'stripe' && (
              <PasswordInput
                label="Restricted API key"
                description="Optional, rk_… with read access to Checkout Sessions: lets Patchbay list a session’s line items. Without it, name the product in the session’s metadata."
                value={apiKey}
                onChange={(e) => setApiKey(e.currentTarget.value)}
                error={problem?.fieldError('apiKey')}
              />
            )}
            <MappingEditor provider={provider} rows={rows} onChange={setRows} error={problem?.fieldError('productMapping')} />
            <ProviderDocs provider={provider} />
            {create.isError && !fieldErrors && <ProblemAlert error={create.error} />}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Connect the store
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

/** The workspace's checkout connections (purchases.manage, all products): connect a Stripe, Paddle or Lemon Squeezy store, open one for its event log. */
export default function ConnectionsPage() {
  const connections = useQuery({ queryKey: checkoutKeys.connections, queryFn: async () => (await unwrap(api.GET('/api/developer/checkout-connections'))).rows });
  const [connecting, setConnecting] = useState(false);
  const columns: Column<CheckoutConnection>[] = [
    {
      key: 'provider',
      header: 'Store',
      render: (c) => (
        <Anchor component={Link} to={`/checkout-connections/${c.id}`} fw={500}>
          {providerInfo(c.provider).label} connection {c.id}
        </Anchor>
      ),
    },
    { key: 'status', header: 'Status', render: (c) => <StatusBadge status={c.enabled ? 'active' : 'disabled'} /> },
    { key: 'mapping', header: 'Products mapped', render: (c) => c.productMapping.length },
    { key: 'created', header: 'Connected', render: (c) => formatDateTime(c.createdAt) },
  ];
  return (
    <>
      <PageHeader
        title="Checkout connections"
        description="Sales made in your Stripe, Paddle or Lemon Squeezy store create the customer, the purchase, the serial and the buyer’s e-mail here; refunds end them."
        actions={
          <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setConnecting(true)}>
            Connect a store
          </Button>
        }
      />
      <QueryState query={connections} label="Loading the checkout connections">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No store connected">Connect your store, then paste the connection’s webhook URL into the provider’s dashboard.</EmptyState>
          ) : (
            <DataTable caption="Checkout connections" columns={columns} rows={rows} rowKey={(c) => c.id} />
          )
        }
      </QueryState>
      {connecting && <Connect onClose={() => setConnecting(false)} />}
    </>
  );
}
