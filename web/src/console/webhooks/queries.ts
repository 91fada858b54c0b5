import { api, type paths, unwrap } from '../../api/client';

export type WebhookEndpoint = paths['/api/developer/webhooks/endpoints']['get']['responses'][200]['content']['application/json']['rows'][number];
export type WebhookDelivery =
  paths['/api/developer/webhooks/endpoints/{endpointId}/deliveries']['get']['responses'][200]['content']['application/json']['rows'][number];
export type SubscribableEvent = NonNullable<paths['/api/developer/webhooks/endpoints']['post']['requestBody']>['content']['application/json']['events'][number];

export const webhookKeys = {
  all: ['console', 'webhooks'] as const,
  endpoints: ['console', 'webhooks', 'endpoints'] as const,
  endpoint: (id: number) => ['console', 'webhooks', 'endpoints', id] as const,
  deliveries: (id: number) => ['console', 'webhooks', 'deliveries', id] as const,
};

/** The event catalogue, for the endpoint form's choices; it changes only with a release. */
export const eventTypesQuery = {
  queryKey: ['console', 'webhooks', 'event-types'] as const,
  queryFn: async () => (await unwrap(api.GET('/api/developer/webhooks/event-types'))).event_types,
  staleTime: Infinity,
};
