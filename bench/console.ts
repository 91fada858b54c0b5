/**
 * The console's customers page at volume, in a real browser: one workspace with BENCH_CUSTOMERS
 * (default 1,000,000) customers seeded as the customers target does, the front end built and
 * served by the app, and Debian's Chromium (playwright-core) driving the page as a person would.
 * Measured, BENCH_CONSOLE_RUNS times each (median and worst reported):
 *   - first rows: from `page.goto('/console/customers')` (a fresh load: HTML, scripts, the session,
 *     the list) to the first row of the table on screen; and the same after a click in the
 *     navigation (the app already loaded);
 *   - search: from typing the last character of a search to its rows on screen (the page waits
 *     for a pause in typing, SEARCH_PAUSE_MS, before it asks), for a rare and a common term.
 * Goals (issue 21): first rows ≤ 1 s after navigation, a search ≤ 500 ms.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { bannerSignInUrl } from '../src/modules/accounts/index.js';
import { seed } from './customers.js';
import { createBenchDatabase, type Figure, intEnv, log, onCleanup, openSeeding, percentile, printReport, type Report, startAppServer, writeReport } from './lib.js';
import { checkQuiet, machineInfo, revision } from './machine.js';
import { COMMON_TERM, RARE_NAME } from './names.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OWNER = 'owner@bench.patchbay.test';
const FIRST_ROWS_GOAL_MS = 1_000;
const SEARCH_GOAL_MS = 500;

interface Timings {
  median: number;
  worst: number;
  runs: number[];
}

const summary = (runs: number[]): Timings => {
  const sorted = [...runs].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), worst: sorted.at(-1)!, runs: runs.map((ms) => Math.round(ms)) };
};

/** Resolves once the customers table shows the rows of an answer whose total is `total` (its caption says so; until then the previous rows stay). */
const rowsShown = (page: Page, total: number) =>
  page.waitForFunction(
    (caption) =>
      [...document.querySelectorAll('table')].some((t) => t.querySelector('caption')?.textContent === caption && t.querySelector('tbody tr') !== null),
    `Customers (${total})`,
    { polling: 'raf', timeout: 60_000 },
  );

export async function run(): Promise<void> {
  const startedAt = new Date().toISOString();
  const total = intEnv('BENCH_CUSTOMERS', 1_000_000, 1);
  const runs = intEnv('BENCH_CONSOLE_RUNS', 7, 1);
  const poolSize = intEnv('BENCH_POOL_SIZE', 10, 1);

  log('building the front end');
  const webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-bench-web-'));
  onCleanup(() => fs.rmSync(webDir, { recursive: true, force: true }));
  if (spawnSync('npm', ['run', 'build:web', '--', '--outDir', webDir], { cwd: ROOT, stdio: 'inherit' }).status !== 0) throw new Error('npm run build:web failed');

  const bench = await createBenchDatabase('console');
  log(`database: ${bench.description}`);
  log(`seeding ${total.toLocaleString('en-US')} customers`);
  const seeding = await openSeeding(bench);
  let signIn: (origin: string) => Promise<string>;
  let seeded: Awaited<ReturnType<typeof seed>>;
  try {
    seeded = await seed(seeding, total);
    const owner = await seeding.db.selectFrom('accounts').where('email_normalized', '=', OWNER).select('id').executeTakeFirstOrThrow();
    // The demo banner's one-time link: the same sign-in a developer makes, without an e-mail in between.
    signIn = async (origin) => {
      const database = await bench.open();
      try {
        return await bannerSignInUrl(database.db, randomBytes(32), { accountId: owner.id, publicBaseUrl: origin, ttlMs: 3_600_000 });
      } finally {
        await database.close();
      }
    };
  } finally {
    await seeding.close();
  }

  const server = await startAppServer(bench, poolSize, { webDir });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  onCleanup(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.goto(await signIn(server.origin));
  await page.getByRole('heading', { level: 1, name: 'Bench Audio' }).waitFor({ timeout: 60_000 });
  const quiet = checkQuiet();

  log(`first rows after a fresh load of /console/customers (${runs} runs)`);
  const load: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await page.goto(`${server.origin}/console/customers`);
    await rowsShown(page, total);
    load.push(performance.now() - started);
  }
  log(`first rows after a click in the navigation (${runs} runs)`);
  const click: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Workspace settings' }).waitFor();
    const started = performance.now();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers', exact: true }).click();
    await rowsShown(page, total);
    click.push(performance.now() - started);
  }

  const search = async (term: string, matches: number) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      await page.goto(`${server.origin}/console/customers`);
      await rowsShown(page, total);
      const box = page.getByLabel('Search', { exact: true });
      await box.fill(term.slice(0, -1));
      const started = performance.now();
      await box.press(term.at(-1)!);
      await rowsShown(page, matches);
      times.push(performance.now() - started);
    }
    return summary(times);
  };
  log(`search "${RARE_NAME.toLowerCase()}" (${seeded.rareMatches} matches)`);
  const rare = await search(RARE_NAME.toLowerCase(), seeded.rareMatches);
  log(`search "${COMMON_TERM}" (${seeded.commonMatches.toLocaleString('en-US')} matches)`);
  const common = await search(COMMON_TERM, seeded.commonMatches);
  await browser.close();
  await server.stop();

  const firstLoad = summary(load);
  const firstClick = summary(click);
  const goal = (limit: number, t: Timings) => ({ text: `≤ ${limit.toLocaleString('en-US')} ms (median)`, pass: t.median <= limit });
  const figures: Figure[] = [
    { name: 'first rows, fresh page load (median)', value: firstLoad.median, unit: 'ms', goal: goal(FIRST_ROWS_GOAL_MS, firstLoad) },
    { name: 'first rows, fresh page load (worst)', value: firstLoad.worst, unit: 'ms' },
    { name: 'first rows, navigation click (median)', value: firstClick.median, unit: 'ms', goal: goal(FIRST_ROWS_GOAL_MS, firstClick) },
    { name: 'first rows, navigation click (worst)', value: firstClick.worst, unit: 'ms' },
    { name: `search "${RARE_NAME.toLowerCase()}" (median)`, value: rare.median, unit: 'ms', goal: goal(SEARCH_GOAL_MS, rare) },
    { name: `search "${RARE_NAME.toLowerCase()}" (worst)`, value: rare.worst, unit: 'ms' },
    { name: `search "${COMMON_TERM}" (median)`, value: common.median, unit: 'ms', goal: goal(SEARCH_GOAL_MS, common) },
    { name: `search "${COMMON_TERM}" (worst)`, value: common.worst, unit: 'ms' },
  ];
  const report: Report = {
    target: 'console',
    startedAt,
    revision: revision(),
    machine: { ...machineInfo(), quiet },
    settings: { customers: total, runs, poolSize, database: bench.kind, browser: 'Debian Chromium, headless, 1280×800' },
    figures,
    details: { databaseVersion: seeded.databaseVersion, firstLoad, firstClick, rare, common },
  };
  printReport(report);
  log(`results: ${writeReport(report)}`);
}
