import { type CodesOf, defineErrors, type ErrorSpec } from '../../platform/http/errors.js';

const webhookErrorSpecs = {
  WEBHOOK_URL_NOT_ALLOWED: {
    status: 422,
    title: 'Webhooks cannot be sent to this URL',
    description:
      'the endpoint URL is refused: plain `http` to a host the deployment does not allow (WEBHOOK_ALLOWED_HOSTS), credentials in the URL, or a host that is or resolves to a loopback, private, link-local, unique-local or other non-public address; `detail` says which',
  },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: { status: 409, title: 'The workspace has as many webhook endpoints as it may', description: 'a workspace has at most 20 webhook endpoints; delete one first' },
  WEBHOOK_ENDPOINT_DISABLED: {
    status: 409,
    title: 'The webhook endpoint is disabled',
    description: 'a test event or a redelivery was asked of a disabled endpoint; enable it first (PATCH with `"enabled": true`)',
  },
} as const satisfies Record<string, ErrorSpec>;
export const WebhookErrors = defineErrors(webhookErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof webhookErrorSpecs> {}
}
