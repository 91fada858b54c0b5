import { Anchor, Button, Group, Modal, PasswordInput, Select, Stack, Switch, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconArrowLeft } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ApiProblem, isProblem, type paths, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { Fact } from '../../kit/Fact';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { useProductOptions } from '../records/products';
import { ProviderDocs } from './ConnectionsPage';
import { fromRows, MappingEditor, type MappingRow, toRows } from './MappingEditor';
import { type CheckoutConnection, type CheckoutEvent, checkoutKeys, providerInfo } from './queries';
import { WebhookUrl } from './WebhookUrl';

const PAGE_SIZE = 25;
const OUTCOMES = [
  { value: '', label: 'Every outcome' },
  { value: 'recorded', label: 'Recorded' },
  { value: 'failed', label: 'Failed' },
  { value: 'ignored', label: 'Ignored' },
  { value: 'replayed', label: 'Replayed' },
];
const OUTCOME_STATUS: Record<CheckoutEvent['outcome'], string> = { recorded: 'active', failed: 'failed', ignored: 'ended', replayed: 'submitted' };

type Dialog = 'mapping' | 'secret' | 'delete';
type ConnectionChange = NonNullable<paths['/api/developer/checkout-connections/{connectionId}']['patch']['requestBody']>['content']['application/json'];

function useSave(connection: CheckoutConnection, done: (saved: CheckoutConnection) => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ConnectionChange) =>
      unwrap(api.PATCH('/api/developer/checkout-connections/{connectionId}', { params: { path: { connectionId: connection.id } }, body })),
    onSuccess: async (saved) => {
      client.setQueryData(checkoutKeys.connection(connection.id), saved);
      await client.invalidateQueries({ queryKey: checkoutKeys.connections, exact: true });
      done(saved);
    },
  });
}

function EditMapping({ connection, onClose }: { connection: CheckoutConnection; onClose: () => void }) {
  const [rows, setRows] = useState<MappingRow[]>(() => (connection.productMapping.length ? toRows(connection.productMapping) : [{ providerProductId: '', productId: '' }]));
  const save = useSave(connection, () => {
    notify('The product mapping is saved. Re-process the failed events it fixes.', 'green');
    onClose();
  });
  const problem = save.error instanceof ApiProblem ? save.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ productMapping: fromRows(rows) });
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Change the product mapping" size="xl">
      <form onSubmit={submit} noValidate>
        <Stack>
          <MappingEditor provider={connection.provider} rows={rows} onChange={setRows} error={problem?.fieldError('productMapping')} />
          {save.isError && !problem?.fieldError('productMapping') && <ProblemAlert error={save.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending}>
              Save the mapping
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function ChangeSecrets({ connection, onClose }: { connection: CheckoutConnection; onClose: () => void }) {
  const [secret, setSecret] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [removeKey, setRemoveKey] = useState(false);
  const save = useSave(connection, () => {
    notify('The connection’s secrets are saved.', 'green');
    onClose();
  });
  const problem = save.error instanceof ApiProblem ? save.error : null;
  const isStripe = connection.provider === 'stripe';
  const body = {
    ...(secret.trim() ? { signingSecret: secret.trim() } : {}),
    ...(isStripe && removeKey ? { apiKey: null } : isStripe && apiKey.trim() ? { apiKey: apiKey.trim() } : {}),
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(body);
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Change the secrets" size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <PasswordInput
            label="New signing secret"
            description={`${providerInfo(connection.provider).secret}, after rolling it at ${providerInfo(connection.provider).label}. Empty: keep the current one.`}
            value={secret}
            onChange={(e) => setSecret(e.currentTarget.value)}
            error={problem?.fieldError('signingSecret')}
          />
          {isStripe && (
            <>
              <PasswordInput
                label="New restricted API key"
                description={connection.apiKeySet ? 'A key is set. Empty: keep it.' : 'No key is set: sessions need the product in their metadata.'}
                value={apiKey}
                disabled={removeKey}
                onChange={(e) => setApiKey(e.currentTarget.value)}
                error={problem?.fieldError('apiKey')}
              />
              {connection.apiKeySet && <Switch label="Remove the API key" checked={removeKey} onChange={(e) => setRemoveKey(e.currentTarget.checked)} />}
            </>
          )}
          {save.isError && !problem?.fieldError('signingSecret') && !problem?.fieldError('apiKey') && <ProblemAlert error={save.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending} disabled={Object.keys(body).length === 0}>
              Save the secrets
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function DeleteConnection({ connection, onClose }: { connection: CheckoutConnection; onClose: () => void }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/checkout-connections/{connectionId}', { params: { path: { connectionId: connection.id } } })),
    onSuccess: async () => {
      notify('The connection is removed: its URL no longer answers.', 'green');
      await client.invalidateQueries({ queryKey: checkoutKeys.connections, exact: true });
      await navigate('/checkout-connections');
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Remove the connection">
      <Stack>
        <Text size="sm">
          Its webhook URL stops answering and its event log goes with it. The purchases, serials and partner allocations it booked stay, but refunds of those sales can no
          longer arrive.
        </Text>
        {remove.isError && <ProblemAlert error={remove.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red.8" loading={remove.isPending} onClick={() => remove.mutate()}>
            Remove the connection
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function Events({ connection }: { connection: CheckoutConnection }) {
  const client = useQueryClient();
  const [params, setParams] = useListParams({ outcome: '', page: 1 });
  const list = useQuery({
    queryKey: [...checkoutKeys.events(connection.id), params],
    queryFn: () =>
      unwrap(
        api.GET('/api/developer/checkout-connections/{connectionId}/events', {
          params: {
            path: { connectionId: connection.id },
            query: { page: params.page, limit: PAGE_SIZE, ...(params.outcome ? { outcome: params.outcome as CheckoutEvent['outcome'] } : {}) },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const reprocess = useMutation({
    mutationFn: (event: CheckoutEvent) =>
      unwrap(
        api.POST('/api/developer/checkout-connections/{connectionId}/events/{eventId}/reprocess', {
          params: { path: { connectionId: connection.id, eventId: event.id } },
        }),
      ),
    onSuccess: async (event) => {
      notify(event.outcome === 'failed' ? `It failed again: ${event.reason ?? 'no reason given'}` : `The event is ${event.outcome}.`, event.outcome === 'failed' ? 'red' : 'green');
      await client.invalidateQueries({ queryKey: checkoutKeys.events(connection.id) });
    },
    onError: async (error) => {
      notify(error.message, 'red');
      await client.invalidateQueries({ queryKey: checkoutKeys.events(connection.id) });
    },
  });
  const columns: Column<CheckoutEvent>[] = [
    {
      key: 'event',
      header: 'Event',
      render: (e) => (
        <Stack gap={0}>
          <Text fw={500}>{e.type}</Text>
          <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-all' }}>
            {e.provider_event_id}
          </Text>
        </Stack>
      ),
    },
    {
      key: 'outcome',
      header: 'Outcome',
      render: (e) => (
        <Stack gap={2} maw={380}>
          <Group gap={4}>
            <StatusBadge status={OUTCOME_STATUS[e.outcome]} />
            <VisuallyHidden>:</VisuallyHidden>
            <Text size="sm">{e.outcome}</Text>
          </Group>
          {e.reason && (
            <Text size="xs" c="dimmed">
              {e.reason}
            </Text>
          )}
        </Stack>
      ),
    },
    { key: 'items', header: 'Order items', render: (e) => (e.order_item_ids.length ? e.order_item_ids.join(', ') : '—') },
    { key: 'received', header: 'Received', render: (e) => formatDateTime(e.received_at) },
    {
      key: 'reprocess',
      header: <VisuallyHidden>Actions</VisuallyHidden>,
      render: (e) =>
        e.outcome === 'failed' ? (
          <Tooltip label="Book it again from its kept body, once the cause is fixed">
            <Button
              size="xs"
              variant="subtle"
              loading={reprocess.isPending && reprocess.variables?.id === e.id}
              onClick={() => reprocess.mutate(e)}
              aria-label={`Re-process ${e.type} ${e.provider_event_id}`}
            >
              Re-process
            </Button>
          </Tooltip>
        ) : null,
    },
  ];
  return (
    <Section
      id="events"
      title="Event log"
      actions={<Select label="Outcome" data={OUTCOMES} value={params.outcome} onChange={(value) => setParams({ outcome: value ?? '' })} allowDeselect={false} w={180} />}
    >
      <QueryState query={list} label="Loading the event log">
        {(page) => (
          <PagedTable
            caption="Events received from the provider, newest first"
            columns={columns}
            rows={page.rows}
            rowKey={(e) => e.id}
            total={page.total}
            page={params.page}
            pageSize={PAGE_SIZE}
            onPage={(p) => setParams({ page: p })}
            minWidth={820}
            empty={
              <EmptyState title={params.outcome ? `No ${params.outcome} events` : 'No events yet'}>
                {params.outcome ? 'Pick another outcome to see the others.' : 'Events the provider sends with a valid signature appear here.'}
              </EmptyState>
            }
          />
        )}
      </QueryState>
    </Section>
  );
}

function Connection({ connection }: { connection: CheckoutConnection }) {
  const products = useProductOptions();
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const toggle = useSave(connection, (saved) => notify(saved.enabled ? 'The connection is on: sales are booked.' : 'The connection is off: the provider’s events are refused.', 'green'));
  const info = providerInfo(connection.provider);
  const close = () => setDialog(null);
  return (
    <>
      <PageHeader
        title={`${info.label} connection ${connection.id}`}
        description={`Sales reported by ${info.label} are booked here as external-store purchases.`}
        actions={
          <Group gap="xs">
            <Button variant="default" onClick={() => setDialog('mapping')}>
              Change the mapping
            </Button>
            <Button variant="default" onClick={() => setDialog('secret')}>
              Change the secrets
            </Button>
            <Button variant="subtle" color="red" onClick={() => setDialog('delete')}>
              Remove
            </Button>
          </Group>
        }
      />
      <Stack>
        <Section id="connection" title="Connection">
          <WebhookUrl url={connection.webhookUrl} label="Webhook URL" />
          <ProviderDocs provider={connection.provider} />
          <Group component="dl" gap="xl" align="flex-start" wrap="wrap" m={0}>
            <Fact label="Signing secret">Set (never shown)</Fact>
            {connection.provider === 'stripe' && <Fact label="Restricted API key">{connection.apiKeySet ? 'Set (never shown)' : 'Not set'}</Fact>}
            <Fact label="Connected">{formatDateTime(connection.createdAt)}</Fact>
          </Group>
          <Switch
            label="Enabled"
            description="Off: the provider’s events are refused (409) and nothing is booked; providers retry for a while."
            checked={connection.enabled}
            disabled={toggle.isPending}
            onChange={(e) => toggle.mutate({ enabled: e.currentTarget.checked })}
          />
          {toggle.isError && <ProblemAlert error={toggle.error} />}
        </Section>
        <Section id="mapping" title="Product mapping">
          {connection.productMapping.length === 0 ? (
            <Text size="sm">No product is mapped: every sale fails until one is.</Text>
          ) : (
            <Group component="dl" gap="xl" align="flex-start" wrap="wrap" m={0}>
              {connection.productMapping.map((m) => (
                <Fact key={m.providerProductId} label={m.providerProductId}>
                  {products.name(m.productId)}
                </Fact>
              ))}
            </Group>
          )}
        </Section>
        <Events connection={connection} />
      </Stack>
      {dialog === 'mapping' && <EditMapping connection={connection} onClose={close} />}
      {dialog === 'secret' && <ChangeSecrets connection={connection} onClose={close} />}
      {dialog === 'delete' && <DeleteConnection connection={connection} onClose={close} />}
    </>
  );
}

/** One checkout connection: its webhook URL, switch, mapping and secrets, and the event log with re-processing of failed events. */
export default function ConnectionPage() {
  const connectionId = Number(useParams().connectionId);
  const valid = Number.isInteger(connectionId) && connectionId > 0;
  const connection = useQuery({
    queryKey: checkoutKeys.connection(connectionId),
    queryFn: () => unwrap(api.GET('/api/developer/checkout-connections/{connectionId}', { params: { path: { connectionId } } })),
    enabled: valid,
    retry: (count, error) => !isProblem(error, 404) && count < 2,
  });
  return (
    <>
      <Anchor component={Link} to="/checkout-connections" size="sm">
        <Group gap={4}>
          <IconArrowLeft size={14} aria-hidden /> Checkout connections
        </Group>
      </Anchor>
      {!valid || isProblem(connection.error, 404) ? (
        <EmptyState title="No such connection">It may have been removed, or it belongs to another workspace.</EmptyState>
      ) : (
        <QueryState query={connection} label="Loading the connection">
          {(data) => <Connection connection={data} />}
        </QueryState>
      )}
    </>
  );
}
