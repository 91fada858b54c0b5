import type { FastifyInstance } from 'fastify';
import { defineRoute, registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { registerPayoutRunJobs } from './payout-runs.jobs.js';
import { PayoutRun, RequestRunBody, RunIdParams } from './payout-runs.schemas.js';
import { PayoutRuns } from './payout-runs.service.js';
import type { Transfers } from './transfers.service.js';

const tags = ['partners: money'];
const RUN_URL = '/api/developer/partners/payouts/runs';

export const payoutRunRoutes = ({ runs }: { runs: PayoutRuns }) => [
  defineRoute({
    method: 'POST',
    url: RUN_URL,
    policy: { auth: 'account', permission: 'partners.manage' },
    schema: {
      tags,
      summary: 'Start a payout run',
      description:
        'Queues a payout run as a job of the server (it works on the embedded database while the server runs) and answers 202 with the run to poll (`Location`). ' +
        'While a run of the same mode is queued or running in the workspace, the answer is that run. Live mode is the workspace owner’s alone (403 OWNER_REQUIRED). ' +
        'The run pays this workspace’s payable balances of its mode that reach the minimum (and takes over its transfers left by a run that died), never another workspace’s: it is `patchbay payouts run` restricted to the workspace. Audited.',
      body: RequestRunBody,
      response: { 202: PayoutRun, ...errorResponses(400, 401, 403) },
    },
    handler: async ({ request, reply, scope }) => {
      const run = await runs.request(scope, request.body?.livemode ?? false);
      return reply.code(202).header('location', `${RUN_URL}/${run.id}`).send(run);
    },
  }),
  defineRoute({
    method: 'GET',
    url: `${RUN_URL}/:runId`,
    policy: { auth: 'account', permission: 'partners.manage' },
    schema: {
      tags,
      summary: 'A payout run and its transfers',
      description: 'The run’s state, and this workspace’s transfers it reserved or took over with their current states (a transfer keeps moving after the run: the provider confirms it later). Another workspace’s run answers 404.',
      params: RunIdParams,
      response: { 200: PayoutRun, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => runs.get(scope, request.params.runId),
  }),
];

/** Payout runs from the console: their routes and the job that runs them. */
export function registerPayoutRuns(app: FastifyInstance, { db, transfers, runner }: { db: Db; transfers: Transfers; runner: JobRunner }): void {
  const runs = new PayoutRuns(db, transfers);
  registerPayoutRunJobs(runner, runs);
  registerRoutes(app, payoutRunRoutes({ runs }));
}
