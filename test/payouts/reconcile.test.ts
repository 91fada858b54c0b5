import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { insertTransaction, unbalancedTransactions } from '../../src/modules/ledger/ledger.repo.js';
import { OperatorError } from '../../src/operator/provision.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { type TestContext, useTestApp } from '../helpers/app.js';
import { childEnv, describeOwnEmbeddedDatabase, migratedDataDir, spawnTracked } from '../helpers/process.js';
import { accounting, CHECKOUT_SECRET, payablePartner, privateDatabaseUrl, sandboxPayouts, transfersOf } from './partner-money.js';

// `patchbay payouts reconcile`: the operator's command for transfers whose outcome is unknown.
// The command's own code runs in process against the test database (both databases); exit codes
// and --help through the real CLI process.

vi.setConfig({ testTimeout: 240_000 });

const databaseUrl = await privateDatabaseUrl('reconcile');
const ctx = useTestApp({ checkout: { webhookSecrets: [CHECKOUT_SECRET] }, jobs: { run: false }, ...(databaseUrl ? { databaseUrl } : {}) });
const COMMAND = COMMANDS.find((c) => c.name === 'payouts reconcile')!;

async function reconcile(c: TestContext, values: Record<string, string | boolean>) {
  const printed: unknown[] = [];
  await COMMAND.run(
    { config: { publicBaseUrl: 'http://patchbay.test', payouts: { minimumMinorUnits: 1000 } } as never, jwt: {} as never, db: async () => c.database.db, print: (v) => printed.push(v) },
    values,
    [],
  );
  return printed[0] as Record<string, any>;
}

/** A partner whose transfer is in reconciliation_required after one run (`timeout`: the provider paid; `lost`: it never arrived). */
async function unknownOutcome(c: TestContext, tag: 'timeout' | 'lost') {
  const partner = await payablePartner(c, tag);
  await c.app.transfers.run(false);
  const [transfer] = await transfersOf(c, partner.co);
  expect(transfer).toMatchObject({ status: 'reconciliation_required' });
  return { ...partner, transfer: transfer! };
}

const auditOf = async (c: TestContext, transferId: number) =>
  (
    await sql<{ workspace_id: number; actor_account_id: number | null; action: string; data: Record<string, unknown> }>`
      select workspace_id, actor_account_id, action, data from audit_log where subject_type = 'partner_transfer' and subject_id = ${String(transferId)}`.execute(c.database.db)
  ).rows;

afterEach(async () => {
  expect(await unbalancedTransactions(ctx().database.db)).toEqual([]);
});

describe('patchbay payouts reconcile (list)', () => {
  it('lists the transfers whose outcome is unknown with their key and what the provider says, per workspace', async () => {
    const c = ctx();
    const paid = await payablePartner(c, 'timeout');
    const lost = await payablePartner(c, 'lost');
    await c.app.transfers.run(false);
    const [paidTransfer] = await transfersOf(c, paid.co);
    const [lostTransfer] = await transfersOf(c, lost.co);
    const all = await reconcile(c, {});
    expect(all.truncated).toBe(false);
    expect(all.transfers).toContainEqual(
      expect.objectContaining({ id: paidTransfer!.id, workspace_id: paid.ws.workspaceId, agreement_id: paid.co, amount_cents: 4500, currency: 'usd', status: 'reconciliation_required', idempotency_key: `patchbay-transfer-${paidTransfer!.id}`, provider_says: 'paid', attempts: 1 }),
    );
    expect(all.transfers).toContainEqual(expect.objectContaining({ id: lostTransfer!.id, provider_says: 'no_record', failure_reason: expect.stringMatching(/never arrived/) }));

    const one = await reconcile(c, { workspace: String(lost.ws.workspaceId) });
    expect(one.transfers.map((t: { id: number }) => t.id)).toEqual([lostTransfer!.id]);
    await expect(reconcile(c, { workspace: '2147483000' })).rejects.toThrow(OperatorError);
  });
});

describe('patchbay payouts reconcile --transfer', () => {
  it('returns a transfer that never reached the provider to payable, with its ledger entry and an audit record, and the next run pays it anew', async () => {
    const c = ctx();
    const { ws, co, transfer } = await unknownOutcome(c, 'lost');
    const answer = await reconcile(c, { transfer: String(transfer.id), outcome: 'returned', reason: 'provider support: no payout under this key' });
    expect(answer).toMatchObject({
      outcome: 'returned',
      provider_says: 'no_record',
      ledger_transaction_id: expect.any(Number),
      transfer: { id: transfer.id, status: 'failed', failure_reason: 'returned by the operator: provider support: no payout under this key', settled_at: expect.any(String) },
    });
    expect((await accounting(c, ws, co)).partner).toMatchObject({ payable_cents: 4500, in_transfer_cents: 0, paid_cents: 0 });
    const entries = await sql<{ account: string; amount: string }>`
      select account, amount::text from ledger_entries where transaction_id = ${answer.ledger_transaction_id} order by account`.execute(c.database.db);
    expect(entries.rows).toEqual([{ account: 'partner_payable', amount: '4500' }, { account: 'transfer_in_flight', amount: '-4500' }]);
    expect(await auditOf(c, transfer.id)).toEqual([
      {
        workspace_id: ws.workspaceId,
        actor_account_id: null,
        action: 'payouts.transfer_reconciled',
        data: expect.objectContaining({ actor: 'operator', reason: 'provider support: no payout under this key', outcome: 'returned', provider_says: 'no_record', amount_cents: 4500, ledger_transaction_id: answer.ledger_transaction_id }),
      },
    ]);

    // Settled once: again is refused, and nothing more moves.
    await expect(reconcile(c, { transfer: String(transfer.id), outcome: 'returned', reason: 'again' })).rejects.toThrow(/is failed, not reconciliation_required/);
    // Nothing is blocked: the next run reserves the balance as a new transfer (under a new key).
    await c.app.transfers.run(false);
    const after = await transfersOf(c, co);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ amount: '4500' });
    expect(after[1]!.id).not.toBe(transfer.id);
  });

  it('settles as paid what the provider paid, and refuses to return it to payable', async () => {
    const c = ctx();
    const { ws, co, transfer } = await unknownOutcome(c, 'timeout');
    await expect(reconcile(c, { transfer: String(transfer.id), outcome: 'returned', reason: 'guess' })).rejects.toThrow(/provider reports transfer \d+ paid/);
    expect((await transfersOf(c, co))[0]).toMatchObject({ status: 'reconciliation_required' });
    expect(await auditOf(c, transfer.id)).toEqual([]);

    const answer = await reconcile(c, { transfer: String(transfer.id), outcome: 'paid', reason: 'seen in the provider dashboard' });
    expect(answer).toMatchObject({ outcome: 'paid', provider_says: 'paid', transfer: { status: 'paid', provider_reference: expect.stringMatching(/^sbx_tr_/) } });
    expect((await accounting(c, ws, co)).partner).toMatchObject({ paid_cents: 4500, in_transfer_cents: 0, payable_cents: 0 });
    expect(await sandboxPayouts(c, transfer.id)).toHaveLength(1);
    // The provider's own confirmation arriving afterwards changes nothing.
    c.app.jobs.start();
    await c.app.jobs.idle();
    await c.app.jobs.stop();
    expect((await accounting(c, ws, co)).partner).toMatchObject({ paid_cents: 4500, in_transfer_cents: 0 });
  });

  it('refuses a transfer that is not waiting for reconciliation, one a run holds right now, and an unknown one', async () => {
    const c = ctx();
    const { co } = await payablePartner(c);
    await c.app.transfers.run(false);
    const [submitted] = await transfersOf(c, co);
    await expect(reconcile(c, { transfer: String(submitted!.id), outcome: 'paid', reason: 'x' })).rejects.toThrow(/is submitted, not reconciliation_required/);

    const { transfer } = await unknownOutcome(c, 'lost');
    // A run has taken it in hand (its lease is live) and may be submitting it right now.
    await sql`update partner_transfers set run_id = 'run_other', lease_until = now() + interval '1 hour' where id = ${transfer.id}`.execute(c.database.db);
    await expect(reconcile(c, { transfer: String(transfer.id), outcome: 'returned', reason: 'x' })).rejects.toThrow(/A payout run is asking the provider about transfer/);
    await expect(reconcile(c, { transfer: '2147483000', outcome: 'paid', reason: 'x' })).rejects.toThrow(/No transfer 2147483000/);
  });

  it('needs --without-provider for a transfer whose provider cannot be asked here (a live one)', async () => {
    const c = ctx();
    const { ws, co } = await payablePartner(c);
    // A live transfer whose outcome is unknown; the CLI has no live provider.
    const destination = (
      await sql<{ id: number; recipient_id: number }>`
        select d.id, d.recipient_id from payout_destinations d join partner_agreements a on a.recipient_id = d.recipient_id where a.id = ${co} and d.status = 'ready'`.execute(c.database.db)
    ).rows[0]!;
    const id = await inTransaction(c.database.db, async (tx) => {
      const inserted = await sql<{ id: number }>`
        insert into partner_transfers (workspace_id, agreement_id, recipient_id, destination_id, provider, livemode, currency, amount, status, failure_reason)
        values (${ws.workspaceId}, ${co}, ${destination.recipient_id}, ${destination.id}, 'wallet', true, 'usd', 4500, 'reconciliation_required', 'connection reset') returning id::int as id`.execute(tx);
      const transferId = inserted.rows[0]!.id;
      await insertTransaction(tx, { workspaceId: ws.workspaceId, kind: 'transfer_reserved', agreementId: co, transferId }, [
        { account: 'partner_payable', agreementId: co, recipientId: destination.recipient_id, currency: 'usd', amount: -4500n },
        { account: 'transfer_in_flight', agreementId: co, recipientId: destination.recipient_id, currency: 'usd', amount: 4500n },
      ]);
      return transferId;
    });
    await expect(reconcile(c, { transfer: String(id), outcome: 'paid', reason: 'bank statement' })).rejects.toThrow(/cannot be asked here .*--without-provider/);
    const answer = await reconcile(c, { transfer: String(id), outcome: 'paid', reason: 'bank statement', 'without-provider': true });
    expect(answer).toMatchObject({ provider_says: 'not_configured', transfer: { status: 'paid', livemode: true } });
    expect((await auditOf(c, id))[0]!.data).toMatchObject({ without_provider: true, provider_says: 'not_configured', reason: 'bank statement' });
  });

  it('refuses bad command lines before touching the database', async () => {
    const c = ctx();
    const cases: Array<[Record<string, string | boolean>, RegExp]> = [
      [{ outcome: 'paid' }, /--outcome needs --transfer/],
      [{ 'without-provider': true }, /--without-provider needs --transfer/],
      [{ transfer: '1', reason: 'x' }, /--outcome is required/],
      [{ transfer: '1', outcome: 'lost', reason: 'x' }, /--outcome must be paid or returned/],
      [{ transfer: '1', outcome: 'paid' }, /--reason is required/],
      [{ transfer: '1', outcome: 'paid', reason: '   ' }, /--reason is required/],
      [{ transfer: '1', outcome: 'paid', reason: 'x'.repeat(501) }, /at most 500/],
      [{ transfer: 'abc', outcome: 'paid', reason: 'x' }, /--transfer must be an id/],
      [{ transfer: '1', outcome: 'paid', reason: 'x', workspace: '1' }, /settling takes --transfer alone/],
      [{ workspace: '-3' }, /--workspace must be an id/],
    ];
    for (const [values, message] of cases) {
      const attempt = reconcile({ ...c, database: { ...c.database, db: undefined as never } }, values);
      await expect(attempt, JSON.stringify(values)).rejects.toThrow(UsageError);
      await expect(attempt).rejects.toThrow(message);
    }
  });
});

describeOwnEmbeddedDatabase('patchbay payouts reconcile as a process', () => {
  it('prints --help, exits 2 on a usage error and prints JSON on stdout', async () => {
    const dir = await migratedDataDir('patchbay-reconcile-');
    const env = childEnv(dir);
    const cli = (...args: string[]) => spawnTracked(['bin/patchbay.js', 'payouts', 'reconcile', ...args], env).outcome;
    const [help, usage, list] = await Promise.all([cli('--help'), cli('--transfer', '1', '--outcome', 'maybe', '--reason', 'x'), cli()]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: patchbay payouts reconcile/);
    expect(help.stdout).toContain('--without-provider');
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(usage.stderr).toMatch(/--outcome must be paid or returned/);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ transfers: [], truncated: false });
  });
});
