import { eventDefinitions, type WebhookEventDefinition } from './webhooks.events.js';

type Obj = Record<string, unknown>;

const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string', examples: [example] } });

const HEADERS = [
  header('webhook-id', 'The event’s id (the body’s `id`), the same on every attempt: deduplicate on it', 'evt_3q2+7wPb1xKcYz8vT0m1Dg'),
  header('webhook-timestamp', 'Unix seconds when this attempt was signed; refuse one far from your clock (the libraries allow 5 minutes)', '1795000000'),
  header(
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>` with the endpoint secret (base64-decoded after `whsec_`); two during a secret rotation’s overlap. Verify with a Standard Webhooks library',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
  header('patchbay-event-version', 'The version of the event type’s schema', '1'),
];

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Obj;

function envelope(d: WebhookEventDefinition): Obj {
  return {
    type: 'object',
    required: ['id', 'type', 'created_at', 'workspace_id', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', description: 'The event id (also `webhook-id`)' },
      type: { type: 'string', const: d.type },
      created_at: { type: 'string', format: 'date-time', description: 'When the change happened (delivery order is not guaranteed: order by this)' },
      workspace_id: { type: 'integer', minimum: 1 },
      data: plain(d.data),
    },
  };
}

/** How a receiver knows a request comes from Patchbay: the Standard Webhooks signature header. */
export const WEBHOOK_SIGNATURE_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'webhook-signature',
  description: 'Standard Webhooks signature of the request with the endpoint’s secret; verify it (and `webhook-timestamp`) before trusting the body. See docs/api/webhooks.md.',
};

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type of the catalogue, with its body
 * (the envelope and the type's `data` schema), the signature headers and what the receiver answers.
 */
export function webhooksSection(): Record<string, Obj> {
  return Object.fromEntries(
    eventDefinitions().map((d) => [
      d.type,
      {
        post: {
          operationId: `webhookEvents.${d.type.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase())}`,
          tags: ['webhook events'],
          summary: d.summary,
          description: `${d.description}\n\nEvent version ${d.version}. Signed as the Standard Webhooks specification says; see docs/api/webhooks.md.`,
          // The receiver authenticates Patchbay by the signature (webhookSignature in components.securitySchemes).
          security: [{ webhookSignature: [] }],
          parameters: HEADERS,
          requestBody: { required: true, content: { 'application/json': { schema: envelope(d) } } },
          responses: {
            '200': { description: 'Any 2xx answer within 15 seconds acknowledges the event; anything else, or no answer, is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)' },
          },
        },
      },
    ]),
  );
}
