import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import {
  Connection,
  ConnectionIdParams,
  ConnectionList,
  CreateConnectionBody,
  EventIdParams,
  EventList,
  EventListQuery,
  EventRow,
  MAX_MAPPINGS,
  UpdateConnectionBody,
} from './checkout-connections.schemas.js';
import { type CheckoutConnections, toEventRow } from './checkout-connections.service.js';
import type { ConnectionEvents } from './events.service.js';

const tags = ['checkout connections'];
const policy = { auth: 'account', permission: 'purchases.manage', allProducts: true } as const;
const BASE = '/api/developer/checkout-connections';
const SECRET_NOTE = 'The signing secret (and Stripe’s API key) is kept encrypted and never returned; the answer shows `apiKeySet` only.';

export const connectionRoutes = ({ connections, events }: { connections: CheckoutConnections; events: ConnectionEvents }) => [
  defineRoute({
    method: 'GET',
    url: BASE,
    policy,
    schema: { tags, summary: 'Checkout connections', description: 'The workspace’s connections to Stripe, Paddle and Lemon Squeezy, oldest first, each with its webhook URL and product mapping.', response: { 200: ConnectionList, ...errorResponses(401, 403) } },
    handler: ({ scope }) => connections.list(scope),
  }),
  defineRoute({
    method: 'POST',
    url: BASE,
    policy,
    schema: {
      tags,
      summary: 'Connect a Stripe, Paddle or Lemon Squeezy store',
      description:
        `Answers the connection with its \`webhookUrl\` to paste into the provider’s dashboard. ${SECRET_NOTE} ` +
        `\`productMapping\` maps the provider’s product ids to this workspace’s products (at most ${MAX_MAPPINGS}; a product of another workspace is 404, an id mapped twice 400). ` +
        '`apiKey` is for Stripe only (400 otherwise). Audited.',
      body: CreateConnectionBody,
      response: { 201: Connection, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, reply, scope }) => reply.code(201).send(await connections.create(scope, request.body)),
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/:connectionId`,
    policy,
    schema: { tags, summary: 'A checkout connection', params: ConnectionIdParams, response: { 200: Connection, ...errorResponses(400, 401, 403, 404) } },
    handler: ({ request, scope }) => connections.get(scope, request.params.connectionId),
  }),
  defineRoute({
    method: 'PATCH',
    url: `${BASE}/:connectionId`,
    policy,
    schema: {
      tags,
      summary: 'Change a checkout connection',
      description: `Changes what is sent: a new \`signingSecret\` (after rolling it at the provider), \`productMapping\` (replaces the whole mapping), \`enabled\`, Stripe’s \`apiKey\` (null removes it). ${SECRET_NOTE} A disabled connection answers its provider 409 and records nothing, so the provider retries. Audited.`,
      params: ConnectionIdParams,
      body: UpdateConnectionBody,
      response: { 200: Connection, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => connections.update(scope, request.params.connectionId, request.body),
  }),
  defineRoute({
    method: 'DELETE',
    url: `${BASE}/:connectionId`,
    policy,
    schema: {
      tags,
      summary: 'Remove a checkout connection',
      description: 'Its webhook URL stops answering (404) and its event log goes with it; the purchases, serials and partner allocations it booked stay. Audited.',
      params: ConnectionIdParams,
      response: { 204: { type: 'null', description: 'Removed' }, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, reply, scope }) => {
      await connections.remove(scope, request.params.connectionId);
      return reply.code(204).send();
    },
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/:connectionId/events`,
    policy,
    schema: {
      tags,
      summary: 'A checkout connection’s event log',
      description:
        'Every event the connection received with a valid signature, newest first: `recorded` (booked), `replayed` (it repeated an event or an order already booked), `ignored` (not an event Patchbay books, with the reason) or `failed` (could not be booked, with the reason; nothing was written). Events with a bad signature are not logged.',
      params: ConnectionIdParams,
      querystring: EventListQuery,
      response: { 200: EventList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => connections.events(scope, request.params.connectionId, request.query),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/:connectionId/events/:eventId/reprocess`,
    policy,
    schema: {
      tags,
      summary: 'Re-process a failed event',
      description:
        'Books a `failed` event again as it was received (its body is kept encrypted until then), after the cause is fixed: a product mapping added, Stripe’s API key set, the sale a refund belongs to recorded. Answers the event with its new outcome (`failed` again with the reason if it still cannot be booked). Another outcome is 409 `CHECKOUT_CONNECTION_EVENT_NOT_FAILED`.',
      params: EventIdParams,
      response: { 200: EventRow, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, scope }) => toEventRow(await events.reprocess(scope, request.params.connectionId, request.params.eventId)),
  }),
];
