import { Anchor, Button, Code, Group, Modal, Select, Stack, Switch, Text, TextInput, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconArrowLeft } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, isProblem, unwrap } from '../../api/client';
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
import { EndpointForm } from './EndpointForm';
import { webhookKeys, type WebhookDelivery, type WebhookEndpoint } from './queries';
import { SecretShownOnce } from './SecretShownOnce';
import { EndpointStatus, EventsSummary } from './WebhooksPage';

const PAGE_SIZE = 25;
const STATUSES = [
  { value: '', label: 'Every status' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'retrying', label: 'Retrying' },
  { value: 'failed', label: 'Failed' },
  { value: 'pending', label: 'Pending' },
];

type Dialog = { kind: 'edit' } | { kind: 'rotate' } | { kind: 'delete' } | { kind: 'redeliver-failed' };

function EditEndpoint({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const client = useQueryClient();
  const save = useMutation({
    mutationFn: (values: { url: string; description: string; events: WebhookEndpoint['events'] }) =>
      unwrap(
        api.PATCH('/api/developer/webhooks/endpoints/{endpointId}', {
          params: { path: { endpointId: endpoint.id } },
          body: { url: values.url, events: values.events as never, description: values.description || null },
        }),
      ),
    onSuccess: async (saved) => {
      client.setQueryData(webhookKeys.endpoint(endpoint.id), saved);
      await client.invalidateQueries({ queryKey: webhookKeys.endpoints, exact: true });
      notify('The endpoint is saved.', 'green');
      onClose();
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Change the endpoint" size="lg">
      <EndpointForm
        initial={{ url: endpoint.url, description: endpoint.description ?? '', events: endpoint.events as WebhookEndpoint['events'] as never }}
        submitLabel="Save the endpoint"
        pending={save.isPending}
        error={save.error}
        onSubmit={(values) => save.mutate(values)}
        onCancel={onClose}
      />
    </Modal>
  );
}

function RotateSecret({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const client = useQueryClient();
  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: endpoint.id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: webhookKeys.endpoint(endpoint.id) }),
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Rotate the signing secret" size="lg" closeOnClickOutside={!rotate.isSuccess}>
      {rotate.isSuccess ? (
        <SecretShownOnce secret={rotate.data.secret} onClose={onClose}>
          Until {formatDateTime(rotate.data.previous_secret_expires_at)} every delivery is signed with both secrets, so your receiver keeps verifying while you deploy this one.
        </SecretShownOnce>
      ) : (
        <Stack>
          <Text size="sm">
            A new secret is made and shown once. The current one keeps signing alongside it for the overlap; rotating again during an overlap ends the older secret at once.
          </Text>
          {rotate.isError && <ProblemAlert error={rotate.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button loading={rotate.isPending} onClick={() => rotate.mutate()}>
              Rotate the secret
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}

function DeleteEndpoint({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: endpoint.id } } })),
    onSuccess: async () => {
      notify(`${endpoint.url} no longer receives events.`, 'green');
      await client.invalidateQueries({ queryKey: webhookKeys.endpoints, exact: true });
      await navigate('/webhooks');
    },
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Delete the endpoint">
      <Stack>
        <Text size="sm">No more events are sent to {endpoint.url}, and its delivery log goes with it.</Text>
        {remove.isError && <ProblemAlert error={remove.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red.8" loading={remove.isPending} onClick={() => remove.mutate()}>
            Delete the endpoint
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Today at midnight, as the value of a datetime-local field. */
function startOfToday(): string {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T00:00`;
}

function RedeliverFailed({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const client = useQueryClient();
  const [since, setSince] = useState(startOfToday);
  const redeliver = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/developer/webhooks/endpoints/{endpointId}/redeliver-failed', {
          params: { path: { endpointId: endpoint.id } },
          body: { since: new Date(since).toISOString() },
        }),
      ),
    onSuccess: async (answer) => {
      notify(
        answer.queued === 0 ? 'No failed delivery since then.' : `${answer.queued} failed deliveries are queued again${answer.more ? '; more remain, send again' : ''}.`,
        'green',
      );
      await client.invalidateQueries({ queryKey: webhookKeys.deliveries(endpoint.id) });
      onClose();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    redeliver.mutate();
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Send failed deliveries again">
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput
            type="datetime-local"
            label="Failed since"
            description="Every failed delivery whose event came at or after this time (your local time) is sent again, with the same event id"
            required
            value={since}
            onChange={(e) => setSince(e.currentTarget.value)}
          />
          {redeliver.isError && <ProblemAlert error={redeliver.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={redeliver.isPending} disabled={!since}>
              Send them again
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const client = useQueryClient();
  const [params, setParams] = useListParams({ status: '', page: 1 });
  const list = useQuery({
    queryKey: [...webhookKeys.deliveries(endpoint.id), params],
    queryFn: () =>
      unwrap(
        api.GET('/api/developer/webhooks/endpoints/{endpointId}/deliveries', {
          params: {
            path: { endpointId: endpoint.id },
            query: { page: params.page, limit: PAGE_SIZE, ...(params.status ? { status: params.status as WebhookDelivery['status'] } : {}) },
          },
        }),
      ),
    placeholderData: keepPreviousData,
    // Deliveries in flight change within seconds: follow them until they settle.
    refetchInterval: (query) => (query.state.data?.rows.some((d) => d.status === 'pending' || d.status === 'retrying') ? 2000 : false),
  });
  const redeliver = useMutation({
    mutationFn: (delivery: WebhookDelivery) =>
      unwrap(api.POST('/api/developer/webhooks/deliveries/{deliveryId}/redeliver', { params: { path: { deliveryId: delivery.id } } })),
    onSuccess: async (delivery) => {
      notify(`${delivery.event_type} is sent again.`, 'green');
      await client.invalidateQueries({ queryKey: webhookKeys.deliveries(endpoint.id) });
    },
    onError: (error) => notify(error.message, 'red'),
  });
  const columns: Column<WebhookDelivery>[] = [
    {
      key: 'event',
      header: 'Event',
      render: (d) => (
        <Stack gap={0}>
          <Text fw={500}>{d.event_type}</Text>
          <Text size="xs" c="dimmed" ff="monospace">
            {d.event_id}
          </Text>
        </Stack>
      ),
    },
    { key: 'status', header: 'Status', render: (d) => <StatusBadge status={d.status} /> },
    { key: 'attempts', header: 'Attempts', render: (d) => d.attempts },
    {
      key: 'answer',
      header: 'Last answer',
      render: (d) => (
        <Stack gap={2} maw={360}>
          <Text size="sm">
            {d.last_status_code !== null ? `HTTP ${d.last_status_code}` : d.attempts === 0 ? 'Not tried yet' : 'No answer'}
            {d.response_duration_ms !== null ? ` in ${d.response_duration_ms} ms` : ''}
          </Text>
          {(d.error ?? d.response_body) && (
            <Tooltip label={d.error ?? d.response_body} multiline maw={480}>
              <Text size="xs" c="dimmed" lineClamp={2} style={{ wordBreak: 'break-all' }}>
                {d.error ?? d.response_body}
              </Text>
            </Tooltip>
          )}
        </Stack>
      ),
    },
    {
      key: 'when',
      header: 'Last attempt',
      render: (d) => (
        <Stack gap={0}>
          <Text size="sm">{d.last_attempt_at ? formatDateTime(d.last_attempt_at) : '—'}</Text>
          {d.next_attempt_at && (
            <Text size="xs" c="dimmed">
              next {formatDateTime(d.next_attempt_at)}
            </Text>
          )}
        </Stack>
      ),
    },
    {
      key: 'redeliver',
      header: <VisuallyHidden>Actions</VisuallyHidden>,
      render: (d) => (
        <Button
          size="xs"
          variant="subtle"
          disabled={!endpoint.enabled}
          loading={redeliver.isPending && redeliver.variables?.id === d.id}
          onClick={() => redeliver.mutate(d)}
          aria-label={`Send ${d.event_type} ${d.event_id} again`}
        >
          Send again
        </Button>
      ),
    },
  ];
  return (
    <Section
      id="deliveries"
      title="Deliveries"
      actions={
        <Select
          label="Status"
          data={STATUSES}
          value={params.status}
          onChange={(value) => setParams({ status: value ?? '' })}
          allowDeselect={false}
          w={180}
        />
      }
    >
      <QueryState query={list} label="Loading the deliveries">
        {(page) => (
          <PagedTable
            caption={`Deliveries to ${endpoint.url}, newest first`}
            columns={columns}
            rows={page.rows}
            rowKey={(d) => d.id}
            total={page.total}
            page={params.page}
            pageSize={PAGE_SIZE}
            onPage={(p) => setParams({ page: p })}
            minWidth={820}
            empty={
              <EmptyState title={params.status ? `No ${params.status} deliveries` : 'No deliveries yet'}>
                {params.status ? 'Pick another status to see the others.' : 'Events the endpoint subscribes to appear here as they happen; send a test event to try the receiver.'}
              </EmptyState>
            }
          />
        )}
      </QueryState>
    </Section>
  );
}

function Endpoint({ endpoint }: { endpoint: WebhookEndpoint }) {
  const client = useQueryClient();
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) =>
      unwrap(api.PATCH('/api/developer/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: endpoint.id } }, body: { enabled } })),
    onSuccess: async (saved) => {
      client.setQueryData(webhookKeys.endpoint(endpoint.id), saved);
      await client.invalidateQueries({ queryKey: webhookKeys.endpoints, exact: true });
      notify(saved.enabled ? 'The endpoint is enabled: events are sent again.' : 'The endpoint is disabled: no events are sent to it.', 'green');
    },
  });
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: endpoint.id } } })),
    onSuccess: async () => {
      notify('A webhook.test event is on its way; its delivery is below.', 'green');
      await client.invalidateQueries({ queryKey: webhookKeys.deliveries(endpoint.id) });
    },
  });
  const close = () => setDialog(null);
  return (
    <>
      <PageHeader
        title={endpoint.description || 'Webhook endpoint'}
        description={<Code style={{ wordBreak: 'break-all' }}>{endpoint.url}</Code>}
        actions={
          <Group gap="xs">
            <Button loading={test.isPending} disabled={!endpoint.enabled} onClick={() => test.mutate()}>
              Send a test event
            </Button>
            <Button variant="default" onClick={() => setDialog({ kind: 'edit' })}>
              Change
            </Button>
            <Button variant="default" onClick={() => setDialog({ kind: 'rotate' })}>
              Rotate the secret
            </Button>
            <Button variant="default" disabled={!endpoint.enabled} onClick={() => setDialog({ kind: 'redeliver-failed' })}>
              Send failed again
            </Button>
            <Button variant="subtle" color="red" onClick={() => setDialog({ kind: 'delete' })}>
              Delete
            </Button>
          </Group>
        }
      />
      <Stack>
        {test.isError && <ProblemAlert error={test.error} />}
        <Section id="endpoint" title="Endpoint">
          <Group component="dl" gap="xl" align="flex-start" wrap="wrap" m={0}>
            <Fact label="Status">
              <EndpointStatus endpoint={endpoint} />
            </Fact>
            <Fact label="Events">
              <EventsSummary events={endpoint.events} />
            </Fact>
            <Fact label="Added">{formatDateTime(endpoint.created_at)}</Fact>
            {endpoint.failing_since && <Fact label="Failing since">{formatDateTime(endpoint.failing_since)}</Fact>}
            {endpoint.previous_secret_expires_at && <Fact label="Previous secret signs until">{formatDateTime(endpoint.previous_secret_expires_at)}</Fact>}
          </Group>
          <Switch
            label="Enabled"
            description={
              endpoint.disabled_reason === 'failing'
                ? 'Patchbay disabled it after five days of failures. Fix the receiver, enable it, then send the failed deliveries again.'
                : 'Off: no events are sent to it; deliveries already queued end as failed.'
            }
            checked={endpoint.enabled}
            disabled={toggle.isPending}
            onChange={(e) => toggle.mutate(e.currentTarget.checked)}
          />
          {toggle.isError && <ProblemAlert error={toggle.error} />}
        </Section>
        <Deliveries endpoint={endpoint} />
      </Stack>
      {dialog?.kind === 'edit' && <EditEndpoint endpoint={endpoint} onClose={close} />}
      {dialog?.kind === 'rotate' && <RotateSecret endpoint={endpoint} onClose={close} />}
      {dialog?.kind === 'delete' && <DeleteEndpoint endpoint={endpoint} onClose={close} />}
      {dialog?.kind === 'redeliver-failed' && <RedeliverFailed endpoint={endpoint} onClose={close} />}
    </>
  );
}

/** One endpoint: its settings, test event, secret rotation, and the delivery log with redelivery. */
export default function EndpointPage() {
  const endpointId = Number(useParams().endpointId);
  const endpoint = useQuery({
    queryKey: webhookKeys.endpoint(endpointId),
    queryFn: () => unwrap(api.GET('/api/developer/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } } })),
    enabled: Number.isInteger(endpointId) && endpointId > 0,
    retry: (count, error) => !isProblem(error, 404) && count < 2,
  });
  return (
    <>
      <Anchor component={Link} to="/webhooks" size="sm">
        <Group gap={4}>
          <IconArrowLeft size={14} aria-hidden /> Webhooks
        </Group>
      </Anchor>
      {!Number.isInteger(endpointId) || endpointId <= 0 || isProblem(endpoint.error, 404) ? (
        <EmptyState title="No such endpoint">It may have been deleted, or it belongs to another workspace.</EmptyState>
      ) : (
        <QueryState query={endpoint} label="Loading the endpoint">
          {(data) => <Endpoint endpoint={data} />}
        </QueryState>
      )}
    </>
  );
}
