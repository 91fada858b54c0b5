// Spike: graphile-worker 0.18 on PGlite served over pglite-socket (multiplexed), and on PostgreSQL.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { run, makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';

async function trial(label, connectionString) {
  const t0 = Date.now();
  const pool = new pg.Pool({ connectionString, max: 4 });
  const seen = [];
  try {
    const runner = await run({ pgPool: pool, concurrency: 2, noHandleSignals: true, pollInterval: 500, taskList: { hello: async (p) => void seen.push(p) } });
    console.log(label, 'started in', Date.now() - t0, 'ms');
    // Outbox: add_job inside the caller's transaction.
    const c = await pool.connect();
    await c.query('begin'); await c.query(`select graphile_worker.add_job('hello', '{"n":"rb"}'::json)`); await c.query('rollback');
    await c.query('begin'); await c.query(`select graphile_worker.add_job('hello', '{"n":"ok"}'::json)`); await c.query('commit');
    c.release();
    await new Promise((r) => setTimeout(r, 2000));
    console.log(label, 'ran', seen);
    await runner.stop();
  } catch (e) { console.log(label, 'FAILED:', e.message); }
  await pool.end().catch(() => {});
}

const pglite = await PGlite.create();
const server = new PGLiteSocketServer({ db: pglite, port: 54329, host: '127.0.0.1', maxConnections: 8 });
await server.start();
await Promise.race([trial('pglite-socket', 'postgres://postgres@127.0.0.1:54329/postgres?sslmode=disable'), new Promise((r) => setTimeout(() => { console.log('pglite-socket: no answer in 60 s'); r(); }, 60_000))]);
await server.stop();
await trial('postgres', 'postgres://postgres@127.0.0.1:5432/test');
process.exit(0);
