import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PgBoss, fromKysely } from 'pg-boss';
const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }) }) });
const b = new PgBoss({ db: fromKysely(db) as any, schema: 'spike_pgboss' } as any);
await b.start();
await b.work(process.argv[2]!, { pollingIntervalSeconds: 0.5 }, async () => { console.log('claimed'); await new Promise((r) => setTimeout(r, 600_000)); });
