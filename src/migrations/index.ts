import type { Migration } from 'kysely/migration';
import * as m0001 from './20261122_0001_foundation.js';
import * as m0002 from './20261122_0002_serials_licensing.js';
import * as m0003 from './20261122_0003_customer_list_version.js';
import * as m0004 from './20261122_0004_search_statistics.js';
import * as m0005 from './20261122_0005_serial_index_tuning.js';
import * as m0006 from './20261122_0006_purchases.js';

/** Append-only: add each new migration here; never edit a landed one. */
export const migrations: Record<string, Migration> = {
  '20261122_0001_foundation': m0001,
  '20261122_0002_serials_licensing': m0002,
  '20261122_0003_customer_list_version': m0003,
  '20261122_0004_search_statistics': m0004,
  '20261122_0005_serial_index_tuning': m0005,
  '20261122_0006_purchases': m0006,
};
