import type { Migration } from 'kysely';
import * as m0001 from './20261122_0001_foundation.js';
import * as m0002 from './20261122_0002_serials_licensing.js';
import * as m0003 from './20261122_0003_customer_list_version.js';
import * as m0004 from './20261122_0004_search_statistics.js';
import * as m0005 from './20261122_0005_serial_index_tuning.js';
import * as m0006 from './20261122_0006_purchases.js';
import * as m0007 from './20261124_0007_workspace_customer_identity.js';
import * as m0008 from './20261124_0008_serial_search_index.js';
import * as m0009 from './20261124_0009_jobs.js';
import * as m0010 from './20261124_0010_idempotency_keys.js';
import * as m0011 from './20261124_0011_imports.js';
import * as m0012 from './20261124_0012_products.js';
import * as m0013 from './20261124_0013_packages.js';
import * as m0014 from './20261124_0014_partners.js';
import * as m0015 from './20261124_0015_ledger.js';
import * as m0016 from './20261124_0016_referrals.js';
import * as m0017 from './20261124_0017_payouts.js';
import * as m0018 from './20261124_0018_transfer_leases.js';
import * as m0019 from './20261124_0019_email_references.js';
import * as m0020 from './20261124_0020_checkout_event_digest.js';
import * as m0021 from './20261124_0021_developer_accounts.js';
import * as m0022 from './20261124_0022_customer_portal.js';
import * as m0023 from './20261124_0023_webhooks.js';
import * as m0024 from './20261124_0024_checkout_connections.js';
import * as m0025 from './20261125_0025_webhook_events_queue.js';
import * as m0026 from './20261125_0026_ledger_balance_snapshots.js';
import * as m0027 from './20261125_0027_counter_deltas.js';
import * as m0028 from './20261125_0028_purchase_list_version.js';
import * as m0029 from './20261125_0029_folded_counter_checks.js';
import * as m0030 from './20261125_0030_product_customer_counts.js';
import * as m0031 from './20261207_0031_import_uploads.js';

/** Append-only: add each new migration here; never edit a landed one. */
export const migrations: Record<string, Migration> = {
  '20261122_0001_foundation': m0001,
  '20261122_0002_serials_licensing': m0002,
  '20261122_0003_customer_list_version': m0003,
  '20261122_0004_search_statistics': m0004,
  '20261122_0005_serial_index_tuning': m0005,
  '20261122_0006_purchases': m0006,
  '20261124_0007_workspace_customer_identity': m0007,
  '20261124_0008_serial_search_index': m0008,
  '20261124_0009_jobs': m0009,
  '20261124_0010_idempotency_keys': m0010,
  '20261124_0011_imports': m0011,
  '20261124_0012_products': m0012,
  '20261124_0013_packages': m0013,
  '20261124_0014_partners': m0014,
  '20261124_0015_ledger': m0015,
  '20261124_0016_referrals': m0016,
  '20261124_0017_payouts': m0017,
  '20261124_0018_transfer_leases': m0018,
  '20261124_0019_email_references': m0019,
  '20261124_0020_checkout_event_digest': m0020,
  '20261124_0021_developer_accounts': m0021,
  '20261124_0022_customer_portal': m0022,
  '20261124_0023_webhooks': m0023,
  '20261124_0024_checkout_connections': m0024,
  '20261125_0025_webhook_events_queue': m0025,
  '20261125_0026_ledger_balance_snapshots': m0026,
  '20261125_0027_counter_deltas': m0027,
  '20261125_0028_purchase_list_version': m0028,
  '20261125_0029_folded_counter_checks': m0029,
  '20261125_0030_product_customer_counts': m0030,
  '20261207_0031_import_uploads': m0031,
};
