// Spike: pg-boss 12 on PGlite running in a worker thread behind our Kysely dialect.
import { Kysely, sql } from 'kysely';
import { PgBoss, fromKysely } from 'pg-boss';
import { PGliteThread, PGliteThreadDialect } from './pg/pglite-thread.ts';

const t0 = Date.now();
const thread = await PGliteThread.start({ location: 'memory://' });
const db = new Kysely<any>({ dialect: new PGliteThreadDialect(thread) });
const boss = new PgBoss({ db: fromKysely(db) as any, backend: 'pglite', schema: 'pgboss' } as any);
boss.on('error', (e: any) => console.error('boss error', e.message));
boss.on('warning', (e: any) => console.error('boss warning', e.message));
await boss.start();
console.log('started in', Date.now() - t0, 'ms');
await boss.createQueue('q1', { retryLimit: 2, retryDelay: 1, heartbeatSeconds: 10, expireInSeconds: 3600 });
await sql`create table t (x int)`.execute(db);
// Outbox: a job sent inside a transaction that rolls back does not exist.
await db.transaction().execute(async (tx) => {
  await sql`insert into t values (1)`.execute(tx);
  await boss.send('q1', { n: 'committed' }, { db: fromKysely(tx) as any });
});
await db.transaction().execute(async (tx) => {
  await boss.send('q1', { n: 'rolled back' }, { db: fromKysely(tx) as any });
  throw new Error('rollback');
}).catch((e) => console.log('tx:', e.message));
console.log('queued:', (await boss.findJobs('q1')).map((j: any) => j.data));
const seen: unknown[] = [];
await boss.work('q1', { pollingIntervalSeconds: 0.5 }, async ([job]: any) => { seen.push(job.data); return { ok: true }; });
await new Promise((r) => setTimeout(r, 1500));
console.log('ran:', seen);
// A handler that holds the only connection (a long transaction) for 25 s, longer than two heartbeats.
await boss.createQueue('long', { retryLimit: 2, heartbeatSeconds: 10, expireInSeconds: 3600 });
const runs: string[] = [];
await boss.work('long', { pollingIntervalSeconds: 0.5 }, async ([job]: any) => {
  runs.push(`start retry=${job.retryCount ?? '?'}`);
  await db.transaction().execute(async (tx) => { await sql`select pg_sleep(25)`.execute(tx); });
  runs.push('end');
  return { long: true };
});
const longId = await boss.send('long', {});
await new Promise((r) => setTimeout(r, 40_000));
console.log('long runs:', runs, (await boss.getJobById('long', longId!)) ?.state);
await boss.stop({ graceful: true, timeout: 2000 });
await db.destroy();
