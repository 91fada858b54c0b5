import { Type } from '@sinclair/typebox';
import { defineJob } from '../../platform/jobs/define-job.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { Email, Text } from '../../platform/http/bounded.js';

/**
 * A buyer's sign-in link request, answered after the route has answered 202: the route does the
 * same work whether or not the workspace or the address exists, and the job decides. The payload
 * (a workspace reference and an address) is dropped once the job has run.
 */
export const SIGN_IN_REQUEST_JOB = defineJob(
  'customer-portal.sign-in-request',
  Type.Object({ workspace: Text(63), email: Email() }, { additionalProperties: false }),
  { purgePayload: true },
);

/** What the handlers need of the buyers' sessions (CustomerSessions in sessions.service.ts, which queues the sign-in job: typed here by shape, so the two files do not import each other). */
export interface PortalJobWorker {
  sendLink(request: { workspace: string; email: string }): Promise<'sent' | 'no-match'>;
  deleteExpired(): Promise<unknown>;
}

export function registerPortalJobs(runner: JobRunner, sessions: PortalJobWorker): void {
  runner.handle(SIGN_IN_REQUEST_JOB, async (job) => ({ outcome: await sessions.sendLink(job.payload) }));
  runner.addMaintenance('customer-portal-sessions', () => sessions.deleteExpired());
}
