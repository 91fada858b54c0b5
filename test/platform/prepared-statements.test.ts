import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { PREPARE_AFTER_USES, PREPARED_PER_CONNECTION } from '../../src/platform/db/prepared-statements.js';
import { onPostgres } from '../helpers/app.js';

const opened: Database[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!.close();
});

/** One connection, so every statement and pg_prepared_statements see the same session. */
async function open(preparedStatements?: boolean): Promise<Database> {
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: null, poolSize: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
  opened.push(database);
  return database;
}

const preparedNames = async (database: Database) =>
  (await sql<{ name: string }>`select name from pg_prepared_statements where name like 'pb\\_%' order by name`.execute(database.db)).rows.map((r) => r.name);

describe.skipIf(!onPostgres)('prepared statements (PostgreSQL)', () => {
  it('names a parametrised statement once it ran three times, and answers as before', async () => {
    const database = await open();
    const answers: number[] = [];
    for (let i = 1; i <= PREPARE_AFTER_USES + 2; i++) {
      if (i === PREPARE_AFTER_USES) expect(await preparedNames(database)).toEqual([]);
      answers.push((await sql<{ n: number }>`select ${i}::int + 1 as n`.execute(database.db)).rows[0]!.n);
    }
    expect(answers).toEqual([2, 3, 4, 5, 6]);
    const names = await preparedNames(database);
    expect(names).toHaveLength(1);
    // A statement without parameters goes the simple protocol, named never.
    for (let i = 0; i < 5; i++) await sql`select 1`.execute(database.db);
    expect(await preparedNames(database)).toEqual(names);
  });

  it('names nothing when turned off (DB_PREPARED_STATEMENTS=0)', async () => {
    const database = await open(false);
    for (let i = 0; i < 5; i++) await sql`select ${i}::int as n`.execute(database.db);
    expect(await preparedNames(database)).toEqual([]);
  });

  it('keeps at most its limit of names per connection; texts past it still run, unnamed', async () => {
    const database = await open();
    // Texts that differ without end, as an insert of n rows does.
    for (let text = 0; text < PREPARED_PER_CONNECTION + 20; text++) {
      for (let use = 0; use < PREPARE_AFTER_USES; use++) {
        const row = (await sql<{ n: number }>`select ${text}::int + ${sql.lit(text)} as n`.execute(database.db)).rows[0]!;
        expect(row.n).toBe(2 * text);
      }
    }
    expect(await preparedNames(database)).toHaveLength(PREPARED_PER_CONNECTION);
  });

  it('keeps answering after a table its statement reads changed shape', async () => {
    const database = await open();
    await sql`create temporary table prepared_probe (id int)`.execute(database.db);
    await sql`insert into prepared_probe values (1), (2)`.execute(database.db);
    for (let i = 0; i < 5; i++) await sql`select id from prepared_probe where id >= ${1} order by id`.execute(database.db);
    await sql`create index on prepared_probe (id)`.execute(database.db);
    await sql`alter table prepared_probe add column note text`.execute(database.db);
    const rows = (await sql<{ id: number }>`select id from prepared_probe where id >= ${1} order by id`.execute(database.db)).rows;
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
  });
});
