import { describe, expect, it } from 'vitest';
import { unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import type { PayoutRunResult } from '../../src/modules/ledger/transfers.service.js';
import { jobQueueName } from '../../src/platform/jobs/queue.js';
import { buildTestApp, onPostgres, type TestContext } from '../helpers/app.js';
import { childEnv, migratedDataDir, spawnTracked } from '../helpers/process.js';
import { accounting, CHECKOUT_SECRET, payablePartner, privateDatabaseUrl, sandboxPayouts, sell, transfersOf } from './partner-money.js';

// kill -9 of a real `patchbay payouts run` at each step of a transfer, through the test-only
// fault hook PATCHBAY_TEST_CRASH_AT (src/modules/ledger/crash-points.ts), which makes the process
// SIGKILL itself at the named step for the named agreement. After each crash: the ledger is
// balanced, the next run after the lease finishes the transfer, the provider paid exactly once,
// and the agreement's next payout is not blocked. On the embedded database (a data directory the
// test and the CLI open in turn) and, under DATABASE_URL, on PostgreSQL.

const LEASE_SECONDS = 3;
/** On PostgreSQL, this file's own database: a run of another test file would pay the partners here before the CLI crashes on them. */
const databaseUrl = await privateDatabaseUrl('payout_crash');

const STEPS = [
  { step: 'transfer-reserved', leftAs: 'reserved', paidByProvider: 0, afterNextRun: 'submitted' },
  { step: 'transfer-provider-accepted', leftAs: 'reserved', paidByProvider: 1, afterNextRun: 'paid' },
  { step: 'transfer-submitted', leftAs: 'submitted', paidByProvider: 1, afterNextRun: 'paid' },
] as const;

/** The test's view of the database: while the CLI runs, the embedded database must be closed (one process at a time). */
class Database {
  private c: TestContext | undefined;
  constructor(private readonly dir: string) {}

  async open(): Promise<TestContext> {
    this.c ??= await buildTestApp({ dataDir: this.dir, checkout: { webhookSecrets: [CHECKOUT_SECRET] }, jobs: { run: false }, ...(databaseUrl ? { databaseUrl } : {}) });
    return this.c;
  }

  /** Gives the embedded database to a child process; PostgreSQL stays open. */
  async handOver(): Promise<void> {
    if (onPostgres || !this.c) return;
    await this.c.app.close();
    await this.c.database.close();
    this.c = undefined;
  }

  async close(): Promise<void> {
    if (!this.c) return;
    await this.c.app.close();
    await this.c.database.close();
    this.c = undefined;
  }
}

async function payoutRun(dir: string, extra: Record<string, string> = {}) {
  const env = childEnv(dir, {
    JOBS_QUEUE: jobQueueName(),
    PAYOUT_TRANSFER_LEASE_SECONDS: String(LEASE_SECONDS),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...extra,
  });
  return spawnTracked(['bin/patchbay.js', 'payouts', 'run'], env).outcome;
}

async function deliverConfirmations(c: TestContext) {
  c.app.jobs.start();
  await c.app.jobs.idle();
  await c.app.jobs.stop();
}

const sleepUntil = (at: Date) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at.getTime() - Date.now() + 250)));

describe('patchbay payouts run killed with SIGKILL', () => {
  it.each(STEPS)('at $step: the next run after the lease finishes the transfer, paid once, nothing blocked', { timeout: 480_000 }, async ({ step, leftAs, paidByProvider, afterNextRun }) => {
    const dir = await migratedDataDir('patchbay-payout-crash-');
    const database = new Database(dir);
    try {
      let c = await database.open();
      const { ws, co } = await payablePartner(c);
      await database.handOver();

      const crashed = await payoutRun(dir, { PATCHBAY_TEST_CRASH_AT: `${step}:${co}` });
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      expect(crashed.stdout).toBe('');

      c = await database.open();
      expect(await unbalancedTransactions(c.database.db)).toEqual([]);
      const [left] = await transfersOf(c, co);
      expect(left).toMatchObject({ status: leftAs, amount: '4500', attempts: 1 });
      expect(await sandboxPayouts(c, left!.id)).toHaveLength(paidByProvider);
      expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 0, in_transfer_cents: 4500, paid_cents: 0 });

      // The lease of the dead run (or, once submitted, the wait for the provider's confirmation) runs out.
      await sleepUntil(left!.lease_until!);
      await database.handOver();
      const next = await payoutRun(dir);
      expect(next.code, next.stderr).toBe(0);
      const result = JSON.parse(next.stdout) as PayoutRunResult;
      expect(result.resumed).toContainEqual({ transfer_id: left!.id, agreement_id: co, currency: 'usd', status: afterNextRun });
      c = await database.open();
      expect((await transfersOf(c, co))[0]).toMatchObject({ id: left!.id, status: afterNextRun, attempts: 2 });
      // The provider's confirmations (the one the dead run caused too) settle what is left, once.
      await deliverConfirmations(c);
      expect((await transfersOf(c, co)).map((t) => [t.id, t.status])).toEqual([[left!.id, 'paid']]);
      expect(await sandboxPayouts(c, left!.id)).toEqual([{ amount: '4500', outcome: 'paid' }]);
      expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 0, in_transfer_cents: 0, paid_cents: 4500 });

      // The agreement's next payout in that currency goes through.
      await sell(c, ws, 'p1', 4000);
      await c.app.transfers.run(false);
      await deliverConfirmations(c);
      expect((await transfersOf(c, co)).map((t) => t.status)).toEqual(['paid', 'paid']);
      expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 0, in_transfer_cents: 0, paid_cents: 6300 });
      expect(await unbalancedTransactions(c.database.db)).toEqual([]);
    } finally {
      await database.close();
    }
  });
});
