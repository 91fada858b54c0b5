import { type Kysely, sql } from 'kysely';

// Partner money. The ledger is double-entry and append-only: every transaction's entries sum to
// zero per currency, checked by a deferred constraint trigger at commit, so no service bug can
// commit unbalanced money; entries and transactions reject UPDATE and DELETE. Allocations keep
// each sale's original split (the saved shares that refunds reverse). Amounts are bigint minor
// units throughout.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE checkout_events (
      id text PRIMARY KEY,
      type text NOT NULL,
      workspace_id integer,
      outcome text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  // Refunds find a managed-checkout item by the checkout's order id and product.
  await sql`CREATE INDEX order_items_checkout_idx ON order_items (workspace_id, external_reference, product_id) WHERE channel = 'managed_checkout'`.execute(db);

  await sql`
    CREATE TABLE partner_allocations (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id),
      order_item_id integer NOT NULL,
      product_id integer NOT NULL,
      currency char(3) NOT NULL CHECK (currency = lower(currency)),
      basis text NOT NULL CHECK (basis IN ('managed', 'external')),
      proceeds bigint NOT NULL CHECK (proceeds >= 0),
      platform_fee bigint NOT NULL CHECK (platform_fee >= 0),
      processing_fee bigint NOT NULL CHECK (processing_fee >= 0),
      refunded bigint NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= proceeds),
      referral_agreement_id integer,
      referral_visited_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, order_item_id),
      UNIQUE (workspace_id, id),
      FOREIGN KEY (workspace_id, order_item_id) REFERENCES order_items(workspace_id, id)
    )`.execute(db);
  await sql`CREATE INDEX partner_allocations_list_idx ON partner_allocations (workspace_id, id DESC)`.execute(db);

  await sql`
    CREATE TABLE partner_allocation_parts (
      allocation_id bigint NOT NULL,
      workspace_id integer NOT NULL,
      position smallint NOT NULL,
      party text NOT NULL CHECK (party IN ('platform', 'processing', 'developer', 'affiliate', 'collaborator')),
      agreement_id integer,
      rate_bps integer CHECK (rate_bps BETWEEN 0 AND 10000),
      amount bigint NOT NULL CHECK (amount >= 0),
      reversed bigint NOT NULL DEFAULT 0 CHECK (reversed >= 0 AND reversed <= amount),
      PRIMARY KEY (allocation_id, position),
      CHECK ((party IN ('affiliate', 'collaborator')) = (agreement_id IS NOT NULL)),
      FOREIGN KEY (workspace_id, allocation_id) REFERENCES partner_allocations(workspace_id, id),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id)
    )`.execute(db);
  await sql`CREATE INDEX partner_allocation_parts_agreement_idx ON partner_allocation_parts (workspace_id, agreement_id, allocation_id DESC) WHERE agreement_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE partner_transfers (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id),
      agreement_id integer NOT NULL,
      recipient_id integer NOT NULL REFERENCES recipients(id),
      destination_id integer NOT NULL,
      provider text NOT NULL,
      livemode boolean NOT NULL,
      currency char(3) NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      status text NOT NULL CHECK (status IN ('reserved', 'submitted', 'paid', 'failed', 'reconciliation_required')),
      provider_reference text,
      failure_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      submitted_at timestamptz,
      settled_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id),
      FOREIGN KEY (workspace_id, agreement_id) REFERENCES partner_agreements(workspace_id, id)
    )`.execute(db);
  await sql`CREATE INDEX partner_transfers_workspace_idx ON partner_transfers (workspace_id, id DESC)`.execute(db);
  await sql`CREATE INDEX partner_transfers_recipient_idx ON partner_transfers (recipient_id, id DESC)`.execute(db);
  // One transfer in flight per agreement and currency: a second payout run cannot reserve the same balance twice.
  await sql`CREATE UNIQUE INDEX partner_transfers_in_flight ON partner_transfers (agreement_id, currency) WHERE status IN ('reserved', 'submitted', 'reconciliation_required')`.execute(db);

  await sql`
    CREATE TABLE ledger_transactions (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id),
      kind text NOT NULL CHECK (kind IN ('sale', 'refund', 'release', 'transfer_reserved', 'transfer_paid', 'transfer_failed')),
      allocation_id bigint,
      agreement_id integer,
      transfer_id bigint,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX ledger_transactions_workspace_idx ON ledger_transactions (workspace_id, id DESC)`.execute(db);

  await sql`
    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      transaction_id bigint NOT NULL REFERENCES ledger_transactions(id),
      workspace_id integer NOT NULL,
      account text NOT NULL CHECK (account IN (
        'checkout_clearing', 'platform_share', 'developer_earnings', 'partner_pending', 'partner_payable',
        'partner_recovery', 'external_estimate', 'external_offset', 'transfer_in_flight', 'paid_out')),
      agreement_id integer,
      recipient_id integer,
      currency char(3) NOT NULL CHECK (currency = lower(currency)),
      amount bigint NOT NULL CHECK (amount <> 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((account IN ('partner_pending', 'partner_payable', 'partner_recovery', 'external_estimate', 'transfer_in_flight', 'paid_out')) = (agreement_id IS NOT NULL))
    )`.execute(db);
  await sql`CREATE INDEX ledger_entries_transaction_idx ON ledger_entries (transaction_id)`.execute(db);
  // Balances are sums of entries; the INCLUDE lets a balance be summed from the index alone.
  await sql`CREATE INDEX ledger_entries_balance_idx ON ledger_entries (workspace_id, account, agreement_id, currency) INCLUDE (amount)`.execute(db);
  await sql`CREATE INDEX ledger_entries_recipient_idx ON ledger_entries (recipient_id, agreement_id, account, currency) INCLUDE (amount) WHERE recipient_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX ledger_transactions_allocation_idx ON ledger_transactions (allocation_id) WHERE allocation_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX ledger_transactions_refunds_idx ON ledger_transactions (workspace_id, id DESC) WHERE kind = 'refund'`.execute(db);
  await sql`CREATE INDEX ledger_entries_agreement_idx ON ledger_entries (agreement_id, account, currency) INCLUDE (amount) WHERE agreement_id IS NOT NULL`.execute(db);

  await sql`
    CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
    END $$`.execute(db);
  await sql`CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`.execute(db);
  await sql`CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`.execute(db);
  await sql`CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only()`.execute(db);
  await sql`CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only()`.execute(db);

  // Checked at commit, once the whole transaction is written: its entries sum to zero per currency.
  await sql`
    CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      unbalanced record;
    BEGIN
      SELECT currency, sum(amount) AS total INTO unbalanced
        FROM ledger_entries WHERE transaction_id = NEW.transaction_id
        GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % does not balance in %: off by %', NEW.transaction_id, unbalanced.currency, unbalanced.total
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS order_items_checkout_idx`.execute(db);
  for (const table of ['ledger_entries', 'ledger_transactions', 'partner_transfers', 'partner_allocation_parts', 'partner_allocations', 'checkout_events']) {
    await sql`DROP TABLE IF EXISTS ${sql.raw(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS ledger_check_balanced()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS ledger_append_only()`.execute(db);
}
