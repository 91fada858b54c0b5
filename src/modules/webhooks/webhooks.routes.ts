import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import {
  CreatedEndpoint,
  CreateEndpointBody,
  DeletedEndpoint,
  DeliveryIdParams,
  DeliveryList,
  DeliveryListQuery,
  DeliveryRow,
  Endpoint,
  EndpointIdParams,
  EndpointList,
  EventTypeList,
  MAX_ENDPOINTS,
  MAX_REDELIVER,
  RedeliverFailedBody,
  RedeliverFailedResult,
  RotatedSecret,
  UpdateEndpointBody,
} from './webhooks.schemas.js';
import { eventTypeCatalogue, type WebhookEndpoints } from './webhooks.service.js';

const tags = ['webhooks'];
const policy = { auth: 'account', permission: 'webhooks.manage', allProducts: true } as const;
const BASE = '/api/developer/webhooks';

// An answer that carries a secret is not kept for Idempotency-Key replays (the table would hold it for a day).
const noReplay = async (request: { headers: Record<string, unknown> }) => {
  delete request.headers['idempotency-key'];
};

export const webhookRoutes = ({ endpoints }: { endpoints: WebhookEndpoints }) => [
  defineRoute({
    method: 'GET',
    url: `${BASE}/event-types`,
    policy: { auth: 'account', permission: null },
    schema: {
      tags,
      summary: 'The webhook event catalogue',
      description: 'Every event type with its version and the JSON Schema of its `data` (the same schemas as the OpenAPI document’s `webhooks` section). Every member may read it.',
      response: { 200: EventTypeList, ...errorResponses(401, 403) },
    },
    handler: () => eventTypeCatalogue(),
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/endpoints`,
    policy,
    schema: { tags, summary: 'Webhook endpoints', description: 'The workspace’s endpoints, oldest first. Secrets are never shown again.', response: { 200: EndpointList, ...errorResponses(401, 403) } },
    handler: ({ scope }) => endpoints.list(scope),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/endpoints`,
    policy,
    onRequest: noReplay,
    schema: {
      tags,
      summary: 'Add a webhook endpoint',
      description:
        'Answers the signing secret once (`whsec_…`; kept encrypted, never shown again). `events` lists the types to receive, or `["*"]` for all. ' +
        'The URL must be https, or http to a host the deployment allows (WEBHOOK_ALLOWED_HOSTS); an address in a private, loopback, link-local or otherwise non-public range is refused (422 WEBHOOK_URL_NOT_ALLOWED), here and again at every delivery. ' +
        `At most ${MAX_ENDPOINTS} endpoints per workspace (409 WEBHOOK_ENDPOINT_LIMIT_REACHED). \`Idempotency-Key\` is ignored: a replay would show the secret twice. Audited.`,
      body: CreateEndpointBody,
      response: { 201: CreatedEndpoint, ...errorResponses(400, 401, 403, 409, 422) },
    },
    handler: async ({ request, reply, scope }) => {
      reply.header('cache-control', 'no-store');
      return reply.code(201).send(await endpoints.create(scope, request.body));
    },
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/endpoints/:endpointId`,
    policy,
    schema: { tags, summary: 'A webhook endpoint', params: EndpointIdParams, response: { 200: Endpoint, ...errorResponses(400, 401, 403, 404) } },
    handler: ({ request, scope }) => endpoints.get(scope, request.params.endpointId),
  }),
  defineRoute({
    method: 'PATCH',
    url: `${BASE}/endpoints/:endpointId`,
    policy,
    schema: {
      tags,
      summary: 'Change a webhook endpoint',
      description: 'Changes what is sent. `enabled: false` stops deliveries (queued ones fail); `enabled: true` starts them again and forgets past failures (redeliver what failed with …/redeliver-failed). A new URL is checked as at creation. Audited.',
      params: EndpointIdParams,
      body: UpdateEndpointBody,
      response: { 200: Endpoint, ...errorResponses(400, 401, 403, 404, 422) },
    },
    handler: ({ request, scope }) => endpoints.update(scope, request.params.endpointId, request.body),
  }),
  defineRoute({
    method: 'DELETE',
    url: `${BASE}/endpoints/:endpointId`,
    policy,
    schema: {
      tags,
      summary: 'Delete a webhook endpoint',
      description: 'The endpoint and its delivery log go; nothing more is sent to it. Audited.',
      params: EndpointIdParams,
      response: { 200: DeletedEndpoint, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => endpoints.remove(scope, request.params.endpointId),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/endpoints/:endpointId/rotate-secret`,
    policy,
    onRequest: noReplay,
    schema: {
      tags,
      summary: 'Rotate an endpoint’s signing secret',
      description:
        'Answers the new secret once. Until `previous_secret_expires_at` (24 hours by default, WEBHOOK_SECRET_OVERLAP_HOURS) every delivery carries two signatures in `webhook-signature`, one per secret, so a receiver verifies with either while it switches; rotating again ends the overlap of the secret before. Audited.',
      params: EndpointIdParams,
      response: { 200: RotatedSecret, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, reply, scope }) => {
      reply.header('cache-control', 'no-store');
      return endpoints.rotateSecret(scope, request.params.endpointId);
    },
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/endpoints/:endpointId/test`,
    policy,
    schema: {
      tags,
      summary: 'Send a test event',
      description: 'Queues a `webhook.test` event to this endpoint alone and answers its delivery (202); follow it in the delivery log. A disabled endpoint answers 409 WEBHOOK_ENDPOINT_DISABLED.',
      params: EndpointIdParams,
      response: { 202: DeliveryRow, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, reply, scope }) => reply.code(202).send(await endpoints.sendTest(scope, request.params.endpointId)),
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/endpoints/:endpointId/deliveries`,
    policy,
    schema: {
      tags,
      summary: 'An endpoint’s delivery log',
      description: 'Deliveries newest first, with their attempts, the last answer’s status, duration and first 2 KB, and the next attempt’s time; `status` filters. Deliveries are kept 30 days.',
      params: EndpointIdParams,
      querystring: DeliveryListQuery,
      response: { 200: DeliveryList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => endpoints.deliveries(scope, request.params.endpointId, request.query),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/endpoints/:endpointId/redeliver-failed`,
    policy,
    schema: {
      tags,
      summary: 'Send failed events again',
      description: `Queues again every failed delivery of the endpoint whose event came at or after \`since\`, as new deliveries (attempted now, retried on the schedule); at most ${MAX_REDELIVER} per request (\`more\`: send it again). A disabled endpoint answers 409 WEBHOOK_ENDPOINT_DISABLED.`,
      params: EndpointIdParams,
      body: RedeliverFailedBody,
      response: { 202: RedeliverFailedResult, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, reply, scope }) => reply.code(202).send(await endpoints.redeliverFailed(scope, request.params.endpointId, request.body.since)),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/deliveries/:deliveryId/redeliver`,
    policy,
    schema: {
      tags,
      summary: 'Send one delivery again',
      description:
        'Queues the delivery again as new, whatever its state: attempted now with the same event id (receivers deduplicate on `webhook-id`) and retried on the schedule if that fails; an attempt still queued for it is dropped. Answers the delivery (202). A disabled endpoint answers 409 WEBHOOK_ENDPOINT_DISABLED.',
      params: DeliveryIdParams,
      response: { 202: DeliveryRow, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, reply, scope }) => reply.code(202).send(await endpoints.redeliver(scope, request.params.deliveryId)),
  }),
];
