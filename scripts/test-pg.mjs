#!/usr/bin/env node
// Runs the whole test suite against a real PostgreSQL server in a fresh database.
// PG_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres);
// the server is started with pg_ctlcluster when it is local and not running.
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';

const serverUrl = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function connect() {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  return client;
}

async function ensureServer() {
  try {
    return await connect();
  } catch (error) {
    if (!fs.existsSync('/etc/postgresql')) throw error;
    const version = fs.readdirSync('/etc/postgresql')[0];
    console.error(`PostgreSQL not reachable (${error.message}); starting cluster ${version}/main`);
    execSync(`pg_ctlcluster --skip-systemctl-redirect ${version} main start`, { stdio: 'inherit' });
    for (let i = 0; i < 30; i++) {
      try {
        return await connect();
      } catch {
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    throw new Error('PostgreSQL did not come up');
  }
}

const admin = await ensureServer();
const name = `patchbay_test_${Date.now()}_${process.pid}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
console.error(`Running the suite on PostgreSQL database ${name}`);
const result = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: url.toString() },
});
if (!process.env.KEEP_TEST_DB) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
await admin.end();
process.exit(result.status ?? 1);
