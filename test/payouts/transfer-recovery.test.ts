import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { insertTransaction, unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { Transfers } from '../../src/modules/ledger/transfers.service.js';
import type { PayoutProvider, PayoutProviders } from '../../src/modules/payouts/providers.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { onPostgres, type TestContext, useTestApp } from '../helpers/app.js';
import { accounting, CHECKOUT_SECRET, payablePartner, privateDatabaseUrl, sandboxPayouts, sell, transfersOf } from './partner-money.js';
import { ProviderConfirmJob } from '../../src/modules/payouts/payouts.jobs.js';
import { discardJobs, listJobs } from '../../src/platform/jobs/jobs.testing.js';

// Transfers a payout run leaves behind: a run that died (its lease runs out), a provider whose
// answer was lost, a confirmation that never came. In process, on PGlite and PostgreSQL; the
// kill -9 tests of the real CLI are in payout-crash.test.ts. Job runners do not run here by
// themselves: a test delivers the provider's confirmations when it wants them.

const databaseUrl = await privateDatabaseUrl('transfer_recovery');
const ctx = useTestApp({ checkout: { webhookSecrets: [CHECKOUT_SECRET] }, jobs: { run: false }, ...(databaseUrl ? { databaseUrl } : {}) });

async function deliverConfirmations(c: TestContext) {
  c.app.jobs.start();
  await c.app.jobs.idle();
  await c.app.jobs.stop();
}

/** Lets time pass for one transfer: its lease (or its wait for a confirmation) has run out. */
const expireLease = (c: TestContext, transferId: number) => sql`update partner_transfers set lease_until = now() - interval '1 second' where id = ${transferId}`.execute(c.database.db);

/** The sandbox, except that submitting to `accountRef` never returns: the run stops there, as a killed process would. */
function stallingAt(c: TestContext, accountRef: string): PayoutProviders {
  return {
    get(kind, livemode) {
      const real = c.app.payoutProviders.get(kind, livemode);
      if (!real) return null;
      const provider: PayoutProvider = {
        kind: real.kind,
        livemode: real.livemode,
        startOnboarding: (tx, input) => real.startOnboarding(tx, input),
        refresh: (tx, ref) => real.refresh(tx, ref),
        submitTransfer: (input) => (input.accountRef === accountRef ? new Promise(() => {}) : real.submitTransfer(input)),
        findTransfer: (key) => real.findTransfer(key),
      };
      return provider;
    },
  };
}

const destinationOf = async (c: TestContext, agreementId: number) =>
  (
    await sql<{ id: number; account_ref: string; recipient_id: number }>`
      select d.id, d.account_ref, d.recipient_id from payout_destinations d join partner_agreements a on a.recipient_id = d.recipient_id
      where a.id = ${agreementId} and d.status = 'ready' and not d.livemode`.execute(c.database.db)
  ).rows[0]!;

/** Starts a run that reserves the agreement's balance and then stops answering (a lease of an hour); resolves with the reserved transfer. */
async function stalledRun(c: TestContext, agreementId: number) {
  const destination = await destinationOf(c, agreementId);
  void new Transfers(c.database.db, stallingAt(c, destination.account_ref), 1000n, { leaseSeconds: 3600 }).run(false);
  for (let i = 0; i < 600; i++) {
    const [transfer] = await transfersOf(c, agreementId);
    if (transfer) return transfer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the stalled run reserved nothing');
}

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('a transfer whose payout run died', () => {
  it('regression (issue 19): is taken over by the next run instead of blocking its agreement as transfer_in_flight forever', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c);
    // What a run killed after its reservation committed leaves: the transfer reserved, payable → in flight.
    const destination = await destinationOf(c, co);
    const transferId = await inTransaction(c.database.db, async (tx) => {
      const inserted = await sql<{ id: number }>`
        insert into partner_transfers (workspace_id, agreement_id, recipient_id, destination_id, provider, livemode, currency, amount, status)
        values (${ws.workspaceId}, ${co}, ${destination.recipient_id}, ${destination.id}, 'wallet', false, 'usd', 4500, 'reserved') returning id::int as id`.execute(tx);
      const id = inserted.rows[0]!.id;
      await insertTransaction(tx, { workspaceId: ws.workspaceId, kind: 'transfer_reserved', agreementId: co, transferId: id }, [
        { account: 'partner_payable', agreementId: co, recipientId: destination.recipient_id, currency: 'usd', amount: -4500n },
        { account: 'transfer_in_flight', agreementId: co, recipientId: destination.recipient_id, currency: 'usd', amount: 4500n },
      ]);
      return id;
    });

    const run = await c.app.transfers.run(false);
    expect(run.skipped).not.toContainEqual(expect.objectContaining({ agreement_id: co, reason: 'transfer_in_flight' }));
    expect(['submitted', 'paid']).toContain((await transfersOf(c, co))[0]!.status);
    await deliverConfirmations(c);
    expect((await transfersOf(c, co)).map((t) => [t.id, t.status])).toEqual([[transferId, 'paid']]);
    expect(await sandboxPayouts(c, transferId)).toEqual([{ amount: '4500', outcome: 'paid' }]);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 0, in_transfer_cents: 0, paid_cents: 4500 });

    // Nothing of the agreement is blocked any more: the next sale is paid by the next run.
    await sell(c, ws, 'p1', 4000);
    await c.app.transfers.run(false);
    await deliverConfirmations(c);
    expect((await transfersOf(c, co)).map((t) => t.status)).toEqual(['paid', 'paid']);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 0, paid_cents: 6300 });
  });

  it('is left alone while its run holds the lease, and taken over (submitted once) when the lease runs out', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c);
    // A run that stops after reserving (it never returns from the provider call).
    const transfer = await stalledRun(c, co);
    expect(transfer).toMatchObject({ status: 'reserved', attempts: 1, run_id: expect.stringMatching(/^run_/) });

    // New money meanwhile waits behind the transfer in flight (one per agreement and currency).
    await sell(c, ws, 'p1', 4000);
    const meanwhile = await c.app.transfers.run(false);
    expect(meanwhile.skipped).toContainEqual({ agreement_id: co, currency: 'usd', reason: 'transfer_in_flight' });
    expect(meanwhile.resumed.map((r) => r.transfer_id)).not.toContain(transfer.id);
    expect(await sandboxPayouts(c, transfer.id)).toEqual([]);
    expect((await transfersOf(c, co))[0]).toMatchObject({ status: 'reserved', run_id: transfer.run_id });

    await expireLease(c, transfer.id);
    const next = await c.app.transfers.run(false);
    expect(next.resumed).toContainEqual({ transfer_id: transfer.id, agreement_id: co, currency: 'usd', status: 'submitted' });
    const [after] = await transfersOf(c, co);
    expect(after).toMatchObject({ status: 'submitted', attempts: 2, provider_reference: expect.stringMatching(/^sbx_tr_/) });
    expect(after!.run_id).toBeNull();
    await deliverConfirmations(c);
    expect(await sandboxPayouts(c, transfer.id)).toHaveLength(1);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ in_transfer_cents: 0, paid_cents: 4500, payable_cents: 1800 });
    // And the money that waited is paid by the run after.
    await c.app.transfers.run(false);
    await deliverConfirmations(c);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ in_transfer_cents: 0, paid_cents: 6300, payable_cents: 0 });
  });
});

describe('a transfer whose outcome is unknown', () => {
  it('becomes reconciliation_required when the answer is lost; the next run asks the provider and records it paid, paying once', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c, 'timeout');
    const first = await c.app.transfers.run(false);
    expect(first.reconciliation_required).toBeGreaterThanOrEqual(1);
    const [t] = await transfersOf(c, co);
    expect(t).toMatchObject({ status: 'reconciliation_required', failure_reason: expect.stringMatching(/no answer in time/), run_id: null });
    expect(await sandboxPayouts(c, t!.id)).toHaveLength(1);
    // Not asked again by every run in a row: the first run after the lease asks.
    expect((await c.app.transfers.run(false)).resumed.map((r) => r.transfer_id)).not.toContain(t!.id);
    await expireLease(c, t!.id);

    const second = await c.app.transfers.run(false);
    expect(second.resumed).toContainEqual({ transfer_id: t!.id, agreement_id: co, currency: 'usd', status: 'paid' });
    expect((await transfersOf(c, co))[0]).toMatchObject({ status: 'paid', failure_reason: null });
    // The provider's own confirmation, arriving afterwards, changes nothing.
    await deliverConfirmations(c);
    expect(await sandboxPayouts(c, t!.id)).toHaveLength(1);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ in_transfer_cents: 0, paid_cents: 4500, payable_cents: 0 });
  });

  it('is submitted again with the same key while the provider has no record of it, never paying twice', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c, 'lost');
    await c.app.transfers.run(false);
    await expireLease(c, (await transfersOf(c, co))[0]!.id);
    const second = await c.app.transfers.run(false);
    const [t] = await transfersOf(c, co);
    expect(second.resumed).toContainEqual({ transfer_id: t!.id, agreement_id: co, currency: 'usd', status: 'reconciliation_required' });
    expect(t).toMatchObject({ status: 'reconciliation_required', attempts: 2, failure_reason: expect.stringMatching(/never arrived/) });

    expect(await sandboxPayouts(c, t!.id)).toEqual([]);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ in_transfer_cents: 4500, paid_cents: 0, payable_cents: 0 });
  });
});

describe('a submitted transfer whose confirmation never came', () => {
  it('is settled by the first run after its wait, on the provider’s word', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c);
    await c.app.transfers.run(false);
    const [t] = await transfersOf(c, co);
    expect(t).toMatchObject({ status: 'submitted' });
    expect(t!.lease_until!.getTime()).toBeGreaterThan(Date.now());
    // The provider's webhook is lost.
    const reports = await listJobs(c.database.db, { job: ProviderConfirmJob });
    await discardJobs(c.database.db, reports.filter((j) => (j.payload as { transferId: number }).transferId === t!.id).map((j) => j.id));
    expect((await c.app.transfers.run(false)).resumed.map((r) => r.transfer_id)).not.toContain(t!.id);

    await expireLease(c, t!.id);
    const later = await c.app.transfers.run(false);
    expect(later.resumed).toContainEqual({ transfer_id: t!.id, agreement_id: co, currency: 'usd', status: 'paid' });
    expect(await sandboxPayouts(c, t!.id)).toHaveLength(1);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ in_transfer_cents: 0, paid_cents: 4500 });
  });
});

describe.runIf(onPostgres)('racing payout runs on PostgreSQL', () => {
  it('take a dead run’s transfer over once and pay it once', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c);
    const transfer = await stalledRun(c, co);
    await expireLease(c, transfer.id);
    const runs = await Promise.all(Array.from({ length: 6 }, () => c.app.transfers.run(false)));
    const takers = runs.filter((r) => r.resumed.some((x) => x.transfer_id === transfer.id));
    expect(takers).toHaveLength(1);
    const [after] = await transfersOf(c, co);
    // One claim beyond the dead run's own; one payout at the provider.
    expect(after).toMatchObject({ status: 'submitted', attempts: 2 });
    expect(await sandboxPayouts(c, transfer.id)).toHaveLength(1);
    await deliverConfirmations(c);
    expect((await accounting(c, ws, co)).partner).toMatchObject({ paid_cents: 4500, in_transfer_cents: 0 });
  });
});
