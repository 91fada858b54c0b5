import { sql } from 'kysely';
import { expect } from 'vitest';
import { bearer, type TestContext } from '../helpers/app.js';

export const SERIALS = '/api/developer/serials';

/** A serial row as the API returns it (contract 2.3 plus the serial model's extra fields). */
export interface SerialRow {
  id: number;
  serial: string;
  product_id: number;
  product: string;
  customer_id: number | null;
  status: string;
  redeemed: boolean;
  revoked: boolean;
  active_activation_count: number;
  max_activations: number;
  remaining_activations: number;
  [field: string]: unknown;
}

/** Thin request helpers bound to a file's test app. */
export function client(ctx: () => TestContext) {
  const inject = (method: 'GET' | 'POST', token: string, url: string, payload?: unknown) =>
    ctx().app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });
  return {
    get: (token: string, url: string) => inject('GET', token, url),
    post: (token: string, url: string, payload?: unknown) => inject('POST', token, url, payload),
    /** The rows of GET /api/developer/serials with the given query string. */
    list: async (token: string, query = '') => {
      const res = await inject('GET', token, `${SERIALS}${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { rows: SerialRow[]; total: number; page: number; pageSize: number };
    },
    /** Applies a lifecycle action; returns the raw response. */
    act: (token: string, serialId: number, action: string, body?: unknown) => inject('POST', token, `${SERIALS}/${serialId}/${action}`, body),
    generate: (token: string, body: Record<string, unknown>) => inject('POST', token, `${SERIALS}/generate`, body),
    importJson: (token: string, body: Record<string, unknown>) => inject('POST', token, `${SERIALS}/import`, body),
  };
}

export { expectProblem } from '../helpers/problem.js';

/**
 * Puts `count` devices on a serial the way the licensing runtime would: active
 * rows in serial_activations and the matching counter on the serial.
 */
export async function addActivations(ctx: () => TestContext, workspaceId: number, serialId: number, count: number): Promise<void> {
  const db = ctx().database.db;
  await db
    .insertInto('serial_activations')
    .values(Array.from({ length: count }, (_, i) => ({ workspace_id: workspaceId, serial_id: serialId, machine_id: `machine-${serialId}-${i}` })))
    .execute();
  await db
    .updateTable('serials')
    .set({ active_activation_count: sql<number>`active_activation_count + ${count}` })
    .where('id', '=', serialId)
    .execute();
}

export async function activationStatuses(ctx: () => TestContext, serialId: number) {
  return ctx()
    .database.db.selectFrom('serial_activations')
    .where('serial_id', '=', serialId)
    .select(['machine_id', 'status', 'released_at', 'release_reason'])
    .orderBy('id')
    .execute();
}

export async function serialInDb(ctx: () => TestContext, serialId: number) {
  return ctx().database.db.selectFrom('serials').where('id', '=', serialId).selectAll().executeTakeFirstOrThrow();
}

/** Members used across the serial tests: read-only, write-only, product-scoped and unrelated permissions. */
export const MEMBERS = {
  viewer: { key: 'viewer', permissions: ['serials.view'], products: 'all' as const },
  manager: { key: 'manager', permissions: ['serials.manage'], products: 'all' as const },
  outsider: { key: 'outsider', permissions: ['customers.view', 'customers.manage'], products: 'all' as const },
  scoped: { key: 'scoped', permissions: ['serials.view', 'serials.manage'], products: ['p1'] },
};
