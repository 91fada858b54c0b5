import type { Migration } from 'kysely/migration';
import * as m0001 from './20261122_0001_foundation.js';

/** Append-only: add each new migration here; never edit a landed one. */
export const migrations: Record<string, Migration> = {
  '20261122_0001_foundation': m0001,
};
