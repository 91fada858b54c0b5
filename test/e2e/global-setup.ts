import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A fresh PostgreSQL database of this run (dropped afterwards). */
    e2eDatabaseUrl: string;
    /** The front end's build the servers of this run serve (WEB_DIR). */
    e2eWebDir: string;
  }
}

const SERVER_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Once per run: the front end built from the current sources (a stale build would test old pages;
 * E2E_SKIP_BUILD=1 serves the existing web/dist instead), and a fresh PostgreSQL database.
 */
export default async function setup(project: TestProject) {
  // The run's own build directory: a build:web running at the same time elsewhere in the checkout cannot swap files
  // under the pages being tested.
  let webDir = path.resolve('web', 'dist');
  if (process.env.E2E_SKIP_BUILD !== '1') {
    const started = Date.now();
    webDir = mkdtempSync(path.join(os.tmpdir(), 'patchbay-e2e-web-'));
    const build = spawnSync('npm', ['run', 'build:web', '--', '--outDir', webDir], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
    if (build.status !== 0) throw new Error('npm run build:web failed');
    console.log(`e2e: front end built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  project.provide('e2eWebDir', webDir);
  // The server runs as `npm start` does; where that is a build of src/, it is brought up to date (well under a second).
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  if (scripts['build:server'] && spawnSync('npm', ['run', 'build:server'], { stdio: 'inherit' }).status !== 0) throw new Error('npm run build:server failed');
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  const name = `patchbay_e2e_${Date.now()}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  project.provide('e2eDatabaseUrl', url.toString());
  return async () => {
    if (!process.env.KEEP_TEST_DB) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    if (webDir.startsWith(os.tmpdir())) rmSync(webDir, { recursive: true, force: true });
  };
}
