// Spike: pg-boss 12 on PostgreSQL through Kysely: outbox, retries/back-off, shutdown, isolation, crash takeover.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PgBoss, fromKysely } from 'pg-boss';
import { spawn } from 'node:child_process';

const url = 'postgres://postgres@127.0.0.1:5432/test';
const pool = new pg.Pool({ connectionString: url, max: 5 });
const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
const schema = 'spike_pgboss';
const make = () => { const b = new PgBoss({ db: fromKysely(db) as any, schema } as any); b.on('error', (e: any) => console.error('boss error', e.message)); return b; };
let t0 = Date.now();
const boss = make();
await boss.start();
console.log('start', Date.now() - t0, 'ms');
const q = `p${process.pid}.retry`;
await boss.createQueue(q, { retryLimit: 3, retryDelay: 60, retryBackoff: true, retryDelayMax: 3600 });
// Outbox on PostgreSQL.
await db.transaction().execute(async (tx) => { await boss.send(q, { n: 'rb' }, { db: fromKysely(tx) as any }); throw new Error('rollback'); }).catch(() => {});
console.log('after rollback:', (await boss.findJobs(q)).length);
// Retries with back-off: run one failing job, look at startAfter.
const id = await boss.send(q, { n: 1 });
let attempts = 0;
const wid = await boss.work(q, { pollingIntervalSeconds: 0.5 }, async () => { attempts += 1; throw new Error('SMTP 451'); });
await new Promise((r) => setTimeout(r, 1500));
const j: any = await boss.getJobById(q, id!);
console.log('after 1 failure:', j.state, 'retryCount', j.retryCount, 'delay s', Math.round((j.startAfter - Date.now()) / 1000), 'output', JSON.stringify(j.output).slice(0, 200));
await boss.offWork(q);
// Shutdown while a job runs: what state does it end in?
const q2 = `p${process.pid}.shutdown`;
await boss.createQueue(q2, { retryLimit: 3 });
const id2 = await boss.send(q2, {});
await boss.work(q2, { pollingIntervalSeconds: 0.5 }, async () => new Promise((r) => setTimeout(r, 10_000)));
await new Promise((r) => setTimeout(r, 1500));
t0 = Date.now();
await boss.stop({ graceful: true, timeout: 500 });
const j2: any = await (async () => { const b = make(); await b.start(); const x = await b.getJobById(q2, id2!); await b.stop({ graceful: false }); return x; })();
console.log('after stop (timeout 500ms):', j2.state, 'retryCount', j2.retryCount, 'startAfter in s', Math.round((j2.startAfter - Date.now()) / 1000), JSON.stringify(j2.output));
// Crash: a child process claims a job with a 10 s heartbeat and is killed; this process takes it over.
const b3 = make(); await b3.start();
const q3 = `p${process.pid}.crash`;
await b3.createQueue(q3, { retryLimit: 3, heartbeatSeconds: 10, expireInSeconds: 3600 });
const id3 = await b3.send(q3, {});
const child = spawn(process.execPath, ['--import', 'tsx', 'pg-boss-child.ts', q3], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((r) => child.stdout.on('data', (d) => { if (String(d).includes('claimed')) r(); }));
child.kill('SIGKILL');
t0 = Date.now();
let took = 0;
await b3.work(q3, { pollingIntervalSeconds: 0.5 }, async ([job]: any) => { took = Date.now() - t0; return { retry: job.retryCount }; });
for (let i = 0; i < 120 && !took; i++) await new Promise((r) => setTimeout(r, 500));
console.log('taken over after', took, 'ms', (await b3.getJobById(q3, id3!) as any)?.state);
await b3.stop({ graceful: false });
await db.destroy();
