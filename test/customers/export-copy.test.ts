import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { exportCustomers, exportCustomersQuery } from '../../src/modules/customers/customers.service.js';
import { scopeOfMember } from '../../src/platform/auth/policy.js';
import { copyCsv, CrlfRecords } from '../../src/platform/csv/copy-out.js';
import { bearer, onPostgres, seedWorkspace, useTestApp } from '../helpers/app.js';

const ctx = useTestApp();

const text = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
};

// Names a spreadsheet would execute, names a CSV must quote, names that sort differently by locale, and no names.
const NAMES = ['=SUM(1)', '+x', '-y', '@z', '\tTab', '\rReturn', 'has, comma', 'has "quote"', 'line\nbreak', 'crlf\r\nbreak', 'Zoë', 'émile', '日本', "'quoted", ' space', '\\.'];

describe.skipIf(!onPostgres)('customer export through COPY (PostgreSQL)', () => {
  it('writes byte for byte what the batch path writes, for every filter and scope', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [{ key: 'scoped', permissions: ['customers.view'], products: ['p1'] }],
      customers: NAMES.map((name, i) => ({
        firstName: name,
        lastName: i % 3 === 0 ? undefined : NAMES[(i + 5) % NAMES.length],
        products: [['p1', 'p2'], ['p2'], [], ['p1'], ['p3', 'p2', 'p1']][i % 5],
      })),
    });
    const { db } = ctx().database;
    // Product names that need quoting and neutralising, and whose order differs between a locale and code points.
    const names: Record<string, string> = { p1: 'b Ünïcode, "q"', p2: 'A upper', p3: '=formula' };
    for (const [key, name] of Object.entries(names)) {
      await db.updateTable('products').set({ name: `${name} ${ws.suffix}` }).where('id', '=', ws.ids.products[key]!).execute();
    }
    // Microseconds, which the export cuts to milliseconds as JavaScript's Date does.
    await sql`update developer_customers set created_at = created_at - (id % 997) * interval '1.234567 ms' where workspace_id = ${ws.workspaceId}`.execute(db);

    const queries = [{}, { search: 'comma' }, { productId: ws.ids.products.p2 }, { search: 'e', productId: ws.ids.products.p1 }, { search: 'nothing matches this' }];
    for (const [member, token] of [['owner', ws.owner], ['scoped', ws.tokens.scoped!]] as const) {
      const scope = (await scopeOfMember(db, ws.ids.accounts[member]!, ws.workspaceId))!;
      for (const query of queries) {
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        const res = await ctx().app.inject({ method: 'GET', url: `/api/developer/customers/export?${qs}`, headers: bearer(token) });
        expect(res.statusCode).toBe(200);
        const batch = await text(exportCustomers(db, scope, query));
        expect(res.body, `${member} ${qs}`).toBe(batch);
      }
    }
    // The comparison compared something: every name is in the owner's file.
    const all = (await ctx().app.inject({ method: 'GET', url: '/api/developer/customers/export', headers: bearer(ws.owner) })).body;
    expect(all.split('\r\n').length).toBeGreaterThan(NAMES.length);
    expect(all).toContain("'=SUM(1)");
  });

  it('releases its connection when the reader goes away half-way, and the pool stays whole', async () => {
    const ws = await seedWorkspace(ctx());
    const customers = Array.from({ length: 3_000 }, (_, i) => ({ email: `copy${i}@x.test`, firstName: `First name ${i}`, lastName: `Last name ${i}` }));
    expect((await ctx().app.inject({ method: 'POST', url: '/api/developer/customers/import', headers: bearer(ws.owner), payload: { customers } })).statusCode).toBe(201);
    const { db, pool } = ctx().database;
    const scope = (await scopeOfMember(db, ws.ids.accounts.owner!, ws.workspaceId))!;
    // More abandoned exports than the pool has connections: a leaked connection would make a later one wait forever.
    for (let i = 0; i < 12; i++) {
      const stream = copyCsv(pool!, ['id'], exportCustomersQuery(db, scope, {}));
      let chunks = 0;
      // The header, then the first piece of the COPY: the rest is still on the connection when the reader leaves.
      for await (const _ of stream) if (++chunks === 2) break;
      expect(chunks).toBe(2);
    }
    const complete = await text(copyCsv(pool!, ['id'], exportCustomersQuery(db, scope, {})));
    expect(complete.split('\r\n').filter(Boolean)).toHaveLength(3_001);
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one).toBe(1);
  });
});

describe('CRLF at record ends', () => {
  it('turns LF outside quotes into CRLF, keeps line breaks inside quoted fields, across chunk boundaries', async () => {
    const input = 'a,"x\ny"\nb,"q""\n"\n';
    const pieces = input.split('').map((c) => Buffer.from(c));
    expect(await text(Readable.from(pieces).pipe(new CrlfRecords()))).toBe('a,"x\ny"\r\nb,"q""\n"\r\n');
  });
});
