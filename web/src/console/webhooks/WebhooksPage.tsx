import { Anchor, Badge, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { DataTable, type Column } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { EndpointForm } from './EndpointForm';
import { webhookKeys, type WebhookEndpoint } from './queries';
import { SecretShownOnce } from './SecretShownOnce';

/** What an endpoint receives, in a few words. */
export function EventsSummary({ events }: { events: string[] }) {
  if (events.includes('*')) return <Badge variant="outline">every event</Badge>;
  return (
    <Group gap={4}>
      {events.slice(0, 3).map((e) => (
        <Badge key={e} variant="outline" color="gray" tt="none">
          {e}
        </Badge>
      ))}
      {events.length > 3 && <Text size="sm">and {events.length - 3} more</Text>}
    </Group>
  );
}

/** Enabled, disabled by a member, or disabled by Patchbay after five days of failures. */
export function EndpointStatus({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.enabled) return <StatusBadge status={endpoint.failing_since ? 'failing' : 'active'} />;
  return <StatusBadge status={endpoint.disabled_reason === 'failing' ? 'disabled_after_failures' : 'disabled'} />;
}

function AddEndpoint({ onClose }: { onClose: () => void }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (body: { url: string; description: string; events: WebhookEndpoint['events'] }) =>
      unwrap(
        api.POST('/api/developer/webhooks/endpoints', {
          body: { url: body.url, events: body.events as never, ...(body.description ? { description: body.description } : {}) },
        }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: webhookKeys.endpoints }),
  });
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Add a webhook endpoint" size="lg" closeOnClickOutside={!create.isSuccess}>
      {create.isSuccess ? (
        <SecretShownOnce secret={create.data.secret} onClose={onClose}>
          Patchbay sends the events you chose to {create.data.url}. Send a test event from the endpoint’s page to check your receiver.
        </SecretShownOnce>
      ) : (
        <EndpointForm
          initial={{ url: '', description: '', events: [] }}
          submitLabel="Add the endpoint"
          pending={create.isPending}
          error={create.error}
          onSubmit={(values) => create.mutate(values)}
          onCancel={onClose}
        />
      )}
    </Modal>
  );
}

/** The workspace's webhook endpoints (webhooks.manage, all products): add one (its secret shown once), open one for its deliveries. */
export default function WebhooksPage() {
  const endpoints = useQuery({ queryKey: webhookKeys.endpoints, queryFn: async () => (await unwrap(api.GET('/api/developer/webhooks/endpoints'))).rows });
  const [adding, setAdding] = useState(false);
  const columns: Column<WebhookEndpoint>[] = [
    {
      key: 'url',
      header: 'Endpoint',
      render: (e) => (
        <Stack gap={0}>
          <Anchor component={Link} to={`/webhooks/${e.id}`} fw={500} style={{ wordBreak: 'break-all' }}>
            {e.url}
          </Anchor>
          {e.description && (
            <Text size="sm" c="dimmed">
              {e.description}
            </Text>
          )}
        </Stack>
      ),
    },
    { key: 'events', header: 'Events', render: (e) => <EventsSummary events={e.events} /> },
    { key: 'status', header: 'Status', render: (e) => <EndpointStatus endpoint={e} /> },
    { key: 'created', header: 'Added', render: (e) => formatDateTime(e.created_at) },
  ];
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Patchbay posts signed events to your own systems when licenses, devices, sales and partners change; each endpoint keeps a log of its deliveries."
        actions={
          <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setAdding(true)}>
            Add an endpoint
          </Button>
        }
      />
      <QueryState query={endpoints} label="Loading the webhook endpoints">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No webhook endpoints">
              Add the URL of a receiver and the events it wants. How to verify the signatures is in the API documentation (docs/api/webhooks.md).
            </EmptyState>
          ) : (
            <DataTable caption="Webhook endpoints" columns={columns} rows={rows} rowKey={(e) => e.id} />
          )
        }
      </QueryState>
      {adding && <AddEndpoint onClose={() => setAdding(false)} />}
    </>
  );
}
