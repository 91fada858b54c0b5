// The ledger module's face: partner money — the split rules, the append-only ledger, allocation of
// sales and reversal of refunds, the preview, accounting, payout runs (the CLI's and the console's)
// and transfer states. It
// reacts to other modules through jobs (ledger.jobs.ts). app.ts, the operator tooling and other
// modules import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { PayoutProviders } from '../payouts/index.js';
import { registerLedgerJobs } from './ledger.jobs.js';
import { ledgerRoutes } from './ledger.routes.js';
import { registerPayoutRuns } from './payout-runs.routes.js';
import { DEFAULT_PAYOUT_MINIMUM, Transfers } from './transfers.service.js';

/** The checkout books a sale with its split (and a refund with its reversal) in its own transaction; fixtures do the same. */
export { allocateSale, allocateSales, reverseRefund, reverseRefunds, type SaleToAllocate } from './ledger.service.js';
/** Payout runs and transfer confirmations (`patchbay payouts run` runs the same thing); the operator's reconciliation. */
export { DEFAULT_PAYOUT_MINIMUM, DEFAULT_TRANSFER_LEASE_SECONDS, type PayoutRunResult, Transfers } from './transfers.service.js';
export { ReconcileRefused, Reconciliation } from './reconcile.service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Payout runs and transfer confirmations (`patchbay payouts run` calls `transfers.run`). */
    transfers: Transfers;
  }
}

export interface LedgerDeps {
  db: Db;
  runner: JobRunner;
  providers: PayoutProviders;
  /** The smallest payable balance a payout run transfers (minor units, default 1000). */
  minimumMinorUnits?: number | undefined;
  /** How long a payout run owns a transfer before the next run may take it over (seconds, default 300). */
  transferLeaseSeconds?: number | undefined;
}

export function register(app: FastifyInstance, { db, runner, providers, minimumMinorUnits = DEFAULT_PAYOUT_MINIMUM, transferLeaseSeconds }: LedgerDeps): void {
  const transfers = new Transfers(db, providers, BigInt(minimumMinorUnits), { leaseSeconds: transferLeaseSeconds });
  app.decorate('transfers', transfers);
  registerLedgerJobs(runner, db, transfers);
  registerRoutes(app, ledgerRoutes({ db }));
  registerPayoutRuns(app, { db, transfers, runner });
}
