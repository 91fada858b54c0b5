import { Type } from '@sinclair/typebox';
import { PermanentJobError } from '../../platform/jobs/runner.js';
import { defineEmail } from '../../platform/mail/mail.js';
import { findWorkspace, listMembers } from '../workspaces/index.js';
import * as repo from './webhooks.repo.js';

/** How long an endpoint may fail every attempt before it is disabled (and its owner told). */
export const FAILURE_WINDOW_DAYS = 5;

/** The URL as the e-mail shows it: no query or fragment, which may carry a receiver's token. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

/** To a workspace owner: an endpoint was disabled because every attempt failed for the failure window. */
export const WEBHOOK_ENDPOINT_DISABLED_EMAIL = defineEmail({
  name: 'webhook_endpoint_disabled',
  payload: Type.Object({ endpointId: Type.Integer({ minimum: 1 }), accountId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  async render({ endpointId, accountId }, ctx) {
    if (ctx.workspaceId === null) throw new PermanentJobError('a webhook e-mail belongs to a workspace');
    const endpoint = await repo.endpointForEmail(ctx.db, ctx.workspaceId, endpointId);
    if (!endpoint) return { skip: 'the endpoint was deleted' };
    if (endpoint.enabled) return { skip: 'the endpoint was enabled again' };
    const [owner] = (await listMembers(ctx.db, { workspaceId: ctx.workspaceId, accountId })).filter((m) => m.owner);
    if (!owner) return { skip: 'the account no longer owns the workspace' };
    const workspace = await findWorkspace(ctx.db, ctx.workspaceId);
    const since = endpoint.failing_since ? ` since ${endpoint.failing_since.toISOString()}` : '';
    return {
      to: owner.email,
      subject: `A webhook endpoint of ${workspace?.name ?? 'your workspace'} was disabled`,
      text:
        `Every delivery to the webhook endpoint ${shownUrl(endpoint.url)} (id ${endpoint.id}) has failed${since}, for ${FAILURE_WINDOW_DAYS} days, so Patchbay stopped sending to it.\n\n` +
        `Fix the receiver, then enable the endpoint again (PATCH /api/developer/webhooks/endpoints/${endpoint.id} with {"enabled": true}) ` +
        `and send the failed events again (POST /api/developer/webhooks/endpoints/${endpoint.id}/redeliver-failed with the time to start from). ` +
        `The delivery log (GET /api/developer/webhooks/endpoints/${endpoint.id}/deliveries) shows each attempt's answer.\n\n` +
        `Console: ${ctx.urls.publicBaseUrl}/console`,
    };
  },
});
