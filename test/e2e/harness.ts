import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, expect, inject } from 'vitest';
import { loadFixtures } from '../../src/operator/fixtures.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { childEnv, ROOT, type Server, spawnTracked, startServer, stopChildrenAndRemoveDirs, tempDataDir } from '../helpers/process.js';

export const JWT_SECRET = 'e2e-secret-e2e-secret-e2e-secret-0123456789';
export const WEBHOOK_SECRET = 'whsec_e2e_0123456789abcdef0123456789abcdef';
export const SCREENSHOTS = process.env.SCREENSHOTS === '1';

// The file's server process and data directory go after its tests (each e2e file has modules of its own).
afterAll(stopChildrenAndRemoveDirs);

/** The flags every run uses: headless, no sandbox (containers), nothing phoning home, a fresh profile. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface Stack {
  base: string;
  databaseUrl: string;
  dataDir: string;
  server: Server;
  /** What the server process has printed so far (its request log included). */
  serverOutput: () => string;
  context: BrowserContext;
  env: NodeJS.ProcessEnv;
}

/**
 * A real server process (as `npm start` runs it, on this run's PostgreSQL database, e-mail written
 * to DATA_DIR/mail/outbox.jsonl) and Debian's Chromium driven by playwright-core. Both stop after
 * the file's tests. `extra` adds or overrides the server's settings for one file.
 */
export async function startStack(extra: Record<string, string> = {}): Promise<Stack> {
  const databaseUrl = inject('e2eDatabaseUrl');
  const dataDir = await tempDataDir('patchbay-e2e-');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const settings = {
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    JWT_SECRET,
    MAIL_TRANSPORT: 'file',
    CHECKOUT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    JOBS_POLL_INTERVAL_MS: '200',
    DEMO: '0',
    // Request lines are logged at info: the test reads them to prove no token reaches a log.
    LOG_LEVEL: 'info',
    // This run's own build of the front end (see global-setup.ts).
    WEB_DIR: inject('e2eWebDir'),
    // A file's own settings (STORAGE_DRIVER=local for uploads, say) on top.
    ...extra,
  };
  const server = await startServer(dataDir, settings);
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'patchbay-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  afterAll(async () => {
    await context.close();
    await fs.rm(profile, { recursive: true, force: true });
  });
  return { base, databaseUrl, dataDir, server, serverOutput: () => server.output().stdout + server.output().stderr, context, env: childEnv(dataDir, settings) };
}

/** Loads a fixture document into the stack's database (the CLI's `fixtures load`), returning ids and tokens. */
export async function seed(stack: Stack, doc: object, options: { allowDuplicateWorkspaces?: boolean } = {}) {
  const database = await openDatabase({ databaseUrl: stack.databaseUrl, dataDir: null, poolSize: 2 });
  try {
    return await loadFixtures(database.db, { secret: JWT_SECRET, issuer: 'patchbay', audience: 'patchbay-api', jwksUrl: undefined }, doc, options);
  } finally {
    await database.close();
  }
}

/** Runs the `patchbay` CLI against the stack's database and returns its parsed JSON output. */
export async function cli(stack: Stack, args: string[]): Promise<unknown> {
  const run = spawnTracked(['--import', 'tsx', path.join(ROOT, 'src/cli.ts'), ...args], stack.env);
  const outcome = await run.outcome;
  if (outcome.code !== 0) throw new Error(`patchbay ${args.join(' ')} exited ${outcome.code}\n${outcome.stderr}`);
  return JSON.parse(outcome.stdout);
}

interface OutboxEntry {
  to: string;
  subject: string;
  text: string;
}

/** Waits for an e-mail to `to` whose text has a link matching `pattern`, and answers the link. */
export async function linkFromOutbox(stack: Stack, to: string, pattern: RegExp, skip = 0): Promise<string> {
  const file = path.join(stack.dataDir, 'mail', 'outbox.jsonl');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    // Only whole lines: the server may be appending an e-mail while this reads.
    const links = text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as OutboxEntry)
      .filter((mail) => mail.to === to)
      .flatMap((mail) => mail.text.match(pattern) ?? []);
    if (links.length > skip) return links[skip]!;
    if (Date.now() > deadline) throw new Error(`no e-mail to ${to} with ${pattern} in ${file}:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * A page that records what must never happen: a Content-Security-Policy violation, an uncaught
 * error, a request carrying a Referer.
 */
export async function openPage(stack: Stack) {
  const page = await stack.context.newPage();
  const problems: string[] = [];
  const requests: Array<{ url: string; referer: string | undefined }> = [];
  const answers: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => requests.push({ url: request.url(), referer: request.headers().referer }));
  // What the API answered, for a failing step's message (the server's log has the same lines).
  page.on('response', (response) => {
    if (response.url().includes('/api/')) answers.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
  });
  return { page, problems, requests, answers };
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // A dialog fading in or out is half transparent: its contrast, measured mid-transition, is not
  // the contrast anyone reads. Wait for the finite animations and transitions running now to end
  // (a spinner's endless animation is not waited for).
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity)
        .map((animation) => animation.finished.catch(() => undefined)),
    ),
  );
  // Toasts are left out: they come and go on their own timer (4 s), so one may start fading out while axe runs,
  // and its text, measured half transparent, fails contrast although it reads black on white once shown. The
  // page's own content is measured as it stands.
  const results = await new AxeBuilder({ page }).exclude('.mantine-Notifications-root').analyze();
  const blocking = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    blocking.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    `accessibility of ${label}`,
  ).toEqual([]);
}

/** docs/screenshots/<name>.png for the README, when the run was asked for them (`npm run screenshots`). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  await fs.mkdir(path.join(ROOT, 'docs', 'screenshots'), { recursive: true });
  // The page as a reader first sees it: from the top, no pointer hovering, no passing notification. (Hidden through
  // the DOM: an injected stylesheet would be refused by the page's Content-Security-Policy, rightly.)
  const passing = '.mantine-Notifications-root, .mantine-Tooltip-tooltip';
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.mouse.move(0, 0);
  await page.evaluate((selector) => document.querySelectorAll<HTMLElement>(selector).forEach((e) => (e.style.visibility = 'hidden')), passing);
  await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', `${name}.png`), fullPage: true, animations: 'disabled', caret: 'hide' });
  await page.evaluate((selector) => document.querySelectorAll<HTMLElement>(selector).forEach((e) => (e.style.visibility = '')), passing);
}
