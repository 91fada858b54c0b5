import { queryOptions } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../api/client';

export type PayoutRun = paths['/api/developer/partners/payouts/runs/{runId}']['get']['responses'][200]['content']['application/json'];

export const moneyKeys = { all: ['money'] as const };

const fetchAccounting = (page: number, pageSize: number) => unwrap(api.GET('/api/developer/partners/programs/accounting', { params: { query: { page, pageSize } } }));
/** As the typed client reads it (a property typed only `null`, such as the developer row's `agreement_id`, has no key in it). */
export type Accounting = Awaited<ReturnType<typeof fetchAccounting>>;

/** Allocations and reversals page on the server; the rest of the answer is whole. */
export const accountingQuery = (page: number, pageSize: number) =>
  queryOptions({
    queryKey: [...moneyKeys.all, 'accounting', page, pageSize],
    queryFn: () => fetchAccounting(page, pageSize),
  });

const MOVING = new Set(['reserved', 'submitted', 'reconciliation_required']);

/** Whether a run can still change: it has not finished, or a transfer of it waits for the provider. */
export const runMoving = (run: PayoutRun) => run.state === 'queued' || run.state === 'running' || run.transfers.some((t) => MOVING.has(t.status));

/** A payout run, polled every second while it (or one of its transfers) is still moving. */
export const payoutRunQuery = (runId: number) =>
  queryOptions({
    queryKey: [...moneyKeys.all, 'run', runId],
    queryFn: () => unwrap(api.GET('/api/developer/partners/payouts/runs/{runId}', { params: { path: { runId } } })),
    refetchInterval: (query) => (query.state.data && !runMoving(query.state.data) ? false : 1000),
  });

/** Why a run passed an agreement over, in words. */
export const SKIP_REASONS: Record<string, string> = {
  below_minimum: 'the payable balance is below the payout minimum',
  no_ready_destination: 'the partner has no ready payout destination in this mode',
  destination_on_hold: 'the partner’s destination changed recently and is on a security hold',
  transfer_in_flight: 'a transfer of this agreement is still in flight',
  agreement_not_live: 'the agreement is not live (not active, or live consent is incomplete)',
  provider_not_configured: 'no payout provider is configured for this mode',
};
